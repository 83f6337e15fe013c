"""Printers met in corpus/wild/dev32 (the infrastructure around GPU training as its output lands in node and
job logs: DCGM, nccl-tests, the device plugin, kubelet, Slurm, the kernel, UCX, InfiniBand tools). Each test
names the rule it guards (rules.MODES, rules.TOKENS), and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans


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


_ZAP_CUT = ['2020-06-18T10:04:48.756+0200    ERROR   controller-runtime.controller   Reconciler error        '
            '{"service.version": "1.2.0-be401266", "controller": "enterprisesearch-controller", '
            '"request": "e2e-mercury/test-en',
            't-config-ref-jbgc", "error": "Operation cannot be fulfilled on enterprisesearches.enterprisesearch.k8s.'
            'elastic.co \\"test-ent-config-ref-jbgc\\": the object has been modified; please apply your changes '
            'to the lat',
            'est version and try again"}']


def test_zap_console_time_padded_by_blanks_to_its_level_is_the_records_head_not_a_collector_stamp():
    # rule: STREAM_PREFIXES "rfc3339" (docker -t and kubectl --timestamps put one blank after their time; zap's
    # console encoder puts a tab, which a copy turns into blanks, before the level): the head stays the record's
    from streams.assemble.merger import split_head, split_prefix

    _key, body, _rank, _head = split_prefix(_ZAP_CUT[0])
    assert split_head(body)[0] == "2020-06-18T10:04:48.756+0200    ERROR   "


def test_record_cut_by_a_terminal_is_whole_once_its_pieces_close_its_json_fields_whatever_follows():
    # rule: merger._closes_brackets (a cut line's pieces held for a wrap are its rest when they balance the
    # braces it opened, though prose and not a record comes next)
    assert spans([*_ZAP_CUT, "", "It would be nice for this log to include an identifier."]) == [(0, 2), (4, 4)]


def test_unwinder_stack_dump_cut_above_its_header_is_one_kernel_report_under_an_upper_case_host():
    # rule: TOKENS "kern_word" (unwind_frame.c unwind_dump: "%p: %0*lx (%pB)" a word, "%p: %0*x ..." for zeros)
    # and STREAM_PREFIXES "syslog" (the kernel's tag behind a host named in capitals)
    texts = ["Apr 29 19:24:11 EVE kernel: 00000000d2f014e1: 0000000000000002 (0x2)",
             "Apr 29 19:24:11 EVE kernel: 00000000f5595e2d: 0000000000000000 ...",
             "Apr 29 19:24:11 EVE kernel: 000000000ee779df: ffffffffc0b44945 (_nv013207rm+0x2c5/0x5b0 [nvidia])",
             "Apr 29 19:24:12 EVE systemd[1]: Started Session 4 of user root."]
    assert spans(texts) == [(0, 2), (3, 3)]


_ZAP_FRAMES = ["sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).processNextWorkItem",
               "\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.2.0/pkg/internal/controller/controller.go:192",
               "sigs.k8s.io/controller-runtime/pkg/internal/controller.(*Controller).worker",
               "\t/go/pkg/mod/sigs.k8s.io/controller-runtime@v0.2.0/pkg/internal/controller/controller.go:171"]


def test_zap_frames_under_a_quiet_klog_record_are_not_its_own_but_stay_under_an_error_record():
    # rule: _ATTACH "go_func_bare" "loud" (zap adds its stacktrace at Error, or Warn in development: an info
    # record carries none, so frames after it belong to a record whose head was lost)
    quiet = ["I0703 00:35:58.997176       1 main.go:242] Listening securely on 0.0.0.0:8443", *_ZAP_FRAMES]
    assert spans(quiet) == [(0, 0), (1, 4)]
    loud = ['1.6836474195594983e+09\tERROR\tReconciler error\t{"controller": "repository", "error": "401"}',
            *_ZAP_FRAMES]
    assert spans(loud) == [(0, 4)]


def test_record_a_terminal_cut_on_the_blank_after_a_word_goes_on_with_its_lower_case_rest():
    # rule: merger._wraps (a cut that fell on the blank closing a word, the rest a lower-case word: the
    # sentence going on; the same cut before a capital stays a line of its own)
    head = "I0920 21:26:13.783984       1 queue_controller.go:133] "
    texts = [head.replace("133]", "158]") + "Begin sync queue default",
             head + 'Error syncing queues "default", retrying. Error: queue default has not been ',
             "seen or deleted",
             head.replace("133]", "158]") + "Begin sync queue default"]
    assert spans(texts) == [(0, 0), (1, 2), (3, 3)]
    texts[2] = "Seen or deleted"
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 3)]
