"""Tracebacks met in corpus/wild/dev21 (training, serving and CI logs: logging formatters, torch elastic's
shutdown records, torch._logging's trace id, Ray's messages, Ray Tune's report). Inputs follow the printers' own
code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

_TB = ["Traceback (most recent call last):",
       '  File "/opt/job/bin/send.py", line 827, in <module>',
       "    process(f)",
       "KeyError: 'StdErr'"]


def test_a_record_whose_level_is_glued_to_the_times_colon_takes_its_traceback():
    # rule: _GENERIC (Python logging's "%(asctime)s:%(levelname)s: %(message)s" with datefmt "%Y/%m/%d %H:%M:%S",
    # slurm-mail's format: logging.error(e, exc_info=True) writes str(e) then the traceback)
    texts = ["2022/06/20 17:28:01:ERROR: Failed to process: /var/spool/job/67116962.mail",
             "2022/06/20 17:28:01:ERROR: 'StdErr'", *_TB,
             "2022/06/20 17:28:02:INFO: next spool file"]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5], [6]]


def test_torch_elastics_shutdown_warnings_do_not_take_the_launchers_traceback():
    # rule: NO_EXC_BODY_RE (torch/distributed/elastic/multiprocessing/api.py logs "Sending process %s closing
    # signal %s" and agent/server/api.py "Received %s death signal, shutting down workers" with logger.warning,
    # no exc_info; the traceback after them is the launcher's own, uncaught)
    for warning in ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4797 closing signal SIGINT",
                    "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers",
                    "[2024-05-08 08:47:31,261] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending "
                    "process 5938 closing signal SIGTERM"):
        assert groups([warning, *_TB]) == [[0], [1, 2, 3, 4]], warning


def test_torch_loggings_head_with_a_trace_id_is_repeated_on_every_line_of_a_record():
    # rule: HEADS "torch_logging" (torch/_logging/_internal.py TorchLogsFormatter writes
    # "[asctime][ trace_id] name: [levelname] " before every line; logging.Formatter.format appends stack_info to
    # the message, so the stack is the same record)
    head = "[2024-02-05 15:21:42,426] [0/0] torch._dynamo.symbolic_convert: [INFO] "
    texts = [head + "Step 1: torchdynamo start tracing fn /tmp/debug4.py:3",
             head + "Stack (most recent call last):",
             head + '  File "/tmp/debug4.py", line 11, in <module>',
             head + "    res = opt_fn(x)",
             head + '  File "/torch/_dynamo/eval_frame.py", line 453, in _fn',
             head + "    return fn(*args, **kwargs)",
             "[2024-02-05 15:21:42,431] [0/0] torch._dynamo.symbolic_convert: [INFO] Step 1: done"]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [6]]


def test_rays_remote_function_paragraph_keeps_the_traceback_it_quotes():
    # rule: TOKENS "msg_para" "Remote function ... failed with:" and MODES "py_msg_more" after_blank "py_tb"
    # (ray 0.5 worker.py: RayGetError's message "... which failed with:\n\n" + str(RayTaskError), itself
    # "Remote function f failed with:\n\n" + the remote traceback)
    texts = ["Traceback (most recent call last):",
             '  File "/ray/worker.py", line 2249, in get',
             "    raise RayGetError(object_ids[i], value)",
             "ray.worker.RayGetError: Could not get objectid ObjectID(0100). It was created by remote function "
             "inner_update which failed with:",
             "",
             "Remote function inner_update failed with:",
             "",
             "Traceback (most recent call last):",
             '  File "/ray/worker.py", line 801, in _process_task',
             "    *arguments)",
             "ValueError: bad batch",
             "",
             "== Status =="]
    assert groups(texts)[0] == list(range(11))


def test_ray_tunes_status_report_under_a_traceback_is_its_own_print():
    # rule: RECORDS "tune_status" (tune/progress_reporter.py: the report CLIReporter prints begins "== Status ==";
    # a trial's traceback printed just before it has no blank line after its message)
    texts = ["Traceback (most recent call last):",
             '  File "/pl/trainer/trainer.py", line 346, in __init__',
             "    raise MisconfigurationException(",
             "pytorch_lightning.utilities.exceptions.MisconfigurationException: You requested GPUs: [0]",
             " But your machine only has: []",
             "== Status =="]
    assert groups(texts) == [[0, 1, 2, 3, 4], [5]]


def test_pytests_usage_error_is_one_write_with_its_config_hints():
    # rule: TOKENS/STARTS/MODES "pytest_usage" (pytest's main prints a UsageError as "ERROR: " + its message: the
    # parser's usage, "prog: error: message", then the indented "  inifile: ..." / "  rootdir: ..." hints)
    texts = ["ERROR: usage: test_ops.py [options] [file_or_dir] [file_or_dir] [...]",
             "test_ops.py: error: unrecognized arguments: -n=4 --reruns=2",
             "  inifile: /opt/pytorch/pytorch/pytest.ini",
             "  rootdir: /opt/pytorch/pytorch",
             "",
             "Traceback (most recent call last):",
             '  File "test_ops.py", line 1835, in <module>',
             "    run_tests()",
             "FileNotFoundError: test-reports/python-pytest/test_ops/test_ops.xml"]
    assert groups(texts) == [[0, 1, 2, 3], [5, 6, 7, 8]]
