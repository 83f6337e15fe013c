"""Printers met in corpus/wild/dev31 (logs of LLM training and RL post-training stacks as pasted into issues:
verl, OpenRLHF, TRL, SGLang, NeMo-RL, DeepSpeed, axolotl and the libraries under them). Each test names the rule
it guards and builds its lines from the code that prints them (cited at the rule); removing that rule makes it
fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

_CONFIG = ["{'checkpointing': {'checkpoint_dir': 'results/sft',",
           "                   'enabled': True,",
           "                   'save_period': 10},",
           " 'policy': {'model_name': 'Qwen/Qwen2.5-1.5B'}}"]


def test_a_dict_printed_right_under_the_line_that_announced_it_is_one_event():
    # rule: TOKENS "dump_open" in MODES "plain" ("after_colon"): NeMo-RL's print("Final config:") then
    # pprint.pprint(config)
    texts = ["Applied CLI overrides", "Final config:", *_CONFIG, "Using log directory: logs/exp_001"]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5], [6]]
    # (json.dumps(indent=2)'s "{" alone opens the dump too)
    assert groups(["Config:", "{", '  "lr": 0.1', "}"])[0][:2] == [0, 1]


def test_a_dict_under_a_line_that_announced_nothing_stays_apart():
    # the same rule: only a line ending with ':' announces what comes below it
    assert groups(["Final config is printed below", *_CONFIG]) == [[0], [1, 2, 3, 4]]
