"""Audit corpus/wild: structural markers outside labels, label edges, sources, file endings.

  python -m devtools.corpus_audit
"""
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / 'corpus' / 'wild'
MARK = re.compile(rb'Traceback \(most recent call last\)|Exception raised from|Fatal Python error|^\s*warnings\.warn|'
                  rb'frame #0:|\*\*\* SIG[A-Z]+ received|Check failure stack trace|^#0 |Begin stack trace|'
                  rb'C\+\+ Traceback|terminate called after')
EXC = re.compile(rb'^[\w.]+(Error|Exception|Exit|Interrupt|Warning|Failed\w*|Hit)(\(\w+\))?:?( |$)|^[\w.]+Error$')


def main():
    for log in sorted(ROOT.glob('*/*.log')):
        lab = json.loads((log.parent / 'labels' / (log.stem + '.json')).read_text())
        data = log.read_bytes()
        ls = data.split(b'\n')
        if ls and ls[-1] == b'':
            ls.pop()
        covered = {}
        for i, ev in enumerate(lab['events']):
            nums = ev['lines'] if 'lines' in ev else list(range(ev['first'], ev['last'] + 1))
            for n in nums:
                covered[n] = i
            if not ls[nums[0] - 1].strip() or not ls[nums[-1] - 1].strip():
                print(f'{log.name}: event {ev} starts or ends on a blank line')
        for no, ln in enumerate(ls, 1):
            if MARK.search(ln) and no not in covered:
                print(f'{log.name}:{no}: marker outside labels: {ln[:100]!r}')
        if not data.endswith(b'\n'):
            print(f'{log.name}: no final newline')
        for k in ('source', 'notes', 'license'):
            if not lab.get(k):
                print(f'{log.name}: missing {k}')


if __name__ == '__main__':
    main()
