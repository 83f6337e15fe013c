"""Launchers met in corpus/wild/dev30 (multi-process output where every line carries its process's prefix and
the ranks' tracebacks interleave). The prefixes follow the launchers' own code (cited at each rule in
rules.STREAM_PREFIXES); each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from collections.abc import Callable

from devtools.testing.merger import groups
from streams.assemble.merger import split_prefix

_TB = ["Traceback (most recent call last):",
       '  File "/workspace/train.py", line 88, in <module>',
       "    main()",
       '  File "/workspace/train.py", line 61, in main',
       "    dist.init_process_group(backend='nccl')",
       "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled system error"]


def interleaved(prefix: Callable[[int, int], str]) -> tuple[list[str], list[list[int]]]:
    """Two ranks writing the same traceback line by line in turn, and the lines each rank wrote."""
    texts, mine = [], [[], []]
    for i, line in enumerate(_TB):
        for rank in (0, 1):
            mine[rank].append(len(texts))
            texts.append(prefix(rank, i) + line)
    return texts, mine


def assert_each_rank_whole(prefix: Callable[[int, int], str]) -> None:
    texts, mine = interleaved(prefix)
    assert sorted(groups(texts)) == sorted(mine)


_CTIME = ("Thu Aug 29 21:45:09 2019", "Thu Aug 29 21:45:10 2019")


def test_open_mpi_tag_output_with_timestamp_output_keeps_each_rank_whole():
    # rule: STREAM_PREFIXES "mpi" (orte iof_base_output.c: ctime() glued before "[jobid,vpid]<stream>:", the
    # time changing from one line to the next)
    assert_each_rank_whole(lambda r, i: f"{_CTIME[i % 2]}[1,{r}]<stderr>:")


def test_open_mpi_5_tags_through_pmix_keep_each_rank_whole():
    # rule: STREAM_PREFIXES "mpi" (openpmix pmix_iof.c: "[jobid,rank]<stream>: " with the nspace's jobid or the
    # whole nspace, "[host:pid]" for tag-detailed, the timestamp in brackets before the tag)
    assert_each_rank_whole(lambda r, i: f"[prterun-node01-41187@1,{r}]<stderr>: ")
    assert_each_rank_whole(lambda r, i: f"[1,{r}][node0{r}:4242]<stderr>: ")
    assert_each_rank_whole(lambda r, i: f"[{_CTIME[i % 2]}][1,{r}]<stderr>: ")


def test_pmix_output_rank_with_timestamp_keeps_each_rank_whole():
    # rule: STREAM_PREFIXES "horovod" (PMIx's "--output rank" writes horovodrun's "[rank]<stream>: " shape, its
    # timestamp in brackets)
    assert_each_rank_whole(lambda r, i: f"[{_CTIME[i % 2]}][{r}]<stderr>: ")


def test_open_mpi_timestamp_output_without_a_tag_is_a_volatile_stamp():
    # rule: STREAM_PREFIXES "mpi_time" (orte: "%s<%s>:" when only --timestamp-output is given): the stamp is no
    # writer, so one traceback whose lines carry different seconds is one event
    texts = [f"{_CTIME[i % 2]}<stderr>:{line}" for i, line in enumerate(_TB)]
    assert groups(texts) == [list(range(len(_TB)))]
    assert split_prefix(texts[0])[:2] == ("", _TB[0])


def test_torchrun_role_names_other_than_default_keep_each_rank_whole():
    # rule: STREAM_PREFIXES "rank" (LocalElasticAgent's log_line_prefix_template, by default
    # "[${role_name}${local_rank}]:"; the role is whatever --role names)
    assert_each_rank_whole(lambda r, i: f"[trainer{r}]:")
    assert_each_rank_whole(lambda r, i: f"[worker-{r}]:")


def test_ray_autoscaler_events_are_one_writer_whatever_their_time():
    # rule: STREAM_PREFIXES "ray_events" (worker.py print_worker_logs: "(autoscaler +{time_string()}) ")
    assert split_prefix("(autoscaler +1m5s) Adding 1 node(s) of type type-1.")[:2] == (
        "autoscaler", "Adding 1 node(s) of type type-1.")
    assert split_prefix("(scheduler +13s) Tip: use `ray status` to view detailed cluster status.")[0] == "scheduler"


def test_determined_trial_logs_keep_each_rank_whole():
    # rule: STREAM_PREFIXES "determined" (postgres_trial_logs.go TrialLogs: "[time] container [rank=N] || line")
    stamp = ("[2024-02-27T21:35:34.295662Z]", "[2024-02-27T21:35:34.295706Z]")
    assert_each_rank_whole(lambda r, i: f"{stamp[i % 2]} fa88a9df [rank={r}] || ")


def test_a_writers_prefix_led_by_a_blank_is_still_that_writers_record():
    # rule: rules.BLANK_LED_PREFIX_FIRST with merger.unlead (print(*chunks) leads every chunk but the first with its
    # separator: the c10 records stay records of [rank3], not lines indented under the first)
    texts = ["[2025-02-27T16:30:43.48675097Z] [rank3]:[E227 16:30:43.526290891 ProcessGroupNCCL.cpp:1785] [Rank 3] "
             "Exception (either an error or timeout) detected by watchdog at work: 32.",
             " [rank3]:[E227 16:30:43.526301625 ProcessGroupNCCL.cpp:1834] [Rank 3] Timeout at NCCL work: 32.",
             " [rank3]:[E227 16:30:43.526306740 ProcessGroupNCCL.cpp:630] [Rank 3] Some NCCL operations have failed."]
    assert groups(texts) == [[0], [1], [2]]
    assert split_prefix(texts[1])[0] == "[rank3]:"


def test_a_bracket_indented_under_a_record_stays_its_line():
    # the same rule takes one blank only, before a writer's prefix: deeper indentation is the block's own
    texts = ["ValueError: bad shapes:", "    [rank3]: (4, 8) vs (4, 9)"]
    assert groups(texts) == [[0, 1]]


_RLLIB = "2019-10-08 12:54:40,669\tINFO sample_batch_builder.py:161 -- "


def test_a_dict_a_record_announced_after_a_blank_line_is_its_body():
    # rule: TOKENS "dump_open" in MODES "body" after_blank (RLlib's record "...postprocess_trajectory():\n\n{}" with
    # a pformat'ed batch): behind Ray's (pid=N) too, whose prefix alone is that writer's empty line
    body = ["{ 'agent0': { 'data': { 'action_logp': np.ndarray((19,), dtype=float32, min=-0.695, max=-0.691),",
            "                        'actions': np.ndarray((19,), dtype=int64, min=0.0, max=1.0, mean=0.368),"]
    texts = [_RLLIB + "Trajectory fragment after postprocess_trajectory():", "", *body,
             "2019-10-08 12:54:41,002\tINFO rollout_worker.py:700 -- Completed sample batch"]
    assert groups(texts) == [[0, 1, 2, 3], [4]]
    texts = [f"(pid=7832) {t}" if t else "(pid=7832)" for t in texts[:4]]
    assert groups(texts) == [[0, 1, 2, 3]]


def test_a_dict_after_a_record_that_announced_nothing_stays_apart():
    # the same rule: only a record whose message ends with ':' announces a body
    assert groups([_RLLIB + "Built policy map.", "", "{'default_policy': 1}"]) == [[0], [2]]


def test_the_list_a_line_announced_is_its_own():
    # rule: TOKENS "bullet" with MODES "plain" and "bullets" (Ray Train's controller logs the worker group's
    # members as one message under "...: ", a "- " line each), behind Ray's prefix too
    group = ["Started training worker group of size 2: ",
             "- (ip=127.0.0.1, pid=55616) world_rank=0, local_rank=0, node_rank=0",
             "- (ip=127.0.0.1, pid=55617) world_rank=1, local_rank=1, node_rank=0"]
    texts = [*group, "Attempting to shut down the worker group."]
    assert groups(texts) == [[0, 1, 2], [3]]
    assert groups([f"(TrainController pid=55606) {t}" for t in texts]) == [[0, 1, 2], [3]]


def test_a_yaml_sequence_of_mappings_keeps_the_lines_indented_under_its_items():
    # the same rule: kubectl's List prints each item's keys indented under its "- " line (a Secret's data among them,
    # which the redactor must see in one event with its kind)
    texts = ["items:", "- apiVersion: v1", "  data:", "    dsn: c2VjcmV0", "  kind: Secret", "- apiVersion: v1",
             "  kind: ConfigMap", "kind: List"]
    assert groups(texts)[0] == [0, 1, 2, 3, 4, 5, 6]


def test_dashed_lines_after_a_line_that_announced_nothing_stay_apart():
    # the same rule: only a line ending with ':' announces its list
    assert groups(["Started the worker group.", "- rank 0 ready", "- rank 1 ready"]) == [[0], [1], [2]]
    # and a line that is an item or a record led by "-" itself (BGL's alert flag) announces none
    bgl = ["- 1118772810 2005.06.14 R27-M0-N9-C:J12-U01 RAS KERNEL FATAL special purpose registers:",
           "- 1118772877 2005.06.14 R27-M1-N3-C:J04-U11 RAS KERNEL FATAL lr:00004ed0 cr:28244842"]
    assert groups(bgl) == [[0], [1]]


def test_mpich_exit_string_message_is_one_event():
    # rule: TOKENS "mpich_exit" and MODES "mpich_exit" (hydra's mpiexec.c prints the signal's string, then two fixed
    # lines, on leaving); the prompt after it is the next line of its own
    texts = ["YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)",
             "This typically refers to a problem with your application.",
             "Please see the FAQ page for debugging suggestions",
             "/project $ mpiexec -np 10 ./main"]
    assert groups(texts) == [[0, 1, 2], [3]]
