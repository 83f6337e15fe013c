"""Grammars of Python output as wrappers and copies change it: a traceback whose indentation a copy
stripped, IPython's traceback as VS Code's notebook links it, transformers' weights report, vLLM's
records interleaved line by line between worker processes. Inputs are built with the printers' own
code or format strings; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

import traceback

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- a traceback whose indentation was stripped --------------------------------------------------

def _load(cfg: dict) -> int:
    return cfg["shards"]["count"] + 1  # a subscript: Python 3.11 marks it with '^' and '~'


def _main() -> int:
    return _load({"shards": {}})


def _traceback_lines() -> list[str]:
    """A real traceback, as CPython's traceback module writes it (frames whose source lines read as exception
    lines, "_main()", and position markers)."""
    try:
        _main()
    except KeyError as e:
        text = "".join(traceback.format_exception(e))
    return text.rstrip("\n").split("\n")


def test_a_traceback_copied_without_its_indentation_is_one_event():
    # rules: TOKENS "py_file_bare"/"py_marker", STARTS py_file_bare -> MODES "py_bare_frame"/"py_bare_src"
    # (after a frame line its source line whatever it reads as, then markers, then the next frame or the
    # exception line); MODES "py_head" py_file_bare (the header kept, the frames dedented)
    lines = _traceback_lines()
    bare = [ln.lstrip() for ln in lines]
    assert any(ln.startswith("File ") for ln in bare) and bare[-1] == "KeyError: 'count'"
    after = "2024-05-01 12:00:00,000 INFO step 3"
    assert spans([*bare, after]) == [(0, len(bare) - 1), (len(bare), len(bare))]
    # an excerpt that starts at a frame line (its header cut)
    assert spans([*bare[1:], after]) == [(0, len(bare) - 2), (len(bare) - 1, len(bare) - 1)]
    # an excerpt whose first line alone lost its indent: the indented frames go on in the usual grammar
    first = next(i for i, ln in enumerate(lines) if ln.startswith("  File "))
    mixed = [lines[first].lstrip(), *lines[first + 1:], after]
    assert spans(mixed) == [(0, len(mixed) - 2), (len(mixed) - 1, len(mixed) - 1)]


def test_a_bare_frame_line_takes_no_record_and_no_traceback_as_its_source_line():
    # rule: "py_bare_frame" takes its source line with "cont" (a record of its own ends it) and ends at a
    # new traceback's header
    frame = 'File "/srv/app/train.py", line 12, in main'
    assert spans([frame, "2024-05-01 12:00:00,000 INFO step 3"]) == [(0, 0), (1, 1)]
    assert spans([frame, "Traceback (most recent call last):", '  File "/x.py", line 1, in <module>',
                  "    f()", "ValueError: x"]) == [(0, 0), (1, 4)]
    # (a line that merely mentions a file is no frame line)
    assert spans(['File "notes.txt" was saved', "done"]) == [(0, 0), (1, 1)]


def test_a_message_that_quotes_a_dedented_traceback_keeps_it():
    # rule: MODES "py_msg"/"py_msg_more" py_file_bare (Ray's RayTaskError message carries the remote
    # traceback's frames; a copy that stripped the indentation stripped theirs too)
    texts = ['File "/venv/lib/python3.11/site-packages/ray/_private/worker.py", line 1023, in get_objects',
             "raise value.as_instanceof_cause()",
             "ray.exceptions.RayTaskError(RuntimeError): ray::TaskRunner.run() (pid=4219, ip=10.0.0.2)",
             'File "/tmp/ray/session/verl/trainer/main_ppo.py", line 356, in run',
             "trainer.init_workers()",
             "RuntimeError: no GPU",
             "2024-05-01 12:00:00,000 INFO shutting down"]
    assert spans(texts) == [(0, 5), (6, 6)]


# -- IPython's traceback as VS Code's notebook links it --------------------------------------------

def _ultratb(link: bool) -> list[str]:
    """IPython 8's VerboseTB for an error in a cell (a '-' rule, the type and "Traceback (most recent call
    last)", "Cell In[N], line L" with its numbered source, a library frame "File <path>:L, in f(args)"), as
    VS Code's Jupyter extension shows it (tracebackFormatter.ts links the cell frame's line and the current
    line's number) and a copy of the page writes the links."""
    def num(n: int) -> str:
        return f"[{n}](vscode-notebook-cell:?execution_count=23&line={n})" if link else str(n)
    cell_line = f"[line {1}](vscode-notebook-cell:?execution_count=23&line=1)" if link else "line 1"
    return ["-" * 75,
            f"{'NotImplementedError':<42}Traceback (most recent call last)",
            f"Cell In[23], {cell_line}",
            f"----> {num(1)} trainer_stats = trainer.train()",
            "",
            "File ~/proj/unsloth_compiled_cache/UnslothSFTTrainer.py:68, in wrapper(self, *args, **kwargs)",
            f"{66:>7} if hasattr(self, 'model'):",
            f"{67:>7}     self.model.for_training()",
            f"---> {num(68)} output = f(self, *args, **kwargs)",
            f"{69:>7} return output",
            "",
            "NotImplementedError: Operator wasn't built",
            "2024-05-01 12:00:00,000 INFO next"]


