"""Printers met in corpus/wild/dev35 (orchestration and data pipelines around training: Ray Data's task names in
Ray's worker prefix, Airflow's KubernetesPodOperator relaying a container's log). Inputs follow the printers' own
code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

# -- Ray's worker prefix with a Ray Data task name: "(ReadRange->MapBatches(<lambda>) pid=N) " ----------------


def _ray_data(prefix: str) -> list[str]:
    return [f"{prefix}Traceback (most recent call last):",
            f'{prefix}  File "python/ray/_raylet.pyx", line 1174, in ray._raylet.task_execution_handler',
            f"{prefix}    execute_task_with_cancellation_handler(",
            f'{prefix}  File "/tmp/job/transform.py", line 12, in __call__',
            f'{prefix}    return batch["x"] / batch["n"]',
            f"{prefix}ZeroDivisionError: division by zero"]


def test_tracebacks_of_two_ray_data_workers_interleaved_are_one_event_each():
    # rule: STREAM_PREFIXES "ray" (print_worker_logs writes f"({task_name} pid=..)"; Ray Data names its tasks
    # after their operators, joined by "->", each with its function in parentheses): the pid is the writer
    for name in ("ReadRange->MapBatches(<lambda>)", "MapBatches(f)", "ReadParquet->SplitBlocks(4)"):
        one = _ray_data(f"({name} pid=197496) ")
        two = _ray_data(f"({name} pid=197497, ip=10.0.0.3) ")
        lines = [x for pair in zip(one, two, strict=True) for x in pair]
        assert groups(lines) == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 11]], name


def test_frames_cut_above_under_a_ray_data_prefix_stay_one_event_and_another_writer_stands_apart():
    # the same rule: with the prefix read, the frames of a traceback cut above are one writer's continuation,
    # and the driver's own record after them is an event of its own
    lines = _ray_data("(ReadRange->MapBatches(<lambda>) pid=197496) ")[1:5]
    lines.append("2023-03-14 10:02:11,731\tINFO streaming_executor.py:91 -- Executing DAG InputDataBuffer")
    assert groups(lines) == [[0, 1, 2, 3], [4]]


# -- Airflow's KubernetesPodOperator: each line of the container's log an INFO record of pod_manager.py --------

_POD = "[2024-11-27, 05:08:31 CET] {pod_manager.py:472} INFO - [spark-kubernetes-driver] "


def test_a_java_stack_relayed_by_airflows_pod_manager_is_one_event():
    # rule: STREAM_PREFIXES "airflow_pod" (pod_manager.py fetch_container_logs logs self.log.info("[%s] %s",
    # container_name, message) for every line; the time is volatile, the container is the writer)
    texts = [_POD + "org.apache.spark.SparkException: External scheduler cannot be instantiated",
             _POD + "\tat org.apache.spark.SparkContext$.createTaskScheduler(SparkContext.scala:3204)",
             _POD + "\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:577)",
             _POD + "\tat org.apache.spark.api.java.JavaSparkContext.<init>(JavaSparkContext.scala:58)",
             "[2024-11-27, 05:08:32 CET] {pod_manager.py:490} INFO - Pod spark-pi-driver has phase Failed"]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


def test_a_python_traceback_relayed_by_airflows_pod_manager_is_one_event():
    # the same rule, another container and printer: the task's own traceback, then its next line
    pod = "[2023-05-02, 11:40:07 UTC] {pod_manager.py:342} INFO - [base] "
    texts = [pod + "Traceback (most recent call last):",
             pod + '  File "/app/train.py", line 41, in <module>',
             pod + "    main()",
             pod + "RuntimeError: CUDA out of memory",
             "[2023-05-02, 11:40:07 UTC] {pod_manager.py:342} INFO - [sidecar] flushed 3 files"]
    assert groups(texts) == [[0, 1, 2, 3], [4]]
