"""Printers met in corpus/wild/dev32 (the infrastructure around GPU training as its output lands in node and
job logs: DCGM, nccl-tests, the device plugin, kubelet, Slurm, the kernel, UCX, InfiniBand tools). Each test
names the rule it guards (rules.MODES, rules.TOKENS), and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans

_DCGMI = ["+---------------------------+------------------------------------------------+",
          "| Diagnostic                | Result                                         |",
          "+===========================+================================================+",
          "|-----  Metadata  ----------+------------------------------------------------|",
          "| DCGM Version              | 3.3.5                                          |",
          "|-----  Deployment  --------+------------------------------------------------|",
          "| Denylist                  | Pass                                           |",
          "| NVML Library              | Pass                                           |"]


def test_dcgmi_diag_table_cut_before_its_closing_rule_keeps_its_rows():
    # rule: MODES "table_plus" "grid" (dcgmi prints its result table in one write; a row whose bars stand
    # under the first rule's joints is the table's without waiting for the next rule)
    assert spans(_DCGMI + ["Successfully ran diagnostic for group."]) == [(0, 7), (8, 8)]


def test_a_bar_line_of_another_width_under_an_ascii_table_is_still_held_for_a_rule():
    # rule: MODES "table_plus" "grid" (only a row of the grid's own columns is taken at once)
    texts = _DCGMI[:3] + ["| a | b |", "next record"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 4)]


def test_systemctl_failed_job_message_and_its_see_line_are_one_event():
    # rule: TOKENS "sd_job_failed", "sd_job_see", MODES "sd_job" (bus-wait-for-jobs.c: one log_error over two lines)
    texts = ["Job for nvidia-fabricmanager.service failed because the control process exited with error code.",
             'See "systemctl status nvidia-fabricmanager.service" and "journalctl -xeu nvidia-fabricmanager.service"'
             " for details.",
             "Job for slurmd.service failed.",
             "Sep 18 03:19:01 node1 systemd[1]: slurmd.service: Failed with result 'exit-code'."]
    assert spans(texts) == [(0, 1), (2, 2), (3, 3)]


def test_ucx_fatal_error_message_split_at_its_newlines_under_one_head_is_one_event():
    # rule: HEADS "ucs_fatal_line" (ucs_fatal_error_message writes each line of the message behind the same
    # "[host:pid:thread:tid] file.c:line" head; another head, or another thread's, starts another record)
    texts = ["[a670n1:162239:0:162239] ib_mlx5_log.c:177  Local protection on mlx5_0:1/IB (synd 0x4 vend 0x51)",
             "[a670n1:162239:0:162239] ib_mlx5_log.c:177  RC QP 0x169 wqe[3]: SEND s-- [inl len 10]",
             "[a670n1:162240:0:162240] ib_mlx5_log.c:177  Local protection on mlx5_0:1/IB (synd 0x4 vend 0x51)"]
    assert spans(texts) == [(0, 1), (2, 2)]