def test_ipython_traceback_with_vscode_links_is_one_event():
    # rules: TOKENS "ipy_frame" (Cell In[N], [line L](uri)) and "ipy_num" (---> [N](uri))
    assert spans(_ultratb(link=False)) == [(0, 11), (12, 12)]
    assert spans(_ultratb(link=True)) == [(0, 11), (12, 12)]


# -- transformers' weights report ------------------------------------------------------------------

def _weights_reports(model: str = "BertForSequenceClassification", path: str = "bert-base-uncased") -> list[list[str]]:
    """The messages modeling_utils._load_pretrained_model logs, from its f-strings."""
    unexpected = ["cls.predictions.bias", "cls.seq_relationship.weight"]
    missing = ["classifier.weight", "classifier.bias"]
    not_used = (f"Some weights of the model checkpoint at {path} were not used when initializing {model}: {unexpected}"
                f"\n- This IS expected if you are initializing {model} from the checkpoint of a model trained on "
                "another task or with another architecture (e.g. initializing a BertForSequenceClassification model "
                "from a BertForPreTraining model).\n- This IS NOT expected if you are initializing "
                f"{model} from the checkpoint of a model that you expect to be exactly identical (initializing a "
                "BertForSequenceClassification model from a BertForSequenceClassification model).")
    newly = (f"Some weights of {model} were not initialized from the model checkpoint at {path} and are newly "
             f"initialized: {missing}\nYou should probably TRAIN this model on a down-stream task to be able to use "
             "it for predictions and inference.")
    mismatch = "\n".join(f"- {key}: found shape torch.Size([2, 768]) in the checkpoint and torch.Size([5, 768]) "
                         "in the model instantiated" for key in missing)
    shapes = (f"Some weights of {model} were not initialized from the model checkpoint at {path} and are newly "
              f"initialized because the shapes did not match:\n{mismatch}\nYou should probably TRAIN this model on a "
              "down-stream task to be able to use it for predictions and inference.")
    all_used = (f"All the weights of {model} were initialized from the model checkpoint at {path}.\nIf your task is "
                "similar to the task the model of the checkpoint was trained on, you can already use "
                f"{model} for predictions without further training.")
    return [m.split("\n") for m in (not_used, newly, shapes, all_used)]


def test_transformers_weights_report_is_one_event_each():
    # rules: TOKENS "hf_weights"/"hf_weights_more"/"hf_weights_end", STARTS hf_weights -> MODES "hf_weights"
    record = "[2025-02-07 01:12:26,727] [INFO] [partition_parameters.py:348:__exit__] finished initializing model"
    for report in _weights_reports():
        texts = [record, *report, record]
        n = len(report)
        assert spans(texts) == [(0, 0), (1, n), (n + 1, n + 1)], report[0]
        # (with transformers' own logging head, "[WARNING|modeling_utils.py:4000] 2024-01-01 00:00:00,000 >> ")
        headed = ["[WARNING|modeling_utils.py:4000] 2024-01-01 00:00:00,000 >> " + report[0], *report[1:], record]
        assert spans(headed) == [(0, n - 1), (n, n)], report[0]


def test_a_weights_report_takes_only_its_own_lines():
    # rule: MODES "hf_weights" continues only with the report's fixed lines
    first = _weights_reports()[1][0]
    assert spans([first, "You should probably restart the job.", "done"]) == [(0, 0), (1, 1), (2, 2)]


# -- vLLM's records interleaved between worker processes --------------------------------------------

