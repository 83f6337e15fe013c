"""Helpers to cut corpus/wild excerpts and to write/check their labels by hand.

``python -m devtools.corpus_label CMD ...``, CMD one of:

  split URL                      test/dev split of a source URL
  text URL NAME < excerpt        write an excerpt taken from elsewhere (search excerpt, read_file)
  jview < literal                number the lines of a JSON string literal (a search excerpt)
  jcut URL NAME A B < literal    write lines A..B of that excerpt as NAME
  rm NAME                        remove a file and its labels
  show NAME [A B]                print the file with line numbers and its current labels
  pre NAME                       propose labels (tracebacks, c10 frames, ...): a spec to check by eye
  set NAME SPEC [--notes N]      write labels: SPEC = "12-40:python_traceback 3,5,7-9:ignore ..."

NAME is the file's stem; its split is found from the existing file, or from the URL when cutting.
``--split S`` (anywhere on the line) writes new files into corpus/wild/S/ instead (e.g. ``holdout``).
"""
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / 'corpus' / 'wild'
SPLITS = ('dev', 'dev13', 'dev14', 'dev15', 'dev16', 'dev17', 'dev18', 'dev19', 'dev20', 'dev21', 'dev22', 'dev23',
          'dev24', 'dev25', 'dev26', 'dev27', 'dev28', 'dev29', 'dev30', 'dev31', 'dev32', 'dev33', 'dev34', 'dev35',
          'dev36', 'test', 'holdout', 'holdout2', 'holdout3', 'holdout4', 'holdout5', 'holdout6', 'holdout7')
SPLIT_OVERRIDE = None


def split_of(url):
    return 'test' if hashlib.sha256(url.encode()).digest()[0] % 3 == 0 else 'dev'


def find(name):
    for s in ((SPLIT_OVERRIDE,) if SPLIT_OVERRIDE else ()) + SPLITS:
        p = ROOT / s / f'{name}.log'
        if p.exists():
            return p
    raise SystemExit(f'no file {name}')


def labpath(p):
    return p.parent / 'labels' / (p.stem + '.json')


def write_new(name, url, data: bytes, license_, notes=''):
    for s in SPLITS:
        if (ROOT / s / f'{name}.log').exists():
            raise SystemExit(f'{name} exists already in {s}')
    s = SPLIT_OVERRIDE or split_of(url)
    (ROOT / s / 'labels').mkdir(parents=True, exist_ok=True)
    p = ROOT / s / f'{name}.log'
    p.write_bytes(data)
    lab = {'source': url, 'notes': notes, 'license': license_, 'events': []}
    labpath(p).write_text(json.dumps(lab, indent=1, ensure_ascii=False) + '\n')
    nl = data.count(b'\n')
    print(f'{p} ({nl} lines, split {s})')


def lines_of(p):
    ls = p.read_bytes().split(b'\n')
    if ls and ls[-1] == b'':
        ls.pop()
    return ls


PREFIXES = [
    re.compile(rb'^\((?:[A-Za-z_][\w.:-]*\s)?(?:[A-Za-z_]+=\S+?,?\s)*pid=\d+(?:, ip=[^)]*)?\)\s?'),
    re.compile(rb'^\[(?:rank|default)\d+\]:\s?'),
    re.compile(rb'^\[\d+,\d+\]<std(?:out|err)>:\s?'),
    re.compile(rb'^(?:ERROR|INFO|WARNING|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w.]+:\d+\]\s?'),
    re.compile(rb'^[\w.-]+\s+\| '),
    re.compile(rb'^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?(?: [A-Z]+\d*)*\]\s?'),
]


def strip(line):
    key = b''
    while True:
        for rx in PREFIXES:
            m = rx.match(line)
            if m and m.end() > 0:
                pre = m.group(0)
                k = re.sub(rb'\d\d:\d\d:\d\d(?:\.\d+)?', b'T', pre) if rx is PREFIXES[3] else pre
                key += k.strip()
                line = line[m.end():]
                break
        else:
            return key, line


_CHAIN_LINES = (b'Traceback (most recent call last):',
                b'During handling of the above exception, another exception occurred:',
                b'The above exception was the direct cause of the following exception:')


def propose(p):  # noqa: PLR0912, PLR0915 - one pass over the file, marking each printer's block

    ls = lines_of(p)
    st = [strip(ln) for ln in ls]
    used: set[int] = set()
    evs: list[tuple[int | None, int | None, list[int] | None, str]] = []
    n = len(ls)
    i = 0
    while i < n:
        key, c = st[i]
        if c.rstrip() == b'Traceback (most recent call last):' and i not in used:
            j = i + 1
            last = i
            mine = [i]
            while j < n:
                k2, c2 = st[j]
                if k2 != key:
                    if not ls[j].strip():
                        j += 1
                        continue
                    j += 1
                    continue
                if not c2.strip():
                    j += 1
                    continue
                if c2.startswith((b' ', b'\t', b'|', b'+-', b'+ ', b'  |', b'  +')) or c2.rstrip() in _CHAIN_LINES:
                    mine.append(j)
                    last = j
                    j += 1
                    continue
                # exception line
                mine.append(j)
                last = j
                # chained? look ahead
                jj = j + 1
                while jj < n and (not st[jj][1].strip() or st[jj][0] != key):
                    jj += 1
                if jj < n and st[jj][1].rstrip() in (
                        b'During handling of the above exception, another exception occurred:',
                        b'The above exception was the direct cause of the following exception:'):
                    j += 1
                    continue
                break
            # header line with same key just before
            first = i
            h = i - 1
            while h >= 0 and not ls[h].strip():
                h -= 1
            if h >= 0 and st[h][0] == key and re.search(rb'\.py:\d+\]', key) and st[h][1].strip():
                first = h
                mine.insert(0, h)
            mine = [m for m in mine if m >= first]
            contiguous = all(st[m][0] == key or not ls[m].strip() for m in range(first, last + 1))
            if contiguous:
                evs.append((first + 1, last + 1, None, 'python_traceback'))
            else:
                evs.append((None, None, [m + 1 for m in mine], 'python_traceback'))
            used.update(range(first, last + 1))
            i = last + 1
            continue
        if c.startswith((b'Exception raised from ', b'Fatal Python error', b'terminate called')) or b'*** SIGSEGV' in c:
            evs.append((i + 1, i + 1, None, 'HINT:' + c[:30].decode('utf8', 'replace')))
        i += 1
    return evs


