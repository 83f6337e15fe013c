"""Build the issue-body archive that mlcorpus_issue_blocks.py / mlcorpus_lab.py read.

The bodies come from the research repository yunwei37/vllm-exp (GitHub REST API issue JSON under
bug-study/analysis_llm/sample_results/<project>/**/issues.json, projects vllm, sglang, llama_cpp).

  mlcorpus_build_archive.py GIT_DIR OUT.json     GIT_DIR: a clone/snapshot of yunwei37/vllm-exp
"""
import json
import subprocess
import sys


def main():
    git, out = sys.argv[1], sys.argv[2]
    names = subprocess.check_output(['git', '-C', git, 'ls-tree', '-r', '--name-only', 'HEAD',
                                     'bug-study/analysis_llm/sample_results']).decode().split('\n')
    issues = {}
    for f in names:
        if not f.endswith('issues.json'):
            continue
        proj = f.split('/')[3]
        for it in json.loads(subprocess.check_output(['git', '-C', git, 'show', 'HEAD:' + f])):
            issues[f'{proj}#{it["number"]}'] = it
    json.dump(issues, open(out, 'w'))
    print(len(issues), 'issues')


if __name__ == '__main__':
    main()