def _vllm_record(pid: int, frames: list[tuple[str, str]]) -> list[str]:
    """logger.exception's record through vLLM's NewLineFormatter (its head repeated on every line),
    behind the multiproc executor's "(VllmWorkerProcess pid=N) " prefix."""
    head = f"(VllmWorkerProcess pid={pid}) ERROR 08-05 11:23:09 multiproc_worker_utils.py:226] "
    body = ["Exception in worker VllmWorkerProcess while processing method start_worker_execution_loop: , "
            "Traceback (most recent call last):"]
    for path, src in frames:
        body += [f'  File "{path}", line 65, in start_worker_execution_loop', f"    {src}"]
    body.append("RuntimeError: CUDA error: an illegal memory access was encountered")
    return [head + b for b in body]


def test_vllm_records_interleaved_line_by_line_stay_one_event_per_worker():
    # rule: merger._feed keeps a single-line record open across another writer's lines when its formatter
    # repeats its head on every line (rhead): the repeated head says which lines are its own
    frames = [("/vllm/worker/worker_base.py", "output = self.execute_model(execute_model_req=None)"),
              ("/torch/utils/_contextlib.py", "return func(*args, **kwargs)")]
    records = [_vllm_record(pid, frames)[2:] for pid in (1464965, 1464966, 1464967)]  # cut at a source line
    records[0] = records[0][1:]  # one worker's excerpt starts at its frame's source line
    texts: list[str] = []
    owner: list[int] = []
    for i in range(max(len(r) for r in records)):
        for w, r in enumerate(records):
            if i < len(r):
                texts.append(r[i])
                owner.append(w)
    expected = sorted([n for n, o in enumerate(owner) if o == w] for w in range(3))
    assert groups(texts) == expected
    # (a worker's next record, a new second, is still its own event)
    later = "(VllmWorkerProcess pid=1464966) INFO 08-05 11:23:10 worker.py:1] next record"
    assert groups([*texts, later])[-1] == [len(texts)]


# -- SkyPilot's per-line prefixes ------------------------------------------------------------------

def test_skypilot_task_prefixes_key_each_node_and_end_at_a_record():
    # rule: STREAM_PREFIXES "ray" with a name ending in ',' (SkyPilot's streaming_prefix f"({task_name}, pid={pid}) ",
    # and the Ray task names "task," / "worker1, rank=1," its backend gives, which Ray's log monitor writes
    # before "pid=N, ip=A")
    def traceback_under(prefix: str) -> list[str]:
        return [prefix + "Traceback (most recent call last):",
                prefix + '  File "/sky_workdir/train.py", line 3, in <module>',
                prefix + "    main()",
                prefix + "RuntimeError: NCCL error"]
    for prefix in ("(task, pid=4100) ", "(sky-cmd, pid=77) ", "(worker1, rank=1, pid=4100, ip=10.0.0.2) "):
        texts = [*traceback_under(prefix), prefix + "2024-05-01 12:00:00,000 INFO step 3"]
        assert spans(texts) == [(0, 3), (4, 4)], prefix
    a = traceback_under("(head, rank=0, pid=4100, ip=10.0.0.1) ")
    b = traceback_under("(worker1, rank=1, pid=4200, ip=10.0.0.2) ")
    texts = [line for pair in zip(a, b, strict=True) for line in pair]
    assert groups(texts) == [[0, 2, 4, 6], [1, 3, 5, 7]]


def _recursion_lines() -> list[str]:
    def descend(depth: int) -> int:
        if depth == 0:
            raise RecursionError("maximum recursion depth exceeded")
        return descend(depth - 1)

    try:
        descend(10)
    except RecursionError as exc:
        return "".join(traceback.format_exception(exc)).splitlines()
    raise AssertionError("descend did not raise")


def test_a_dedented_recursion_traceback_keeps_its_previous_line_repeated_line():
    # rule: TOKENS "py_repeated" + MODES "py_bare_src"/"py_bare_frame" (traceback.py collapses a frame repeated
    # more than three times into "  [Previous line repeated N more times]"; a copy that stripped the indent
    # leaves it between the frames, which go on after it)
    lines = _recursion_lines()
    assert any(ln.strip().startswith("[Previous line repeated ") for ln in lines)
    bare = [ln.lstrip() for ln in lines]
    after = "2024-05-01 12:00:00,000 INFO step 3"
    assert spans([*bare, after]) == [(0, len(bare) - 1), (len(bare), len(bare))]