def fmt(evs):
    out = []
    for f, ln, lines, k in evs:
        if lines:
            out.append(','.join(map(str, lines)) + ':' + k)
        else:
            out.append(f'{f}-{ln}:{k}')
    return ' '.join(out)


def parse_spec(spec):
    evs = []
    for tok in spec.split():
        rng, kind = tok.rsplit(':', 1)
        if ',' in rng:
            nums: list[int] = []
            for part in rng.split(','):
                if '-' in part:
                    a, b = map(int, part.split('-'))
                    nums += range(a, b + 1)
                else:
                    nums.append(int(part))
            evs.append({'lines': nums, 'kind': kind})
        else:
            a, b = (map(int, rng.split('-')) if '-' in rng else (int(rng), int(rng)))
            evs.append({'first': a, 'last': b, 'kind': kind})
    return evs


def show(p, a=None, b=None, width=200):
    ls = lines_of(p)
    lab = json.loads(labpath(p).read_text()) if labpath(p).exists() else {'events': []}
    mark = {}
    for e, ev in enumerate(lab['events']):
        nums = ev['lines'] if 'lines' in ev else range(ev['first'], ev['last'] + 1)
        nums = list(nums)
        for x in nums:
            tag = f'{e}{ev["kind"][:2]}'
            if x == nums[0]:
                tag = '+' + tag
            elif x == nums[-1]:
                tag = '-' + tag
            mark[x] = tag
    for no, raw in enumerate(ls, 1):
        if a and (no < a or no > b):
            continue
        s = raw.decode('utf8', 'replace')
        extra = ''
        if '\r' in s:
            extra = f' [\\r x{s.count(chr(13))}]'
            s = s.replace('\r', '⏎')
        s = s.replace('\t', '→')
        if len(s) > width:
            s = s[:width] + f'…(+{len(s) - width})'
        print(f'{no:4} {mark.get(no, ""):7} {s}{extra}')
    print('source:', lab.get('source'))


def main():  # noqa: PLR0912 - one branch per subcommand
    global SPLIT_OVERRIDE  # noqa: PLW0603 - set once from the command line
    if '--split' in sys.argv:
        at = sys.argv.index('--split')
        SPLIT_OVERRIDE = sys.argv[at + 1]
        del sys.argv[at:at + 2]
    cmd = sys.argv[1]
    if cmd == 'split':
        print(split_of(sys.argv[2]))
    elif cmd == 'text':
        url, name = sys.argv[2:4]
        data = sys.stdin.buffer.read()
        if not data.endswith(b'\n'):
            data += b'\n'
        write_new(name, url, data, sys.argv[4] if len(sys.argv) > 4 else 'GitHub issue text, quoted for testing')
    elif cmd == 'jview':
        # stdin: a JSON string literal (an excerpt as a search answer quotes it); print its lines numbered
        text = json.loads(sys.stdin.read().strip())
        for no, ln in enumerate(text.split('\n'), 1):
            print(f'{no:4} {ln!r}' if ('\r' in ln or '\t' in ln) else f'{no:4} {ln}')
    elif cmd == 'jcut':
        # stdin: a JSON string literal; write its lines A..B (whole lines only) as NAME, source URL
        url, name, a, b = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        text = json.loads(sys.stdin.read().strip())
        ls = text.split('\n')
        sel = ls[a - 1:b]
        if len(sel) != b - a + 1:
            raise SystemExit(f'the excerpt has {len(ls)} lines; lines {a}-{b} are not all there')
        write_new(name, url, ('\n'.join(sel) + '\n').encode('utf8'), 'GitHub issue text, quoted for testing',
                  'Excerpt of the issue thread as returned by a search index (about 2,000 characters around a match); '
                  'whole lines only. ')
    elif cmd == 'rm':
        p = find(sys.argv[2])
        labpath(p).unlink()
        p.unlink()
    elif cmd == 'show':
        p = find(sys.argv[2])
        lo = int(sys.argv[3]) if len(sys.argv) > 4 else None
        hi = int(sys.argv[4]) if len(sys.argv) > 4 else None
        show(p, lo, hi)
    elif cmd == 'pre':
        print(fmt(propose(find(sys.argv[2]))))
    elif cmd == 'set':
        p = find(sys.argv[2])
        lab = json.loads(labpath(p).read_text())
        lab['events'] = parse_spec(sys.argv[3])
        if '--notes' in sys.argv:
            lab['notes'] = (lab.get('notes') or '') + sys.argv[sys.argv.index('--notes') + 1]
        labpath(p).write_text(json.dumps(lab, indent=1, ensure_ascii=False) + '\n')
        show(p)
    else:
        raise SystemExit(__doc__)


if __name__ == '__main__':
    main()
