"""Printers met in corpus/wild/dev20 (inference serving and data pipelines: pm2, Airflow's task runner, Spark's
PythonException). Inputs follow the printers' own code; each test names the rule it guards, and removing that
rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

# -- pm2 logs: "<id>|<name>  | " before every line ------------------------------------------------------


def _pm2(prefix: str) -> list[str]:
    return [f'{prefix}INFO:     10.0.0.7:40490 - "POST /generate HTTP/1.1" 500 Internal Server Error',
            f"{prefix}ERROR:    Exception in ASGI application",
            f"{prefix}Traceback (most recent call last):",
            f'{prefix}  File "/usr/lib/python3/uvicorn/protocols/http/h11_impl.py", line 428, in run_asgi',
            f"{prefix}    result = await app(scope, receive, send)",
            f"{prefix}RuntimeError: CUDA out of memory",
            f'{prefix}INFO:     10.0.0.7:40492 - "GET /health HTTP/1.1" 200 OK']


def test_a_traceback_behind_pm2s_prefix_is_one_event():
    # rule: STREAM_PREFIXES "pm2" (lib/API/Log.js writes the app's id and padded name, then "| ", on every line)
    for prefix in ("0|MINER  | ", "12|vllm-api | "):
        assert groups(_pm2(prefix)) == [[0], [1, 2, 3, 4, 5], [6]], prefix


def test_a_paste_that_took_the_first_line_from_after_pm2s_prefix_keeps_it():
    # the same rule, read as a relay's stamp (key "none"): a header copied without the prefix is the frames' event
    # (with the prefix as a writer of its own, key "k", the header would stand apart)
    lines = _pm2("3|qwen  | ")[2:6]
    lines[0] = "Traceback (most recent call last):"
    assert groups(lines) == [[0, 1, 2, 3]]


# -- Airflow's task runner: each line of the task's output an INFO record ---------------------------------

_RUNNER = "[2022-01-20, 15:57:20 UTC] {base_task_runner.py:121} INFO - Job 129997: Subtask load_shards "


def test_a_task_subprocess_traceback_relayed_by_airflows_task_runner_is_one_event():
    # rule: STREAM_PREFIXES "airflow_subtask" (base_task_runner.py _read_task_logs logs "Job %s: Subtask %s %s"
    # for every line the task's process writes; the time is volatile, the job and task are the writer)
    texts = [_RUNNER + "Running <TaskInstance: shard_export.load_shards [running]> on host worker-3",
             _RUNNER + "Traceback (most recent call last):",
             _RUNNER + '  File "/opt/airflow/bin/airflow", line 8, in <module>',
             _RUNNER + "    sys.exit(main())",
             _RUNNER + "ValueError: shard 7 missing",
             "[2022-01-20, 15:57:21 UTC] {local_task_job.py:154} INFO - Task exited with return code 1"]
    assert groups(texts) == [[0], [1, 2, 3, 4], [5]]


# -- Spark's PythonException: the worker's traceback as a Java exception's message -----------------------


def test_java_frames_after_the_python_workers_traceback_stay_with_the_exception():
    # rule: MODES "py_msg" after_blank "j_at" (the exception message is the worker's traceback, which ends with
    # a newline; printStackTrace's frames follow the empty line it leaves)
    texts = ["17/10/20 16:01:55 ERROR Executor: Exception in task 2.0 in stage 1.0 (TID 3)",
             "org.apache.spark.api.python.PythonException: Traceback (most recent call last):",
             '  File "/usr/local/spark/python/lib/pyspark.zip/pyspark/worker.py", line 171, in main',
             "    process()",
             "KeyError: 'exe'",
             "",
             "\tat org.apache.spark.api.python.PythonRunner$$anon$1.read(PythonRDD.scala:193)",
             "\tat org.apache.spark.api.python.PythonRunner.compute(PythonRDD.scala:234)",
             "17/10/20 16:01:55 INFO TaskSetManager: Starting task 3.0 in stage 1.0 (TID 4)"]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5, 6, 7], [8]]


# -- Python logging "%(name)s - %(levelname)s - " without a time (Dask distributed's default) ---------------


def test_records_without_a_time_start_their_tracebacks_and_end_the_one_before():
    # rule: HEADS "name_level" (distributed.yaml's logging-format '%(name)s - %(levelname)s - %(message)s'):
    # each record is a line of its own, and tornado's second error record under it starts its own event
    tb = ["Traceback (most recent call last):",
          '  File "/opt/conda/lib/python3.10/site-packages/tornado/ioloop.py", line 905, in _run',
          "    return self.callback()",
          "AttributeError: 'NoneType' object has no attribute 'process'"]
    head = "tornado.application - ERROR - Exception in callback <bound method Nanny.memory_monitor>"
    texts = ["distributed.nanny - WARNING - Restarting worker", head, *tb, head, *tb,
             "distributed.nanny - WARNING - Restarting worker"]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11]]
