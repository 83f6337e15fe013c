"""List / show / cut fenced code blocks of GitHub issue bodies archived as JSON.

The archive is a JSON object {"<project>#<number>": {"body": ..., "html_url": ...}} built from
yunwei37/vllm-exp's bug-study/analysis_llm/sample_results/*/issues.json (GitHub REST API bodies).

  mlcorpus_issue_blocks.py ARCHIVE KEY                 list the fenced blocks (index, lines, first line)
  mlcorpus_issue_blocks.py ARCHIVE KEY IDX [A B]       print block IDX with line numbers (optionally lines A..B)
  mlcorpus_issue_blocks.py ARCHIVE KEY IDX A B --out F write lines A..B of block IDX verbatim to F

Bodies stored with CRLF are converted to LF first (reported on stderr); nothing else is changed.
"""
import json
import re
import sys

FENCE = re.compile(r'^([ \t]*)(```+|~~~+)[^\n]*\n(.*?)^[ \t]*\2[ \t]*$', re.M | re.S)


def blocks(body):
    out = []
    for m in FENCE.finditer(body):
        out.append(m.group(3))
    return out


def main():
    arch = json.load(open(sys.argv[1]))
    key = sys.argv[2]
    it = arch[key]
    body = it['body'] or ''
    if '\r\n' in body:
        print('NOTE: body had CRLF, converted to LF', file=sys.stderr)
        body = body.replace('\r\n', '\n')
    bl = blocks(body)
    if len(sys.argv) == 3:
        print(it.get('html_url'), it.get('title'))
        for i, b in enumerate(bl):
            first = b.split('\n', 1)[0]
            print(i, b.count('\n'), repr(first[:100]))
        return
    b = bl[int(sys.argv[3])]
    lines = b.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    a, z = 1, len(lines)
    if len(sys.argv) >= 6:
        a, z = int(sys.argv[4]), int(sys.argv[5])
    sel = lines[a - 1:z]
    if '--out' in sys.argv:
        text = '\n'.join(sel) + '\n'
        assert text in body + '\n', 'excerpt not verbatim in body'
        open(sys.argv[sys.argv.index('--out') + 1], 'w', newline='').write(text)
        print(f'wrote {len(sel)} lines from {it.get("html_url")}')
    else:
        for n, l in enumerate(sel, a):
            print(f'{n:4} {l!r}' if ('\r' in l or '\t' in l) else f'{n:4} {l}')


if __name__ == '__main__':
    main()
