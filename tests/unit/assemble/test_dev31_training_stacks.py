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


_LAZY = ("RuntimeError: Failed to import transformers.models.mistral.modeling_mistral because of the following "
         "error (look up to see its traceback):")


def test_a_lazy_module_import_error_pasted_alone_keeps_its_cause_line():
    # rule: EXC_CAUSE_NEXT_RE with act "exc_next" in MODES "plain" (transformers' _LazyModule._get_module raises
    # RuntimeError(f"Failed to import ... (look up to see its traceback):\n{e}"))
    cause = "/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros"
    texts = [_LAZY, cause, "", "Traceback (most recent call last):"]
    assert groups(texts) == [[0, 1], [3]]
    # (a record of its own below it is not the cause; an exception line that announces nothing keeps its line)
    assert groups([_LAZY, "2024-03-11 10:00:01,123 - INFO - retrying"]) == [[0], [1]]
    assert groups(["RuntimeError: CUDA out of memory:", cause]) == [[0], [1]]
