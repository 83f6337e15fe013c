"""One test per printer grammar of ``rules.py`` and per failure class seen on logs nobody here wrote.

Inputs are short runs of real lines (from the labelled corpus, from the printers' documented
output, or from their source's format strings). Each test names the rule it guards; removing or
loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups
from streams.assemble.lines import RawLine
from streams.assemble.merger import MultilineMerger


def closes_at(texts: list[str]) -> list[int]:
    """For each line, how many blocks pushing it emitted (a printer's known last line emits at once)."""
    m = MultilineMerger()
    return [len(m.push("src", RawLine(t), i, 0)) for i, t in enumerate(texts)]


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


def kinds(texts: list[str]) -> list[str | None]:
    m = MultilineMerger()
    blocks = []
    for i, t in enumerate(texts):
        blocks += m.push("src", RawLine(t), i, 0)
    blocks += m.flush_all()
    return [b.kind if len(b.texts) > 1 else None for b in sorted(blocks, key=lambda b: b.first_offset)]


# -- failure classes seen on unseen logs ---------------------------------------------------------


def _cut(line: str, width: int) -> list[str]:
    return [line[i:i + width] for i in range(0, len(line), width)]


def test_records_a_terminal_cut_at_its_width_are_whole():
    # merger._wraps: a terminal 120 columns wide cuts a glog record inside a word; once seen to wrap there,
    # its next long record is cut between words and over three lines
    first = ("E0727 12:25:18.507668 11876 slave.cpp:3207] Termination of executor 'executor.journalnode.NodeExecutor."
             "1437999147307' failed: Failed to clean up an isolator when destroying container 'a99eacdb' of "
             "framework 20150727")
    second = ("I0727 12:25:18.519414 11876 slave.cpp:2531] Handling status update TASK_LOST (UUID: 4eab1314) for task "
              "task.journalnode.NodeExecutor.1437999147307 of framework 20150727-115610-2703018762-5050-13855-0006 "
              "from @0.0.0.0:0 (a status update of the executor, forwarded to the master)")
    lines = [*_cut(first, 120),
             "I0727 12:25:18.518337 11879 cgroups.cpp:1447] Successfully thawed cgroup /sys/fs/cgroup/freezer/mesos",
             *_cut(second, 120),
             "W0727 12:25:18.524919 11876 containerizer.cpp:814] Ignoring update for unknown container: a99eacdb"]
    assert len(lines[0]) == 120 and lines[0][-1].isalpha() and lines[1][0].islower()  # cut inside a word
    assert spans(lines) == [(0, 1), (2, 2), (3, 5), (6, 6)]


def test_lines_as_wide_as_each_other_on_purpose_stay_apart():
    # the guards of merger._wraps: a record then a command and its continuation (the line after the supposed rest
    # opens no record), a table's rows (gaps at the same columns), a line longer than the one before it
    head = "2024-01-01 12:00:00,123 INFO trainer: loaded the tokenizer and the model weights from the checkpoint dir"
    assert spans([head, "python3 bench.py \\", "  --model m"]) == [(0, 0), (1, 2)]
    rows = ["kube-test-container-584687df5f-vwz7k    1/1     Running   4 (24d ago)      85d  on node gpu-a-0001",
            "nvidia-device-plugin-1655230975-22s26   1/1     Running   0                37h  on node gpu-a-0002"]
    assert spans([*rows, "# kubectl logs nvidia-device-plugin"]) == [(0, 0), (1, 1), (2, 2)]
    assert spans([head, "and a line of text longer than the record before it, which no terminal cut from it at all, "
                        "so it is a line of its own"]) == [(0, 0), (1, 1)]

def test_traceback_does_not_swallow_the_c10d_line_after_it():
    # rule: HEADS "c10" -- a c10 record head ends the free-text message of the exception
    texts = ["Traceback (most recent call last):",
             '  File "/workspace/train.py", line 212, in <module>',
             "    main()",
             "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled system error",
             "[I1021 12:00:01.123456789 ProcessGroupNCCL.cpp:1112] [PG ID 0 PG GUID 0 Rank 0] ProcessGroupNCCL "
             "destructor entered."]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_traceback_message_lines_continue_but_an_nccl_line_ends_it():
    # rules: py_msg "text" -> cont (a message spans lines), RECORDS "nccl" ends it
    texts = ["Traceback (most recent call last):",
             '  File "/home/lc/.venv/lib/python3.11/site-packages/torch/distributed/utils.py", line 322, in _sync',
             "    dist._broadcast_coalesced(",
             "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
             "ProcessGroupNCCL.cpp:3356, unhandled cuda error",
             "ncclUnhandledCudaError: Call to CUDA function failed.",
             "Last error:",
             "Cuda failure 700 'an illegal memory access was encountered'",
             "lc-System-Product-Name:3290198:3290198 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 - Abort COMPLETE"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_excerpt_starting_at_the_last_frames_source_line_keeps_it_with_the_exception():
    # rules: TOKENS "py_stmt", STARTS "py_stmt" -> MODES "py_src_cut" -- traceback.py writes the last frame's
    # source line right above the exception line; an excerpt cut below the frame's "  File" line starts there
    # (its 4 blanks kept or lost)
    assert spans(["What is the reason for the error?", "",
                  "_x = self.transformer.drop(tok_emb + pos_emb)",
                  "RuntimeError: CUDA error: device-side assert triggered",
                  "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."]) == [(0, 0), (2, 4)]
    assert spans(["  raise OSError(",
                  "OSError: We couldn't connect to 'https://huggingface.co' to load the files."]) == [(0, 1)]
    assert spans(["output = ray.get(output)",
                  "ray.exceptions.RayTaskError(RuntimeError): ray::Actor.forward() (pid=693359, ip=192.168.2.4)",
                  '  File "/tmp/ray/worker.py", line 98, in forward']) == [(0, 2)]
    # (prose, or a statement that no exception line follows, stays a line of its own)
    assert spans(["I got this error(s) today", "RuntimeError: CUDA error: out of memory"]) == [(0, 0), (1, 1)]
    assert spans(["model = build(cfg)", "Loading checkpoint shards"]) == [(0, 0), (1, 1)]


def test_first_person_prose_above_a_paste_announces_nothing():
    # rule: PROSE_RE in merger._announces -- "I ... this error:" is the reporter's sentence, not a logger's message
    tb = ["Traceback (most recent call last):", '  File "/u/test2.py", line 7, in <module>',
          "    torch._dynamo.config.output_code = True", "AttributeError: output_code does not exist"]
    assert spans(["I add the snippet after my existing imports and get this error: ", *tb]) == [(0, 0), (1, 4)]
    assert spans(["When I hit an error during compilation, I see a message like:",
                  "torch._dynamo.exc.TorchRuntimeError: "]) == [(0, 0), (1, 1)]
    # (a program's own message that ends with ':' still announces the traceback under it)
    assert spans(["Run xwd3nq6z errored:", *tb]) == [(0, 4)]


def test_zsh_default_prompt_ends_an_exception_message():
    # rule: RECORDS "prompt" -- zsh's default PROMPT "%n@%m %1~ %# " ("user@host dir % "), after a conda env's name
    assert spans(["Traceback (most recent call last):", '  File "/u/test2.py", line 7, in <module>',
                  "    main()", "AttributeError: output_code does not exist",
                  "(base) david@Davids-MBP-2 pytorch % python test/test2.py"]) == [(0, 3), (4, 4)]


def test_childfailed_box_cut_above_its_failures_section_is_one_event():
    # rules: TOKENS "box_failures", MODES "table_dash" -> "py_box" -- torchrun's _MSG_FORMAT_TEMPLATE writes its
    # '-' section rule, then "Failures:" and the other failures' "[N]:" entries with their fields
    rule = "-" * 60
    assert spans(["I got this failure", "", rule, "Failures:", "[1]:", "  time      : 2023-08-05_13:59:34",
                  "  rank      : 5 (local_rank: 1)", "[2]:", "  time      : 2023-08-05_13:59:34",
                  "  exitcode  : 1 (pid: 22641)"]) == [(0, 0), (2, 9)]


def test_ctest_status_lines_are_lines_of_their_own():
    # rule: RECORDS "ctest" -- ctest -V writes "test N", then its "Start N: name" status right-aligned under it
    assert spans(["test 67", "        Start  67: test_lssr_5", "--"]) == [(0, 0), (1, 1), (2, 2)]
    assert spans(["test 3", "    3/12 Test  #3: test_io ..........   Passed    0.02 sec"]) == [(0, 0), (1, 1)]


def test_go_panic_does_not_swallow_the_line_after_the_dump():
    # rule: go_stack "text" -> end (a goroutine section is func/file pairs; anything else ends it)
    texts = ["panic: runtime error: index out of range [1] with length 1",
             "",
             "goroutine 40 [running]:",
             "github.com/coroot/coroot/constructor.getInstanceAndContainer(0xc00021f500, 0x0, 0xfad3bc?, {0x0?, 0x0?})",
             "\t/tmp/src/constructor/containers.go:26 +0x87c",
             "main.main()",
             "\t/tmp/src/main.go:140 +0x1d",
             "exit status 2"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_java_message_with_a_blank_line_stays_with_its_frames():
    # rule: java_head after_blank "text" -> tent (the message is held until "at" frames confirm it)
    texts = ["org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource':",
             "",
             "Failed to determine a suitable driver class",
             "\tat org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.initializeBean"
             "(AbstractAutowireCapableBeanFactory.java:1804)",
             "\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:1306)",
             "Started in 3.2 seconds"]
    assert spans(texts) == [(0, 4), (5, 5)]
    # the same message with no frames after it: the held lines are read again on their own
    assert spans([*texts[:3], "Started in 3.2 seconds"]) == [(0, 0), (2, 2), (3, 3)]


def test_log4j_header_keeps_the_stack_it_introduces():
    # rules: "record" text -> tent, confirmed by j_at (log4j's %throwable after the message)
    texts = ["2016-06-03 21:16:57,724 WARN org.apache.hadoop.yarn.server.nodemanager.DefaultContainerExecutor: "
             "Exception from container-launch with container ID: container_e42_1464950190131_0099_01_000002 and "
             "exit code: 10",
             "ExitCodeException exitCode=10:",
             "        at org.apache.hadoop.util.Shell.runCommand(Shell.java:561)",
             "        at org.apache.hadoop.util.Shell.run(Shell.java:478)",
             "2016-06-03 21:16:57,725 INFO org.apache.hadoop.yarn.server.nodemanager.ContainerExecutor: "
             "Exception from container-launch."]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_a_line_held_after_a_record_is_never_lost():
    # rule: "record" text -> tent; released when no frame follows
    texts = ["I0507 11:59:44.523502    4727 kubelet_getters.go:187] \"Pod status updated\" pod=\"kube-system/proxy\"",
             "XMT: Solicit on eth0, interval 117950ms.",
             'time="2024-05-07T11:59:43.954655670Z" level=info msg="StartContainer"']
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_glibc_backtrace_symbols_behind_a_ray_prefix_is_one_event_per_process():
    # rules: STREAM_PREFIXES "ray" (the key), glibc_frame (backtrace_symbols "%s(%s%c%#tx) [%p]")
    # announced by "Obtained N stack frames." (the glibc manual's example printer)
    p, q = "(RayWorkerWrapper pid=3397964) ", "(RayWorkerWrapper pid=3397961) "
    texts = [p + "Obtained 4 stack frames.",
             p + "/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x7f4e4a126ac3]",
             q + "INFO 03-11 15:25:20 [loader.py:429] Loading weights took 86.77 seconds",
             p + "/usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cuda.so(+0xe4271b) [0x7f4d5b0a071b]",
             p + "/lib/x86_64-linux-gnu/libc.so.6(+0x126850) [0x7f4e4a1b8850]"]
    assert groups(texts) == [[0, 1, 3, 4], [2]]
    assert kinds(texts)[0] == "glibc_backtrace"


def test_c10_exception_raised_from_stays_with_the_error_line():
    # rule: _ATTACH "c10_raised" -> cont! (c10::Error's what(): message, then its backtrace)
    texts = ["RuntimeError: CUDA error: an illegal memory access was encountered",
             "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
             "(most recent call first):",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f31b24b9446 in "
             "/usr/local/lib/python3.12/dist-packages/torch/lib/libc10.so)",
             "frame #1: <unknown function> + 0x94ac3 (0x7f31b3193ac3 in /usr/lib/x86_64-linux-gnu/libc.so.6)",
             "INFO 01-29 20:00:47 engine.py:12] shutting down"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_c10_watchdog_record_hard_wraps_frames_and_nested_what():
    # rules: HEAD_STARTS (a c10 E record is free text), c10_frames after_blank c10_raised, "wrap"
    texts = ["[rank3]:[E129 20:00:47.374645555 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 3] Process "
             "group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
             "might be incorrect.",
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
             "",
             "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
             "(most recent call first):",
             "frame #0: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long> >) "
             "+ 0x282 (0x7fa179453772 in /usr/local/li",
             "b/python3.10/dist-packages/torch/lib/libtorch_cuda.so)",
             "frame #1: clone + 0x44 (0x7f31b3224a04 in /usr/lib/x86_64-linux-gnu/libc.so.6)",
             "",
             "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1601 "
             "(most recent call first):",
             "frame #0: <unknown function> + 0xe4271b (0x7f4d5b0a071b in /usr/local/lib/libtorch_cuda.so)",
             "",
             "Fatal Python error: Aborted"]
    assert spans(texts) == [(0, 10), (12, 12)]


def test_gdb_backtrace_keeps_its_first_frame_without_an_address():
    # rule: gdb_frame matches "#0  func (args) at file:line" (gdb prints no address for a frame at a
    # function's first instruction)
    texts = ["(gdb) bt",
             "#0  __pthread_kill_implementation (threadid=<optimized out>, signo=signo@entry=6, no_tid=no_tid@entry=0) "
             "at pthread_kill.c:44",
             "#1  0x00007f81893cb2b3 in __pthread_kill_internal (signo=6, threadid=<optimized out>) at "
             "pthread_kill.c:78",
             "#2  0x00007f818937f146 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26",
             "#3  0x00007f818936a4f7 in __GI_abort () at abort.c:79",
             "(gdb) quit"]
    assert spans(texts) == [(0, 0), (1, 4), (5, 5)]


def test_gdb_frames_wrapped_onto_indented_lines():
    # rule: gdb "indent" -> cont (long argument lists continue on indented lines)
    texts = ["#5  0x00007ffff5f0f836 in ggml_abort (file=0x7ffff6613268 \"ggml-cuda.cu\", line=75, fmt=0x7fff",
             "    at /home/ubuntu/sources/llama.cpp/ggml/src/ggml.c:221",
             "#6  0x00007ffff60e6c77 in ggml_cuda_error (stmt=0x7ffff66147e2 \"cudaGetLastError()\", ",
             "    file=0x7ffff6613268 \"ggml-cuda.cu\", line=1676, ",
             "(gdb) "]
    assert spans(texts)[0] == (0, 3)


def test_warning_ends_at_its_source_line_and_a_tqdm_bar_is_its_own_line():
    # rules: py_warn "warn_src" -> last (formatwarning's "  <source line>"), RECORDS "tqdm"
    texts = ["/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:560: UserWarning: This DataLoader will "
             "create 16 worker processes in total.",
             "  warnings.warn(_create_warning_msg(",
             "[INFO|trainer.py:1149] 2021-05-25 06:38:26,360 >> ***** Running training *****",
             "  Num examples = 1000",
             "  0%|          | 0/16 [00:00<?, ?it/s]"]
    assert spans(texts) == [(0, 1), (2, 3), (4, 4)]


def test_warning_message_spanning_lines_with_blank_lines():
    # rule: py_warn text/after_blank -> tent (torch cpp_extension's !! WARNING !! banner), confirmed by warn_src
    texts = ["/opt/conda/lib/python3.8/site-packages/torch/utils/cpp_extension.py:283: UserWarning: ",
             "",
             "                               !! WARNING !!",
             "",
             "Your compiler (c++) is not compatible with the compiler Pytorch was",
             "built with for this platform, which is g++ on linux.",
             "  warnings.warn(WRONG_COMPILER_WARNING.format(",
             "Detected CUDA files, patching ldflags"]
    assert spans(texts) == [(0, 6), (7, 7)]



def _formatwarning_lines(message: str, category: type[Warning], filename: str, source: str) -> list[str]:
    """What CPython's warnings.formatwarning writes, as lines."""
    import warnings
    return warnings.formatwarning(message, category, filename, 33, line=source).rstrip("\n").split("\n")


def test_warning_whose_message_starts_with_a_newline_keeps_its_header_with_or_without_its_trailing_blank():
    # rule: py_warning header "Warning: " or "Warning:" at the line's end. formatwarning writes
    # f"{file}:{line}: {category}: {message}\n" + "  {source}\n"; a message that starts with "\n" (hydra's
    # version_base notice) leaves "...UserWarning: " alone on the first line, and a copy or a shipper that
    # trims trailing blanks leaves "...UserWarning:".
    for category, filename in ((UserWarning, "/home/u/based/train/run.py"),
                               (FutureWarning, "C:\\Users\\u\\train.py"),
                               (DeprecationWarning, "<frozen importlib._bootstrap>")):
        lines = _formatwarning_lines("\nThe version_base parameter is not specified.\n"
                                     "Please specify a compatability version level, or None.",
                                     category, filename, '@hydra.main(config_path="configs/")')
        assert lines[0].endswith("Warning: ")
        for header in (lines[0], lines[0].rstrip()):
            texts = ["(venv) $ python run.py", header, *lines[1:], "Error executing job with overrides: []"]
            assert groups(texts) == [[0], [1, 2, 3, 4], [5]], (category, header)


def test_a_path_line_ending_with_a_warning_name_and_colon_without_a_source_line_holds_nothing():
    # rule: py_warn holds message lines only until the source line confirms them; without it they are
    # lines of their own again
    texts = ["/x/run.py:33: UserWarning:", "[2024-01-01 00:00:00,000] [INFO] [x.py:1:f] next record",
             "plain line"]
    assert groups(texts) == [[0], [1], [2]]


def _ascii_table(header: list[str], rows: list[list[str]], grid: bool = False) -> list[str]:
    """An ASCII table as Triton's TablePrinter, tabulate's "psql"/"grid" and PrettyTable draw it: a '+---+'
    rule, the header row, a rule, the rows ('| cell |', cells padded to the column), a closing rule (a
    grid also draws a rule between rows)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    body = [line for r in rows for line in ([row(r), rule] if grid else [row(r)])]
    return [rule, row(header), rule, *body] + ([] if grid else [rule])


def test_an_ascii_table_whose_opening_rule_was_cut_is_one_event_to_its_closing_rule():
    # rule: STARTS "pipe_row" -> table_plus (rows held until a rule confirms them), as "rule_plus" opens it;
    # a file or an excerpt that starts inside a table (log rotation, kubectl logs --tail) keeps its rows
    rows = [["add_sub", "1", "READY"], ["pytorch", "1", "UNAVAILABLE: Internal: unable to load"]]
    after = "I0630 13:25:31.415657 1 metrics.cc:890] \"Collecting metrics for GPU 0\""
    for grid in (False, True):
        table = _ascii_table(["Model", "Version", "Status"], rows, grid=grid)
        for cut in ((3, 5) if grid else (3, 4)):  # the head cut after the header's rule, or after the first row
            tail = table[cut:]
            assert tail[0].startswith("| ") and tail[-1].startswith("+-")
            texts = [*tail, "", after]
            n = len(tail)
            assert groups(texts) == [list(range(n)), [n + 1]], (grid, cut)


def test_a_row_alone_or_rows_never_closed_by_a_rule_stay_lines_of_their_own():
    # rule: table_plus holds rows ("tent"): without the rule that confirms them they are read again alone
    row = _ascii_table(["Option", "Value"], [["server_id", "triton"], ["server_version", "2.54.0"]])[3:5]
    texts = ["I0110 21:30:54.920786 60 tritonserver.cc:1920] starting", *row,
             "W0110 21:30:55.000000 60 server.cc:1]  next record"]
    assert groups(texts) == [[0], [1], [2], [3]]
    assert groups([row[0], "plain text after it"]) == [[0], [1]]


def test_rows_never_closed_by_a_rule_are_read_again_a_few_times_not_once_per_row_held():
    # rule: lines a mode held as long as it holds any (max_tent), or held when the source is flushed, open no
    # block of that mode when read again; every table row can open a table whose top rule was cut, so each
    # would hold the next 200 again
    class CountingMerger(MultilineMerger):
        decisions = 0

        def _decide(self, *args):  # type: ignore[no-untyped-def]
            CountingMerger.decisions += 1
            return super()._decide(*args)

    m = CountingMerger()
    n = 2000
    blocks = []
    for i in range(n):
        blocks += m.push("src", RawLine(f"| {i} | value {i} | x |"), i, 1000 + i)
    blocks += m.flush_all()
    assert sorted(b.first_offset for b in blocks) == list(range(n))
    assert all(len(b.texts) == 1 for b in blocks)
    assert CountingMerger.decisions < 3 * n


def _childfailed_box(n_other: int) -> list[str]:
    """torchrun's ChildFailedError message as ChildFailedError.format_msg builds it from
    _MSG_FORMAT_TEMPLATE and _FAILURE_FORMAT_TEMPLATE (torch/distributed/elastic/multiprocessing/errors)."""
    from string import Template
    failure = Template("""[${idx}]:
  time      : 2023-02-08_16:36:51
  host      : ecs-06308145
  rank      : ${idx} (local_rank: ${idx})
  exitcode  : 1 (pid: 206290${idx})
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html""")
    others = "\n".join(failure.substitute(idx=i) for i in range(1, n_other + 1)) or "  <NO_OTHER_FAILURES>"
    msg = Template("""
${boarder}
${title}
${section}
Failures:
${other_failures}
${section}
Root Cause (first observed failure):
${root_failure}
${boarder}""").substitute(boarder="=" * 60, title="train.py FAILED", section="-" * 60,
                          other_failures=others, root_failure=failure.substitute(idx=0))
    return msg.split("\n")[1:]


def test_childfailed_box_cut_above_its_root_cause_section_is_one_event_to_its_closing_border():
    # rule: table_dash "box_root" -> py_box_cut, STARTS "box_root" -> py_box_cut (held to the '=' border)
    after = "Error: failed to run torchrun --nproc_per_node=4 train.py on 127.0.0.1"
    for n_other in (0, 2):
        box = _childfailed_box(n_other)
        root = box.index("Root Cause (first observed failure):")
        for cut in (root - 1, root):  # at the section rule, or at the section's title
            tail = box[cut:]
            n = len(tail)
            assert groups([*tail, after]) == [list(range(n)), [n]], (n_other, cut)


def test_a_root_cause_line_never_closed_by_the_border_holds_nothing():
    # rule: py_box_cut holds the fields ("tent"): without the closing '=' rule the section's title is a
    # line of its own again and the next record is not taken
    box = _childfailed_box(0)
    root = box.index("Root Cause (first observed failure):")
    texts = [*box[root:root + 4], "[2023-02-08 16:36:52,000] [INFO] [launch.py:1:main] next record"]
    got = groups(texts)
    assert [0] in got and [4] in got, got

# -- CPython ---------------------------------------------------------------------------------------

def test_chained_traceback_is_one_event():
    # rule: py_msg after_blank py_chain -> py_chain -> py_head (traceback.py's chain markers)
    texts = ["Traceback (most recent call last):",
             '  File "/usr/lib/python3.10/asyncio/tasks.py", line 491, in _wait',
             "    await waiter",
             "asyncio.exceptions.CancelledError",
             "",
             "During handling of the above exception, another exception occurred:",
             "",
             "Traceback (most recent call last):",
             '  File "/home/user/vllm/engine/async_timeout.py", line 178, in _do_exit',
             "    raise asyncio.TimeoutError",
             "asyncio.exceptions.TimeoutError",
             "",
             "INFO:     127.0.0.1:49616 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"]
    assert spans(texts) == [(0, 10), (12, 12)]


def test_exception_group_boxes_then_a_chain():
    # rules: py_eg "eg_line" (traceback.py draws groups with '|' and '+' under their indent), announce
    texts = ["ERROR:    Exception in ASGI application",
             "  + Exception Group Traceback (most recent call last):",
             '  |   File "/usr/local/lib/python3.12/dist-packages/starlette/_utils.py", line 76, in collapse_excgroups',
             "  |     yield",
             "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
             "  +-+---------------- 1 ----------------",
             "    | Traceback (most recent call last):",
             '    |   File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/protocol.py", line 513',
             "    | AttributeError: 'bytes' object has no attribute 'get'",
             "    +------------------------------------",
             "",
             "During handling of the above exception, another exception occurred:",
             "",
             "Traceback (most recent call last):",
             '  File "/usr/local/lib/python3.12/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 401',
             "    result = await app(  # type: ignore[func-returns-value]",
             "AttributeError: 'bytes' object has no attribute 'get'",
             "INFO:     Shutting down"]
    assert spans(texts) == [(0, 16), (17, 17)]
    # the group's box is all it holds: an indented line without '|' or '+' is not part of it
    assert spans([*texts[1:10], "  Num examples = 1000"]) == [(0, 8), (9, 9)]


def test_fatal_python_error_with_thread_dumps_ends_at_extension_modules():
    # rules: py_fatal / fatal_frames (faulthandler: stacks separated by blank lines, then
    # "Extension modules: ..." -> last)
    texts = ["Fatal Python error: Bus error",
             "",
             "Thread 0x00007976472006c0 (most recent call first):",
             '  File "/home/u/miniconda3/envs/sglang/lib/python3.12/threading.py", line 359 in wait',
             "",
             "Current thread 0x000079795dbe4740 (most recent call first):",
             '  File "/home/u/sglang/srt/layers/linear.py", line 1254 in weight_loader',
             '  File "<string>", line 1 in <module>',
             "",
             "Extension modules: numpy.core._multiarray_umath, numpy.linalg._umath_linalg (total: 2)",
             '  File "/usr/lib/python3.10/multiprocessing/spawn.py", line 116, in spawn_main']
    assert spans(texts) == [(0, 9), (10, 10)]
    assert kinds(texts)[0] == "python_fatal"


def test_torchrun_childfailederror_box_belongs_to_its_traceback():
    # rule: py_msg rule_eq -> py_box, closed by the next bare '=' rule (torch elastic's _MSG_FORMAT_TEMPLATE)
    texts = ["Traceback (most recent call last):",
             '  File "/usr/local/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 250',
             "    raise ChildFailedError(",
             "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "=======================================================",
             "train.py FAILED",
             "-------------------------------------------------------",
             "Failures:",
             "  <NO_OTHER_FAILURES>",
             "-------------------------------------------------------",
             "Root Cause (first observed failure):",
             "[0]:",
             "  time      : 2023-08-01_01:06:47",
             "  traceback : Signal 9 (SIGKILL) received by PID 208585",
             "=======================================================",
             "commune@r1n2a6000:~/Andromeda$ export NCCL_DEBUG=INFO"]
    assert spans(texts) == [(0, 14), (15, 15)]
    assert kinds(texts)[0] == "childfailed_box"


def test_a_line_without_the_head_an_every_line_formatter_writes_is_not_part_of_its_record():
    # rule: EVERY_LINE (torch._logging repeats "[ts] logger: [LEVEL] " on every line of a record)
    h = "[2023-08-14 14:53:48,863] torch._dynamo.output_graph: [WARNING] "
    texts = [h + "Backend compiler failed with a fake tensor exception at",
             h + '  File "/data/users/anijain/pytorch/examples/spl.py", line 5, in fn',
             h + "    return torch.sum(x, dim=1).tolist()",
             h + "Falling back to eager for this frame. Please use TORCH_LOGS=graph_breaks to see the stack trace.",
             "[0, 0, 0, 0]"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_logger_exception_with_the_same_repeated_head_is_one_record():
    # rules: HEADS "vllm" repeats (NewLineFormatter), identical head -> one record; a headless
    # line does not continue an every-line record
    h = "(VllmWorker rank=1 pid=52940) ERROR 04-14 14:24:52 [multiproc_executor.py:383] "
    texts = [h + "WorkerProc hit an exception: %s",
             h + "Traceback (most recent call last):",
             h + '  File "/data/vllm/v1/worker/gpu_model_runner.py", line 1466, in _dummy_sampler_run',
             h + "    sampler_output = self.model.sample(",
             h + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 298.00 MiB.",
             h,
             "(VllmWorker rank=1 pid=52940) INFO 04-14 14:24:53 [gpu_worker.py:1] next record",
             "[0, 0, 0, 0]"]
    assert spans(texts) == [(0, 5), (6, 6), (7, 7)]


def test_two_workers_of_many_word_names_interleave_their_tracebacks_apart():
    # rule: STREAM_PREFIXES "ray" (vLLM's _add_prefix writes any worker name: "VllmWorker TP1", "EngineCore_DP0")
    a, b = "(VllmWorker TP0 pid=437) ", "(VllmWorker TP1 pid=438) "
    texts = [a + "Traceback (most recent call last):",
             b + "Traceback (most recent call last):",
             a + '  File "/vllm/v1/worker/gpu_worker.py", line 10, in init_device',
             b + '  File "/vllm/v1/worker/gpu_worker.py", line 10, in init_device',
             a + "RuntimeError: CUDA error: out of memory",
             b + "RuntimeError: CUDA error: out of memory"]
    assert groups(texts) == [[0, 2, 4], [1, 3, 5]]


def test_the_same_record_twice_is_two_records():
    # rule: identical head and identical body -> a new record
    texts = ["INFO 10-17 22:24:13 multiproc_worker_utils.py:137] Killing local vLLM worker processes",
             "INFO 10-17 22:24:13 multiproc_worker_utils.py:137] Killing local vLLM worker processes"]
    assert spans(texts) == [(0, 0), (1, 1)]


def test_uncaught_traceback_after_a_launcher_error_line_is_its_own_event():
    # rule: NO_EXC_BODY_RE (torch elastic logs a worker's death without exc_info)
    texts = ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 4 (pid: 208585) "
             "of binary: /usr/bin/python3.10",
             "Traceback (most recent call last):",
             '  File "/home/commune/.local/bin/accelerate", line 8, in <module>',
             "    sys.exit(main())",
             "RuntimeError: boom"]
    assert spans(texts) == [(0, 0), (1, 4)]
    # logger.exception's record does take it (Ray's "%(asctime)s\t%(levelname)s ..." format)
    ray = ["2022-03-22 10:41:28,079\tERROR function_runner.py:281 -- Runner Thread raised error.", *texts[1:]]
    assert spans(ray) == [(0, 4)]


def test_interleaved_rank_tracebacks_are_merged_per_prefix():
    # rule: STREAM_PREFIXES "rank" keys lines by writer
    texts = ["[rank0]: Traceback (most recent call last):",
             "[rank1]: Traceback (most recent call last):",
             '[rank0]:   File "/workspace/train.py", line 10, in <module>',
             '[rank1]:   File "/workspace/train.py", line 10, in <module>',
             "[rank0]: RuntimeError: CUDA error: out of memory",
             "[rank1]: RuntimeError: CUDA error: out of memory"]
    assert groups(texts) == [[0, 2, 4], [1, 3, 5]]


# -- Java ------------------------------------------------------------------------------------------

def test_java_caused_by_suppressed_with_tabs_and_more():
    # rule: java_frames (Throwable.printStackTrace's javadoc example: Suppressed: under a tab,
    # its frames under two, "... n more")
    texts = ['Exception in thread "main" java.lang.Exception: Something happened',
             "\tat Foo.bar(Foo.java:10)",
             "\tat Foo.main(Foo.java:5)",
             "\tSuppressed: Resource$CloseFailException: Resource ID = 0",
             "\t\tat Resource.close(Resource.java:26)",
             "\t\tat Foo.bar(Foo.java:9)",
             "\t\t... 1 more",
             "Caused by: java.lang.Exception: I did it",
             "\tat Foo.bar(Foo.java:8)",
             "\t... 1 more",
             "Process finished with exit code 1"]
    assert spans(texts) == [(0, 9), (10, 10)]


# -- C and C++ -------------------------------------------------------------------------------------

def test_terminate_what_and_abseil_signal_dump_relogged_by_ray():
    # rules: terminate/what; sigdump takes "PC: @" and "    @" frames but a second "*** SIG... received
    # at" line (Ray's logging.cc re-logging the dump, a new head on every line) starts a new dump
    p = "(RayWorkerWrapper pid=336, ip=10.99.48.129) "
    texts = ["terminate called after throwing an instance of 'std::system_error'",
             "  what():  Invalid argument",
             p + "*** SIGABRT received at time=1743139179 on cpu 162 ***",
             p + "PC: @     0x7fe64731b9fc  (unknown)  pthread_kill",
             p + "    @     0x7fe6472c7520  (unknown)  (unknown)",
             p + "[2025-03-27 22:19:39,802 E 336 336] logging.cc:484: *** SIGABRT received at time=1743139179 on "
                 "cpu 162 ***",
             p + "[2025-03-27 22:19:39,803 E 336 336] logging.cc:484: PC: @     0x7fe64731b9fc  (unknown)  "
                 "pthread_kill",
             p + "Fatal Python error: Aborted"]
    assert spans(texts) == [(0, 1), (2, 4), (5, 6), (7, 7)]


def test_caffe2_fatal_signal_handler_dumps_each_thread_as_one_event():
    # rules: c2_sig/c2_frame, mode c2_sigdump -- caffe2's stacktraceSignalHandler writes per thread
    # "<SIG>(<n>), Thread <tid>: " (pytorch's copy adds "PID: <pid>, "), printStacktrace's
    # "[i] name[+0xoff](pc)[ in lib]" frames ("???" without a symbol, a null pc as "0"), then an empty line
    texts = ["SIGSEGV(11), Thread 20731: ",
             "[0] ???(0x7f3a2c0f1b2e) in /usr/lib/python3/dist-packages/caffe2/python/caffe2_pybind11_state.so",
             "[1] pthread_cond_wait+0xc9(0x7f3a4d1a3360) in /lib/x86_64-linux-gnu/libpthread.so.0",
             "[2] caffe2::SimpleQueue<int>::Pop(int*)+0x73(0x7f3a2b9d4c23) in /usr/lib/libcaffe2.so",
             "[3] ???(0)",
             "",
             "SIGSEGV(11), PID: 20731, Thread 20702: ",
             "[0] std::thread::_State_impl<void (*)()>::_M_run()+0x0(0x7f3a2b112c40) in /usr/lib/libstdc++.so.6",
             "Segmentation fault (core dumped)"]
    assert spans(texts) == [(0, 4), (6, 7), (8, 8)]
    assert kinds(texts)[:2] == ["cpp_frames", "cpp_frames"]


def test_c10_fatal_signal_handler_with_get_backtrace_frames_and_cut_header():
    # rules: c2_sig then c10's get_backtrace frames (c10/util/signal_handler.cpp writes
    # "{}({}), PID: {}, Thread {}: \n {}" with c10::get_backtrace()); c2_frame opens a dump whose header
    # the excerpt cut, and a record after the frames is its own
    texts = ["SIGABRT(6), PID: 512, Thread 530: ",
             " frame #0: c10::FatalSignalHandler::stacktraceSignalHandler(bool) + 0x94 (0x7f1 in /t/lib/libc10.so)",
             "frame #1: <unknown function> + 0x42520 (0x7f2 in /lib/x86_64-linux-gnu/libc.so.6)",
             "I0301 10:00:00.000000 512 engine.cc:40] shutting down",
             "[7] clone+0x44(0x7fe643a2971f) in /lib/x86_64-linux-gnu/libc.so.6",
             "[8] ???(0)",
             "I0301 10:00:00.000100 512 engine.cc:41] bye"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 5), (6, 6)]


def test_time_stamp_alone_is_a_blank_line_not_the_events_last_line():
    # rule: a relay's time stamp before an empty line (docker logs -t, a CI log's "Mon DD HH:MM:SS ") is the
    # writer's blank line; a writer's own prefix alone ("==PID== ", "(pid=N) ") stays the event's last line
    stamp = "2024-03-01T10:00:00.000000000Z "
    texts = [stamp + "SIGBUS(7), PID: 9, Thread 9: ",
             stamp + "[0] ???(0x7f00000001) in /lib/libc.so.6",
             stamp,
             stamp + "epoch 3 done"]
    assert spans(texts) == [(0, 1), (3, 3)]
    vg = ["==41== Invalid read of size 4", "==41==    at 0x109F2E: main (t.c:6)", "==41== ", "after"]
    assert spans(vg) == [(0, 2), (3, 3)]


def test_a_writers_prefix_alone_after_a_line_of_its_own_is_its_empty_line():
    # rule: PREFIX_ALONE_ENDS_RE -- Ray's log monitor prints a worker's empty line as "(name pid=N)" alone: after
    # a single-line record it is a line of its own, not that record's; after a multiline event it stays the
    # event's last line; valgrind closes every message, a one-line one too, with "==PID== " alone
    p = "(_tune pid=62308)"
    texts = [p + " Model summary: 225 layers, 3,011,043 parameters, 8.2 GFLOPs",
             p,
             p + " Transferred 319/355 items from pretrained weights",
             p + " Traceback (most recent call last):",
             p + '   File "/app/tune.py", line 3, in <module>',
             p + " ValueError: bad trial",
             p + " ",
             p + " trial done"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 6), (7, 7)]
    vg = ["==41== Warning: set address range perms: large range [0x59c8b040, 0x99c8b040)", "==41== ",
          "==41== Invalid read of size 4", "==41==    at 0x109F2E: main (t.c:6)", "==41== "]
    assert spans(vg) == [(0, 1), (2, 4)]


def test_glibc_malloc_report_with_backtrace_and_memory_map():
    # rule: glibc_report ("*** Error in", "======= Backtrace: =========", frames, maps)
    texts = ["*** Error in `./spawn': double free or corruption (!prev): 0x00000000035988c0 ***",
             "======= Backtrace: =========",
             "/lib64/libc.so.6(+0x81299)[0x2aaab019c299]",
             "/lib64/libc.so.6(__cxa_finalize+0x9a)[0x2aaab015505a]",
             "======= Memory map: ========",
             "00400000-00598000 r--p 00000000 00:2c 16377000427503977893               /home/u/bin/spawn-0",
             "Aborted (core dumped)"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_address_sanitizer_report_ends_at_its_summary():
    # rule: san_report (sanitizer_common: header, "    #N 0x.. in" frames, "SUMMARY: ...")
    texts = ["AddressSanitizer:DEADLYSIGNAL",
             "=================================================================",
             "==2384071==ERROR: AddressSanitizer: ABRT on unknown address 0x0539002460c7 (pc 0x7f87baad92fa T0)",
             "    #0 0x7f87baad92fa in raise",
             "    #1 0x5605333e24a9 in absl::log_internal::LogMessage::FailWithoutStackTrace() log_message.cc:487:3",
             "AddressSanitizer can not provide additional info.",
             "SUMMARY: AddressSanitizer: ABRT (/usr/grte/v5/lib64/libc.so.6+0x7e2fa)",
             "==2384071==ABORTING"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_compute_sanitizer_reports_close_with_a_bare_prefix():
    # rule: cs_report (compute-sanitizer prefixes every line with "========= ", a bare one closes a report)
    texts = ["========= Invalid __global__ read of size 4 bytes",
             "=========     at void k_get_rows_float<float, float>(const T1 *, const int *, T2 *, long)+0x1c0",
             "=========     by thread (32,0,0) in block (0,0,0)",
             "=========",
             "========= Invalid __global__ read of size 4 bytes",
             "=========     by thread (33,0,0) in block (0,0,0)",
             "=========",
             "========= ERROR SUMMARY: 2 errors"]
    assert spans(texts) == [(0, 3), (4, 6), (7, 7)]
    assert closes_at(texts)[3] == 1 and closes_at(texts)[6] == 1  # emitted on their closing line


def test_kernel_report_keeps_its_lines_and_lets_other_printk_lines_through():
    # rules: STREAM_PREFIXES "dmesg" (volatile), kernel mode "text" -> side
    texts = ["[  114.858684] WARNING: CPU: 1 PID: 21961 at arch/x86/kvm/x86.c:7377 kvm_arch_vcpu_ioctl_run+0x1cf",
             "[  114.868227] Kernel panic - not syncing: panic_on_warn set ...",
             "[  114.892572] Call Trace:",
             "[  114.894625] binder: 21966:21967 unknown command 0",
             "[  114.907000]  dump_stack+0x194/0x24d",
             "[  114.908000]  panic+0x1e4/0x41c",
             "[  115.335606] ---[ end trace 4e4e5f7cdd1a8d6e ]---",
             "[  115.400000] usb 1-1: new high-speed USB device number 2"]
    assert groups(texts) == [[0, 1, 2, 4, 5, 6], [3], [7]]


# -- Go and Rust -----------------------------------------------------------------------------------

def test_go_recovered_panic_created_by_and_goroutine_sections():
    # rule: go_head / go_stack (runtime/panic.go printpanics, runtime/traceback.go)
    texts = ["panic: boom [recovered]",
             "\tpanic: boom again",
             "",
             "goroutine 1 [running]:",
             "main.main.func1()",
             "\t/tmp/x.go:8 +0x7d",
             "panic({0x4a4f20?, 0x55f8e0?})",
             "\t/usr/local/go/src/runtime/panic.go:770 +0x132",
             "",
             "goroutine 18 [chan receive, 3 minutes]:",
             "main.worker()",
             "\t/tmp/x.go:20 +0x25",
             "created by main.main in goroutine 1",
             "\t/tmp/x.go:11 +0x3e",
             "exit status 2"]
    assert spans(texts) == [(0, 13), (14, 14)]


def test_go_dump_behind_syslog_with_tabs_dropped():
    # rules: STREAM_PREFIXES "syslog" (the program's stream, split at each newline), go_file_bare
    p = "Dec 25 17:17:45 registry dockerd: "
    texts = [p + "fatal error: concurrent map writes",
             p + "goroutine 12334 [running]:",
             p + "runtime.throw(0x2a8187b, 0x15)",
             p + "/usr/local/go/src/runtime/panic.go:596 +0x95 fp=0xc420eff7d8 sp=0xc420eff7b8",
             p + "Started container 3f2a",
             p + "time=2017-12-25T17:17:46Z level=info msg=next"]
    assert spans(texts) == [(0, 3), (4, 4), (5, 5)]


def test_journald_splits_a_programs_traceback_and_its_grammar_joins_it_again():
    # rules: STREAM_PREFIXES "syslog" + RELAY_RECORD_WRITERS_RE: journald (journalctl -u) writes each
    # line a service printed as an entry of its own; the program's lines are its printer's again
    p = "Dec 01 17:44:05 gpu-node-3 python[41233]: "
    texts = [p + "Traceback (most recent call last):",
             p + '  File "/app/train.py", line 57, in step',
             p + '    return cfg["lr"] * 2',
             p + "           ~~~^^^^^^",
             p + "TypeError: 'NoneType' object is not subscriptable",
             p + "INFO:trainer:saving checkpoint",
             "Dec 01 17:44:06 gpu-node-3 kernel: BIOS-provided physical RAM map:",
             "Dec 01 17:44:06 gpu-node-3 kernel:  BIOS-e820: 0000000000000000 - 00000000000a0000 (usable)"]
    # the kernel's printk writes one record per line: its indented lines stay records
    assert spans(texts) == [(0, 4), (5, 5), (6, 6), (7, 7)]


def test_rust_panic_with_backtrace_ends_at_its_note():
    # rule: rust_panic / rust_bt (std panicking.rs default_hook, the backtrace printer's note)
    texts = ["thread 'main' panicked at src/main.rs:3:5:",
             "assertion `left == right` failed",
             "stack backtrace:",
             "   0: rust_begin_unwind",
             "             at /rustc/9d1b2106e23b1abd32fce1f17267604a5102f57a/library/std/src/panicking.rs:498:5",
             "   1: core::panicking::panic_fmt",
             "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
             "error: process didn't exit successfully"]
    assert spans(texts) == [(0, 6), (7, 7)]
    assert closes_at(texts)[6] == 1  # the note is the hook's last line: emitted at once


# -- prefixes and heads ----------------------------------------------------------------------------

def test_nccl_warn_under_a_process_prefix_takes_the_empty_line_before_it():
    # rule: LEADING_BLANK_RE (NCCL writes each WARN as "\n<header> NCCL WARN ...")
    texts = ["(WorkerDict pid=3290198) INFO step 1",
             "(WorkerDict pid=3290198)",
             "(WorkerDict pid=3290198) [2025-06-20 10:15:41] host:3290198:3290198 [0] enqueue.cc:1556 NCCL WARN Cuda "
             "failure 700 'an illegal memory access was encountered'"]
    assert spans(texts) == [(0, 0), (1, 2)]


def test_an_outer_prefix_alone_is_the_empty_line_of_the_block_open_under_it():
    # merger: _hold_blank (Ray's "(RayTrainWorker pid=N)" around torch's "[rank1]: ", the inner prefix not
    # written on an empty line): a chained traceback keeps its chain marker's empty lines
    texts = ["(RayTrainWorker pid=43515) [rank1]: Traceback (most recent call last):",
             '(RayTrainWorker pid=43515) [rank1]:   File "python/ray/_raylet.pyx", line 2250, in handler',
             "(RayTrainWorker pid=43515) [rank1]: AttributeError: 'Worker' object has no attribute 'core_worker'",
             "(RayTrainWorker pid=43515)",
             "(RayTrainWorker pid=43515) [rank1]: During handling of the above exception, another exception occurred:",
             "(RayTrainWorker pid=43515)",
             "(RayTrainWorker pid=43515) [rank1]: Traceback (most recent call last):",
             '(RayTrainWorker pid=43515) [rank1]:   File "python/ray/_raylet.pyx", line 2289, in handler',
             "(RayTrainWorker pid=43515) [rank1]: AttributeError: 'Worker' object has no attribute 'core_worker'",
             "(RayTrainWorker pid=43515) [rank1]: 2024-09-20 10:00:00,000\tINFO train.py:12 -- epoch 2 done"]
    assert groups(texts) == [list(range(9)), [9]]
    # with two blocks open under the outer prefix the empty line is nobody's in particular
    texts = ["(RayTrainWorker pid=1) [rank0]: Traceback (most recent call last):",
             "(RayTrainWorker pid=1) [rank1]: Traceback (most recent call last):",
             '(RayTrainWorker pid=1) [rank0]:   File "a.py", line 1, in f',
             '(RayTrainWorker pid=1) [rank1]:   File "a.py", line 1, in f',
             "(RayTrainWorker pid=1)",
             "(RayTrainWorker pid=1) [rank0]: KeyError: 'a'",
             "(RayTrainWorker pid=1) [rank1]: KeyError: 'a'"]
    assert groups(texts) == [[0, 2, 5], [1, 3, 6], [4]]


def test_horovodrun_prefix_with_and_without_its_time_keeps_ranks_apart():
    # rules: STREAM_PREFIXES horovod (safe_shell_exec.py prefix_connection "{time}[{index}]<{stream}>:", the
    # time time.asctime() writes or nothing): two ranks' tracebacks interleaved line by line, then a print
    texts = ["Fri Sep 25 16:52:57 2020[1]<stderr>:Traceback (most recent call last):",
             "Fri Sep 25 16:52:57 2020[0]<stderr>:Traceback (most recent call last):",
             'Fri Sep 25 16:52:57 2020[1]<stderr>:  File "train.py", line 3, in <module>',
             'Fri Sep 25 16:52:57 2020[0]<stderr>:  File "train.py", line 3, in <module>',
             "Fri Sep 25 16:52:57 2020[1]<stderr>:    main()",
             "Fri Sep 25 16:52:57 2020[0]<stderr>:    main()",
             "Fri Sep  5 16:52:58 2020[1]<stderr>:RuntimeError: boom",
             "Fri Sep  5 16:52:58 2020[0]<stderr>:RuntimeError: boom",
             "Fri Sep  5 16:52:58 2020[0]<stdout>:done"]
    assert groups(texts) == [[0, 2, 4, 6], [1, 3, 5, 7], [8]]
    untimed = [t[len("Fri Sep 25 16:52:57 2020"):] for t in texts]
    assert groups(untimed) == [[0, 2, 4, 6], [1, 3, 5, 7], [8]]
    # a print and the indented line after it, under one rank's prefix
    texts = ["Fri Sep 25 16:52:57 2020[0]<stderr>:User function raise error: 2 root error(s) found.",
             "Fri Sep 25 16:52:57 2020[0]<stderr>:  (0) Unknown: Horovod has been shut down.",
             "Fri Sep 25 16:52:57 2020[1]<stdout>:epoch 1"]
    assert groups(texts) == [[0, 1], [2]]


def test_rich_handler_records_and_their_wrapped_lines():
    # rules: HEADS "rich" / "rich_same_time" (a blanked time column is a new record)
    texts = ["[06/02/22 14:10:05] INFO     colossalai - torch.distributed.distributed_c10d - INFO: Added key:",
             "                             store_based_barrier_key:1 to store for rank: 0",
             "                    INFO     colossalai - torch.distributed.distributed_c10d - INFO: Rank 0: Completed",
             "                             store_based_barrier for key:store_based_barrier_key:1 with 4 nodes."]
    assert spans(texts) == [(0, 1), (2, 3)]


def test_empty_message_header_takes_its_body_until_the_next_record():
    # rules: "empty_head" -> await -> body (logging.BASIC_FORMAT record whose message starts with "\n")
    texts = ["INFO:maskrcnn_benchmark:",
             "MODEL:",
             '  META_ARCHITECTURE: "GeneralizedRCNN"',
             "DATASETS:",
             '  TRAIN: ("coco_2017_train",)',
             "",
             "INFO:maskrcnn_benchmark:Running with config:"]
    assert spans(texts)[0] == (0, 4)


# -- the tables themselves -------------------------------------------------------------------------

def test_tables_use_no_lookaround_or_backreferences():
    # a native engine (the Rust regex crate) reads the same tables: no look-around, no back-references
    import re

    from streams.assemble import rules as R

    patterns = ([p for _n, p, *_ in R.STREAM_PREFIXES] + [p for _n, p, _r in R.HEADS] + [t[1] for t in R.TOKENS]
                + [p for _n, p, _g in R.RECORDS])
    banned = re.compile(r"\(\?[=!]|\(\?<[=!]|\(\?P=|\\[1-9]")
    assert [p for p in patterns if banned.search(p)] == []


# -- more printers found in the dev logs -----------------------------------------------------------

def test_exception_line_right_after_an_error_record_is_its_own_stackless_exception():
    # rule: "record" j_exc -> expect (log4j prints a frameless throwable after the record)
    texts = ["[2024-02-20 21:05:06,589] ERROR SendRecordsCallback: error (org.apache.kafka.trogdor.workload)",
             "org.apache.kafka.common.errors.TimeoutException: Expiring 31 record(s) for topic-0: 30005 ms has passed",
             "[2024-02-20 21:05:06,590] ERROR SendRecordsCallback: error (org.apache.kafka.trogdor.workload)",
             "org.apache.kafka.common.errors.TimeoutException: Expiring 31 record(s) for topic-0: 30005 ms has passed"]
    assert spans(texts) == [(0, 1), (2, 3)]


def test_simplelogger_thread_head_then_exception_and_frames():
    # rules: HEADS "thread_level" (SLF4J SimpleLogger "[thread] LEVEL logger - msg"), record j_exc
    texts = ["[flink-pekko.remote.default-remote-dispatcher-7] INFO org.apache.flink.runtime.checkpoint."
             "CheckpointCoordinator - Triggering checkpoint 1 failed",
             "org.apache.flink.runtime.checkpoint.CheckpointException: Task local checkpoint failure.",
             "\tat org.apache.flink.runtime.taskexecutor.TaskExecutor.triggerCheckpoint(TaskExecutor.java:1028)",
             "[flink-pekko.remote.default-remote-dispatcher-7] INFO org.apache.flink.runtime.jobmaster.JobMaster - x"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_a_prefix_alone_is_its_own_line_unless_an_nccl_warn_follows():
    # rule: "empty_prefix" -> lead (joins only the NCCL WARN written with it)
    p = "(VllmWorker rank=0 pid=2120280) "
    texts = [p, p + "INFO 07-28 23:02:25 [default_loader.py:262] Loading weights took 0.38 seconds"]
    assert spans(texts) == [(0, 0), (1, 1)]


def test_surefire_failure_line_announces_the_exception_below_it():
    # rules: _ATTACH j_exc -> announce, ANNOUNCE_BODY_RE "<<< FAILURE!"
    texts = ["Error:  io.trino.tests.TestSpilledAggregations.testGroupingCombinationsDistinct  Time elapsed: "
             "1.35 s  <<< FAILURE!",
             "java.lang.AssertionError: Execution of 'actual' query failed: SELECT count(*) FROM orders",
             "\tat org.testng.Assert.fail(Assert.java:83)",
             "Tests run: 10, Failures: 1"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_klog_record_that_carries_a_goroutine_stack():
    # rule: _ATTACH go_goroutine -> announce (k8s HandleCrash: "Observed a panic: ..." then the stack)
    texts = ['E1008 23:33:56.306763 2220922 runtime.go:78] Observed a panic: "invalid memory address or nil pointer '
             'dereference" (runtime error: invalid memory address or nil pointer dereference)',
             "goroutine 259 [running]:",
             "k8s.io/apimachinery/pkg/util/runtime.logPanic({0x203d960, 0x3961100})",
             "\t/go/pkg/mod/k8s.io/apimachinery@v0.22.6/pkg/util/runtime/runtime.go:74 +0x7d",
             "I1008 23:33:56.400000 2220922 collector.go:285] next"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_glibc_frames_without_a_symbol_and_old_c10_error_heads():
    # rules: glibc_frame's "%s[%p]" form; HEAD_STARTS "[E file.cpp:N]" (older torch) opens a c10 message
    texts = ["*** Error in `python': free(): invalid pointer: 0x00002aaaff0b4c40 ***",
             "======= Backtrace: =========",
             "/lib64/libc.so.6(+0x81329)[0x2aaaab675329]",
             "python[0x50ec0e]",
             "python(_PyFunction_Vectorcall+0xa5)[0x4ff2a5]",
             "[E ProcessGroupNCCL.cpp:916] [Rank 7] NCCL watchdog thread terminated with exception: CUDA error: "
             "unknown error",
             "CUDA kernel errors might be asynchronously reported at some other API call.",
             "",
             "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 "
             "(most recent call first):",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x99 (0x7f in /x/libc10.so)"]
    assert spans(texts) == [(0, 4), (5, 9)]


def test_c10_hint_lines_start_a_message_whose_head_was_cut_but_stay_text_in_a_traceback():
    # rules: cuda_hint starts c10_msg; SOFT_STARTS keeps it text inside a Python exception's message
    cut = ["For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
           "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
           "",
           "Exception raised from c10_cuda_check_implementation at /opt/conda/c10/cuda/CUDAException.cpp:43 "
           "(most recent call first):",
           "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in /x/libc10.so)"]
    assert spans(cut) == [(0, 4)]
    tb = ["Traceback (most recent call last):",
          '  File "/workspace/train.py", line 3, in <module>',
          "RuntimeError: CUDA error: an illegal memory access was encountered",
          "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
          "might be incorrect.",
          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]
    assert spans(tb) == [(0, 4)]


def test_faulthandler_frames_in_a_paste_that_doubled_every_newline():
    # rules: fh_file (faulthandler's 'line N in f', no comma) starts fatal_frames, taken after a blank
    texts = ['  File "/usr/lib/python3.10/threading.py", line 953 in run',
             "",
             '  File "/usr/lib/python3.10/threading.py", line 1016 in _bootstrap_inner',
             "",
             "Thread 0x00007fcd7a1e3740 (most recent call first):",
             "",
             '  File "<frozen importlib._bootstrap>", line 1087 in _handle_fromlist',
             "",
             "[2025-09-01 10:00:00] next record"]
    assert spans(texts) == [(0, 6), (8, 8)]


def test_rich_traceback_box_then_its_exception_line():
    # rule: rich_tb (rich.traceback's box, then the exception line after "╰─╯")
    texts = ["╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
             "│ /opt/conda/bin/accelerate:8 in <module>                                      │",
             "│   5 from accelerate.commands.accelerate_cli import main                       │",
             "╰──────────────────────────────────────────────────────────────────────────────╯",
             "ValueError: bad config",
             "[INFO] next"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_pip_closes_a_subprocess_output_box():
    # rule: RECORDS "pip_box_end"
    texts = ['        File "/home/u/miniconda3/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 1909',
             "          raise RuntimeError(message) from e",
             "      RuntimeError: Error compiling objects for extension",
             "      [end of output]"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_an_exception_group_whose_head_was_cut():
    # rule: STARTS eg_line -> py_eg
    texts = ['        |   File "/home/k/svc/.venv/lib/python3.14/site-packages/anyio/_backends/_asyncio.py", line 781',
             "        |     raise BaseExceptionGroup(",
             "        | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
             "        +-+---------------- 1 ----------------",
             "          | Traceback (most recent call last):"]
    assert spans(texts) == [(0, 4)]


def test_what_continues_after_a_blank_line_continues_without_it():
    # rsyslog's imfile and the collector's filelog send no record for an empty line: a mode's
    # after_blank continuations must also be continuations without the blank
    from streams.assemble import rules as R

    keeps = {"cont", "cont!", "last", "tent", "deeper", "announce", "expect", "wrap", "after_colon", "list_colon",
             "own"}
    missing = []
    for mode, spec in R.MODES.items():
        after = spec.get("after_blank")
        if not isinstance(after, dict):
            continue
        for tok, (act, _nxt) in after.items():
            if act not in keeps:
                continue
            entry = spec["on"].get(tok) or spec.get("any")
            if entry is None and tok not in R.STARTS:
                entry = spec["on"].get("indent" if tok == "indent" else "text")
            if entry is None or entry[0] not in keeps:
                missing.append((mode, tok))
    assert missing == []


def test_nested_c10_what_without_the_blank_line_an_agent_dropped():
    # rule: c10_frames "c10_raised" in its on table (the blank line before a nested what() is gone)
    texts = ["terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  [PG ID 2 PG GUID 3 Rank 3] Process group watchdog thread terminated with exception",
             "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
             "(most recent call first):",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f31b24b9446 in /x/libc10.so)",
             "Exception raised from ncclCommWatchdog at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1601 "
             "(most recent call first):",
             "frame #0: <unknown function> + 0xe4271b (0x7f316809971b in /x/libtorch_cuda.so)"]
    assert spans(texts) == [(0, 5)]


def test_a_boxed_table_under_a_record_stays_in_it():
    # rule: SOFT_STARTS "eg_line" (nvidia-smi's box lines look like an exception group's)
    texts = ["2023-06-03T03:36:08.123456Z  INFO text_generation_launcher: Runtime environment:",
             "nvidia-smi:",
             "   +-----------------------------------------------------------------------------+",
             "   | NVIDIA-SMI 515.105.01   Driver Version: 515.105.01   CUDA Version: 11.7     |",
             "   |-------------------------------+----------------------+----------------------+",
             "2023-06-03T03:36:09.000000Z  INFO text_generation_launcher: Starting download process."]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_a_faulthandler_timeout_header_takes_thread_stacks_only():
    # rule: py_timeout (Modules/faulthandler.c: "Timeout (H:MM:SS.ffffff)!" then every thread's stack)
    texts = ["Timeout (0:00:00.200000)!",
             "Thread 0x00007f4cce4806c0 (most recent call first):",
             '  File "/usr/lib/python3.12/threading.py", line 1010 in run',
             "Timeout (0:00:01)!",
             "eval loss 2.31"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 4)]


def test_go_runtime_diagnostics_open_the_throw_they_precede():
    # rule: go_runtime (runtime/stack.go newstack prints "runtime: ..." lines, then throws)
    texts = ["runtime: goroutine stack exceeds 1000000000-byte limit",
             "runtime: sp=0x2a5d07fe0390 stack=[0x2a5d07fe0000, 0x2a5d27fe0000]",
             "fatal error: stack overflow",
             "",
             "goroutine 1 gp=0x2a5ce7f5a1e0 m=0 mp=0x59c380 [running]:",
             "main.depth(...)",
             "\t/src/main.go:45",
             "...44739037 frames elided...",
             "main.main()",
             "\t/src/main.go:104 +0x1e5",
             "runtime: 12.3s per epoch",
             "eval loss 2.31"]
    assert spans(texts) == [(0, 9), (10, 10), (11, 11)]


def test_a_quiet_record_does_not_take_another_writers_stack():
    # rule: QUIET_HEAD_RE (an INFO record that speaks of no failure is not the stack's header; an
    # ERROR one, or an INFO one that says what failed, is)
    stack = ["java.io.IOException: shard 3: unexpected end of stream",
             "\tat Trainer$Shard.read(Trainer.java:21)",
             "\tat Trainer.main(Trainer.java:118)"]
    quiet = ["2026-12-01 17:46:08,377 INFO  org.example.train.Trainer - checkpoint 79 saved", *stack]
    failed = ["2026-12-01 17:46:08,377 INFO  org.example.train.Trainer - read of shard 3 failed", *stack]
    error = ["2026-12-01 17:46:08,377 ERROR org.example.train.Trainer - read failed", *stack]
    assert spans(quiet) == [(0, 0), (1, 3)]
    assert spans(failed) == [(0, 3)]
    assert spans(error) == [(0, 3)]


def test_a_handlers_announcing_line_waits_for_its_writer_across_other_prefixes():
    # rule: ANNOUNCE_ENDINGS (threading's "Exception in thread X:" and the traceback are two writes;
    # another rank's line may come between them)
    texts = ["[rank5]:Exception in thread loader-0:",
             "[rank3]:Traceback (most recent call last):",
             "[rank5]:Traceback (most recent call last):",
             '[rank5]:  File "train.py", line 3, in load',
             "[rank5]:KeyError: 'labels'",
             '[rank3]:  File "train.py", line 9, in step',
             "[rank3]:ValueError: bad shape",
             "[rank3]:2026-12-01 17:46:08,377 - trainer - INFO - step 3"]
    assert groups(texts) == [[0, 2, 3, 4], [1, 5, 6], [7]]


def test_dynamo_paragraphs_after_blank_lines_are_the_messages_own():
    # rule: TOKENS msg_para in py_msg/py_msg_more after_blank (torch/_dynamo/exc.py augment_exc_message
    # appends "\nfrom user code:\n ...", "\nSet TORCH_LOGS=...\n", "\n\nYou can suppress ...:\n    ..." to the message)
    texts = ["Traceback (most recent call last):",
             '  File "/app/train.py", line 88, in <module>',
             "    loss = compiled(batch)",
             "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
             "RuntimeError: Triton Error [CUDA]: out of memory",
             "",
             "from user code:",
             '   File "/app/model.py", line 12, in forward',
             "    x = self.lin(x)",
             "",
             'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information',
             "",
             "",
             "You can suppress this exception and fall back to eager by setting:",
             "    import torch._dynamo",
             "    torch._dynamo.config.suppress_errors = True",
             "",
             "Epoch 3/10"]
    assert spans(texts) == [(0, 15), (17, 17)]


def test_hub_error_paragraph_after_the_status_line_is_the_messages_own():
    # rule: TOKENS msg_para (huggingface_hub hf_raise_for_status: f"{status} Client Error." + "\n\n" + ...)
    texts = ["Traceback (most recent call last):",
             '  File "/app/train.py", line 9, in <module>',
             '    model = AutoModel.from_pretrained("meta-llama/Llama-3.1-8B")',
             "huggingface_hub.errors.GatedRepoError: 403 Client Error. (Request ID: Root=1-688b505e-01cc67f5)",
             "",
             "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/main/config.json.",
             "Access to model meta-llama/Llama-3.1-8B is restricted and you are not in the authorized list.",
             "",
             "Epoch 3/10"]
    assert spans(texts) == [(0, 6), (8, 8)]


def test_spawned_processs_traceback_inside_the_parents_message_is_one_chain():
    # rule: TOKENS py_chain "-- Process N terminated with the following error:" (torch/multiprocessing/spawn.py
    # ProcessRaisedException: "\n\n-- Process %d terminated with the following error:\n" + the child's traceback)
    texts = ["Traceback (most recent call last):",
             '  File "/app/train.py", line 40, in <module>',
             "    mp.spawn(main, nprocs=8)",
             "torch.multiprocessing.spawn.ProcessRaisedException: ",
             "",
             "-- Process 1 terminated with the following error:",
             "Traceback (most recent call last):",
             '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap',
             "    fn(i, *args)",
             "RuntimeError: CUDA error: out of memory",
             "",
             "Epoch 3/10"]
    assert spans(texts) == [(0, 9), (11, 11)]


def test_tensorflow_node_definition_after_graph_execution_error():
    # rule: TOKENS msg_para "Detected at node ... defined at (most recent call last):" (TF's error_interpolation)
    texts = ["Traceback (most recent call last):",
             '  File "/app/fit.py", line 12, in <module>',
             "    model.fit(ds, epochs=3)",
             "tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:",
             "",
             "Detected at node 'sparse_categorical_crossentropy/Xent' defined at (most recent call last):",
             '    File "/app/fit.py", line 12, in <module>',
             "      model.fit(ds, epochs=3)",
             "Node: 'sparse_categorical_crossentropy/Xent'",
             "logits and labels must have the same first dimension, got logits shape [32,10] and labels shape [320]",
             "\t [[{{node sparse_categorical_crossentropy/Xent}}]] [Op:__inference_train_function_1011]",
             "",
             "Epoch 3/10"]
    assert spans(texts) == [(0, 10), (12, 12)]


def test_colab_traceback_copied_with_its_file_links():
    # rule: TOKENS ipy_frame "[<file>](<link>) in f(...)" (IPython's ultratb as Colab's page renders it,
    # each file a link, hidden frames folded into "N frames")
    texts = ["---------------------------------------------------------------------------",
             "InvalidArgumentError                      Traceback (most recent call last)",
             "[<ipython-input-19-1f30932aed03>](https://localhost:8080/#) in <module>()",
             "      6   epochs=20,",
             "----> 8   validation_steps=len(test_set)",
             "      9 )",
             "",
             "1 frames",
             "[/usr/local/lib/python3.7/dist-packages/tensorflow/python/eager/execute.py](https://localhost:8080/#)"
             " in quick_execute(op_name, num_outputs, inputs, attrs, ctx, name)",
             "     54     tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
             "---> 55                                         inputs, attrs, num_outputs)",
             "",
             "InvalidArgumentError: Graph execution error:",
             "",
             "INFO:trainer:retrying"]
    assert spans(texts) == [(0, 12), (14, 14)]
