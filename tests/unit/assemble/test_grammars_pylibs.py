"""Grammars of the third-party Python printers training code uses (rich, loguru), one test per rule.

Inputs are lines these printers wrote (``devtools/printers/programs/pylibs.py``; rows of a box and
frames are left out where the test does not need them, trailing padding is cut). Each test names the
rule it guards; removing or loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans
from streams.assemble.decode import final_redraw
from streams.assemble.pipeline import parse_files

# RichHandler(rich_tracebacks=True) at a console width of 80: the traceback is indented to the message
# column, the panel is narrower than its title (cropped), and the chain marker is wrapped
RICH_HANDLER_CONTEXT = [
    "[12/01/26 21:02:09] ERROR    step 1200 failed, skipping batch      pylibs.py:116",
    "                             ╭─ Traceback (most recent call last─╮",
    "                             │ /tmp/pl/pylibs.py:41 in context   │",
    "                             │                                   │",
    "                             │ ❱  19 │   return data[\"labels\"][i │",
    "                             ╰───────────────────────────────────╯",
    "                             KeyError: 'labels'",
    "",
    "                             During handling of the above",
    "                             exception, another exception",
    "                             occurred:",
    "",
    "                             ╭─ Traceback (most recent call last─╮",
    "                             │ /tmp/pl/pylibs.py:114 in          │",
    "                             │ s_rich_handler                    │",
    "                             ╰───────────────────────────────────╯",
    "                             FileNotFoundError: [Errno 2] No such",
    "                             file or directory:",
    "                             '/nonexistent/checkpoints/step_1200/mo",
    "                             del.safetensors'",
    "[12/01/26 21:02:11] INFO     step 1201 loss=2.3104                 train.py:107",
]


def test_rich_handler_traceback_indented_to_the_message_column_with_a_wrapped_chain_marker():
    # rules: TOKENS rich_tb (indented, title cropped), _ATTACH "rich_tb" (announced by the ERROR record),
    # rich_row / rich_end / rich_exc, rich_chain / rich_chain_end (the marker wrapped to the column)
    assert spans(RICH_HANDLER_CONTEXT) == [(0, 19), (20, 20)]
    # (an agent that sends no record for an empty line)
    assert spans([t for t in RICH_HANDLER_CONTEXT if t]) == [(0, 17), (18, 18)]


def test_rich_panel_under_a_quiet_record_is_not_its_own():
    # rule: _ATTACH "rich_tb" is "announce": an INFO record does not announce a traceback (the panel is
    # another writer's, console.print_exception under a progress record)
    texts = ["[12/01/26 21:02:09] INFO     step 1200 done                        train.py:107",
             "╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
             "│ /tmp/pl/pylibs.py:19 in load_batch                                           │",
             "╰──────────────────────────────────────────────────────────────────────────────╯",
             "KeyError: 'labels'",
             "[12/01/26 21:02:10] INFO     step 1201 done                        train.py:107"]
    assert spans(texts) == [(0, 0), (1, 4), (5, 5)]


def test_rich_chained_panels_are_one_event():
    # rule: MODES py_chain takes "rich_tb" after the marker (rich.traceback prints the cause's panel
    # and exception line, then "The above exception was the direct cause ...", then the next panel)
    texts = ["╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
             "│ /tmp/pl/pylibs.py:34 in chained                                              │",
             "╰──────────────────────────────────────────────────────────────────────────────╯",
             "KeyError: 'labels'",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
             "│ /tmp/pl/pylibs.py:36 in chained                                              │",
             "╰──────────────────────────────────────────────────────────────────────────────╯",
             "DataLoaderError: batch 0 has no 'labels' column",
             "2026-12-01 17:44:15,620 - trainer - INFO - step 1201/10000 loss=2.3104 lr=3.0e-04"]
    assert spans(texts) == [(0, 10), (11, 11)]
    # (an agent that sends no record for an empty line: the same event without its blank lines)
    assert spans([t for t in texts if t]) == [(0, 8), (9, 9)]


def test_rich_syntax_error_panel_and_exception_group_panels():
    # rules: MODES rich_exc "rich_panel" (the SyntaxError's untitled panel after the traceback's), and
    # py_msg / rich_exc after a blank line: the "Sub-exception #N" panels of an exception group
    syntax = ["╭─────────── Traceback (most recent call last) ────────────╮",
              "│ /tmp/pl/pylibs.py:65 in syntax                           │",
              "╰──────────────────────────────────────────────────────────╯",
              "╭──────────────────────────────────────────────────────────╮",
              "│ warmup = dict(steps=100,                                 │",
              "╰──────────────────────────────────────────────────────────╯",
              "SyntaxError: '(' was never closed",
              "I1201 17:44:19.920691  68169 trainer.cc:587] step 7369 took 1.455s"]
    assert spans(syntax) == [(0, 6), (7, 7)]
    group = ["╭──────────── Traceback (most recent call last) ─────────────╮",
             "│ /tmp/pl/pylibs.py:61 in group                              │",
             "╰────────────────────────────────────────────────────────────╯",
             "ExceptionGroup: rank errors (2 sub-exceptions)",
             "",
             "╭──────────────────────── Sub-exception #1 ──────────────────╮",
             "│ ╭──────────── Traceback (most recent call last) ─────────╮ │",
             "│ │ /tmp/pl/pylibs.py:51 in _fail                          │ │",
             "│ ╰────────────────────────────────────────────────────────╯ │",
             "│ ValueError: worker 0 failed to load shard 0                │",
             "╰────────────────────────────────────────────────────────────╯",
             "",
             "╭──────────────────────── Sub-exception #2 ──────────────────╮",
             "│ ValueError: worker 1 failed to load shard 7                │",
             "╰────────────────────────────────────────────────────────────╯",
             "I1201 17:44:19.920691  68169 trainer.cc:587] step 7369 took 1.455s"]
    assert spans(group) == [(0, 14), (15, 15)]
    assert spans([t for t in group if t]) == [(0, 12), (13, 13)]  # (an agent that drops empty lines)


def test_rich_panel_ends_where_no_exception_line_follows_it():
    # rule: MODES rich_exc takes only the exception line (or another panel) after the bottom edge: a
    # plain line there is the next output, not a message
    texts = ["╭───────────────────── Traceback (most recent call last) ──────────────────────╮",
             "│ /tmp/pl/pylibs.py:19 in load_batch                                           │",
             "╰──────────────────────────────────────────────────────────────────────────────╯",
             "Saving model checkpoint to /ckpt/step_1200"]
    assert spans(texts) == [(0, 2), (3, 3)]


# loguru's default sink (backtrace=True, diagnose=True): "> File" marks the frame that caught it, each
# frame is set off by a blank line, and the values are drawn under the source line with "│" and "└"
LOGURU = [
    "2026-12-01 20:53:18.633 | ERROR    | __main__:s_loguru_exception:122 - step 1200 failed, skipping batch",
    "Traceback (most recent call last):",
    "",
    "> File \"/tmp/pl/pylibs.py\", line 120, in s_loguru_exception",
    "    FAILURES[fail]()",
    "    │        └ 'plain'",
    "    └ {'plain': <function train at 0x7f0184ccfba0>}",
    "",
    "  File \"/tmp/pl/pylibs.py\", line 24, in step",
    "    return load_batch(i) * scale",
    "           │          │    └ 0.5",
    "           │          └ 0",
    "           └ <function load_batch at 0x7f0184ccf380>",
    "",
    "KeyError: 'labels'",
    "2026-12-01 20:53:19.001 | INFO     | __main__:train:130 - step 1201 loss=2.3104",
]


def test_loguru_diagnose_values_stay_in_their_traceback():
    # rule: STREAM_PREFIXES "gutter" only at column 1-2: loguru's "│" lines under a source line (indented
    # by 4, 3 after a "[rank3]:" that takes a space) are the frame's, not another writer's
    assert spans(LOGURU) == [(0, 14), (15, 15)]
    assert spans(["[rank3]:" + t if t else t for t in LOGURU]) == [(0, 14), (15, 15)]


def test_a_build_tools_gutter_is_still_a_prefix():
    # rule: STREAM_PREFIXES "gutter" (pip's subprocess box): the lines under it are the child's own, and
    # a frame list under the gutter is merged as without it
    texts = ["  │ stack backtrace:",
             "  │    1:        0x110d32a18 - sys::backtrace::tracing::imp::write::hbf9013",
             "  │    2:        0x110d35de5 - panicking::default_handler::h0b4591",
             "done."]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_a_redrawn_line_keeps_the_relays_prefix():
    # rule: decode.final_redraw keeps a stream prefix written before the redraws (tqdm.write's record
    # over a bar, under torchrun's tee), so the record stays under its process's key
    assert final_redraw("[rank3]:\r 33%|###3      | 1/3 [00:00<00:00]\r" + " " * 40 +
                        "\r2026-12-01 20:53:21,075 - trainer - ERROR - step 1 failed") == \
        "[rank3]:2026-12-01 20:53:21,075 - trainer - ERROR - step 1 failed"
    assert final_redraw("(RayWorkerWrapper pid=41003, ip=10.0.0.5) \r 5%|x|\rrecord") == \
        "(RayWorkerWrapper pid=41003, ip=10.0.0.5) record"
    assert final_redraw(" 33%|###3      | 1/3\rrecord") == "record"  # a bar is no prefix
    # (a prefix the relay colours keeps its colours)
    assert final_redraw("\x1b[36m(RayWorkerWrapper pid=41233, ip=10.0.0.5)\x1b[0m \r 5%|x|\rrecord") == \
        "\x1b[36m(RayWorkerWrapper pid=41233, ip=10.0.0.5)\x1b[0m record"


def test_colours_a_forced_terminal_writes_are_read_past():
    # rule: merger._ANSI (SGR colours, OSC 8 links are left out of the decision, kept in the message):
    # rich.traceback under FORCE_COLOR=1
    texts = ["\x1b[31m╭─\x1b[0m\x1b[31m────────────────────\x1b[0m\x1b[31m \x1b[0m\x1b[1;31mTraceback \x1b[0m"
             "\x1b[1;2;31m(most recent call last)\x1b[0m\x1b[31m \x1b[0m\x1b[31m─────────────────────\x1b[0m"
             "\x1b[31m─╮\x1b[0m",
             "\x1b[31m│\x1b[0m \x1b[2m/tmp/pl/\x1b[0m\x1b[1mpylibs.py\x1b[0m:19 in load_batch"
             "                                           \x1b[31m│\x1b[0m",
             "\x1b[31m│\x1b[0m \x1b[31m❱ \x1b[0m 19 \x1b[2m│   \x1b[0m\x1b[94mreturn\x1b[0m \x1b[1;4mdata[\x1b[0m"
             "\x1b[1;4;33m\"\x1b[0m\x1b[1;4;33mlabels\x1b[0m\x1b[1;4;33m\"\x1b[0m\x1b[1;4m]\x1b[0m[i]"
             "                                           \x1b[31m│\x1b[0m",
             "\x1b[31m╰──────────────────────────────────────────────────────────────────────────────╯\x1b[0m",
             "\x1b[1;91mKeyError: \x1b[0m\x1b[32m'labels'\x1b[0m",
             "\x1b[2;36m[12/01/26 21:02:11]\x1b[0m\x1b[2;36m \x1b[0m\x1b[34mINFO    \x1b[0m step 1201 loss=2.3104"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_a_panel_after_a_cpython_traceback_is_not_its_own():
    # rule: MODES rich_msg (only Rich's exception line is followed by "Sub-exception" and untitled
    # panels): traceback.py never prints one, so a panel after its exception line is the program's
    texts = ["Traceback (most recent call last):",
             '  File "/tmp/pl/pylibs.py", line 19, in load_batch',
             '    return data["labels"][i]',
             "KeyError: 'labels'",
             "╭──────────────────────────────────────╮",
             "│ run summary: 1200 steps, 3 restarts  │",
             "╰──────────────────────────────────────╯"]
    assert spans(texts) == [(0, 3), (4, 6)]



def test_accelerates_state_repr_is_one_event_under_its_record_or_printed():
    # rules: TOKENS accel_state / accel_field, STARTS "accel_state", MODES "accel_state" (the field lines
    # of PartialState/AcceleratorState.__repr__; its trailing newline leaves a blank line, which ends it)
    texts = ["12/01/2026 10:00:00 - INFO - __main__ - Distributed environment: MULTI_GPU  Backend: nccl",
             "Num processes: 4",
             "Process index: 0",
             "Local process index: 0",
             "Device: cuda:0",
             "",
             "Mixed precision type: bf16",
             "12/01/2026 10:00:01 - INFO - __main__ - ***** Running training *****"]
    assert spans(texts) == [(0, 4), (6, 6), (7, 7)]
    # (printed, older accelerate with "Use FP16 precision", and DeepSpeed's config on its own field line)
    texts = ["Distributed environment: DEEPSPEED  Backend: nccl",
             "Num processes: 2",
             "Process index: 1",
             "Local process index: 1",
             "Device: cuda:1",
             "Use FP16 precision: False",
             "ds_config: {'train_batch_size': 8}",
             "Killing subprocess 5571"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_a_field_line_not_under_accelerates_state_stays_alone():
    # rule: accel_field is read only inside "accel_state": "Device: cuda:0" after another record is a
    # record of its own
    texts = ["12/01/2026 10:00:00 - INFO - __main__ - model loaded", "Device: cuda:0", "Num processes: 4"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_nemos_formatter_indents_every_further_line_of_a_record():
    # rules: CONT_INDENT h_nemo (BaseFormatter, tornado's LogFormatter: formatted.replace("\n", "\n    ")):
    # a captured warning's source line, shifted by the indent, and the warning's trailing newline (the
    # indent alone) are the record's; so is the traceback of exc_info
    texts = ["[NeMo W 2024-03-20 18:55:16 nemo_logging:349] /x/generic.py:311: UserWarning: f is deprecated.",
             "      torch.utils._pytree._register_pytree_node(",
             "    ",
             "2024-03-20 18:55:16.268871: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow"]
    assert spans(texts) == [(0, 2), (3, 3)]
    texts = ["[NeMo E 2024-03-20 18:55:17 exp_manager:12] Could not restore the checkpoint",
             "    Traceback (most recent call last):",
             '      File "/x/exp_manager.py", line 12, in restore',
             "        ckpt = torch.load(path)",
             "    FileNotFoundError: [Errno 2] No such file or directory: 'last.ckpt'",
             "    ",
             "[NeMo I 2024-03-20 18:55:18 exp_manager:20] Starting from scratch"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_rich_handlers_wrapped_message_lines_are_its_records_whatever_they_read():
    # rules: CONT_INDENT h_rich, h_rich_same_time (LogRender's grid: the wrapped message under the empty time
    # and level columns, 29 blanks); a wrapped line that reads "INFO: ..." (torch's record relayed as the
    # message) is the record's, not a record of its own; a blank time column with a level is the next record
    texts = ["[06/16/22 13:30:42] INFO     colossalai - torch.distributed.distributed_c10d -  ",
             "                             INFO: Added key: store_based_barrier_key:1 to store",
             "                             for rank: 0                                        ",
             "                    INFO     colossalai - torch.distributed.distributed_c10d -  ",
             "                             INFO: Rank 0: Completed store-based barrier for    ",
             "                             key:store_based_barrier_key:1 with 1 nodes.        ",
             "[06/16/22 13:30:43] WARNING  colossalai - colossalai - WARNING: no config given"]
    assert spans(texts) == [(0, 2), (3, 5), (6, 6)]


def test_tornados_head_and_its_indented_lines():
    # rules: HEADS tornado ("[E 240501 12:00:00 web:2246] ", Jupyter Server's "[I 2024-05-01 12:00:00.123
    # ServerApp] "), CONT_INDENT h_tornado
    texts = ["[E 240501 12:00:00 web:2246] Uncaught exception GET /api (::1)",
             "    HTTPServerRequest(protocol='http', host='localhost:8888', method='GET', uri='/api')",
             "    Traceback (most recent call last):",
             '      File "/x/web.py", line 1704, in _execute',
             "        result = await result",
             "    KeyError: 'kernel'",
             "[I 2024-05-01 12:00:00.123 ServerApp] 500 GET /api (::1) 3.20ms"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_a_line_without_the_formatters_indent_is_not_its_records():
    # rule: CONT_INDENT takes only lines that start with the whole indent; after any other record the
    # same line is read by its shape
    texts = ["[NeMo W 2024-03-20 18:55:16 nemo_logging:349] /x/generic.py:311: UserWarning: f is deprecated.",
             "  torch.f(",
             "Epoch 1:   0%|          | 0/10 [00:00<?, ?it/s]"]
    assert spans(texts) == [(0, 1), (2, 2)]
    texts = ["2024-03-20 18:55:16 INFO train - step 1", "    Traceback (most recent call last):",
             '      File "/x/train.py", line 3, in main']
    assert spans(texts) == [(0, 0), (1, 2)]


def test_a_file_keeps_the_formatters_indent_alone_as_a_line_of_its_record(tmp_path):
    # rule: parse_files reads a line of blanks as it is (pipeline ``_decode``), as a Kafka record carries
    # it, so the indent alone that ends NeMo's captured warning stays the record's last line
    log = tmp_path / "nemo.log"
    log.write_text("[NeMo W 2024-03-20 18:55:16 nemo_logging:349] /x/generic.py:311: UserWarning: f is deprecated.\n"
                   "      torch.f(\n    \nnext line\n")
    events = [e for e in parse_files([log], default_ts_ms=0) if e.get("kind") != "metric"]
    assert [e["line_count"] for e in events] == [3, 1]


def test_a_yaml_dump_a_record_announces_after_a_blank_line_is_its_body():
    # rules: TOKENS yaml_key, MODES "body" after_blank yaml_key -> "yaml" (torchtune logs
    # "Running X with resolved config:\n\n" + OmegaConf.to_yaml(cfg) as one record)
    texts = ["INFO:torchtune.utils._logging:Running FullFinetuneRecipeSingleDevice with resolved config:",
             "",
             "batch_size: 4",
             "checkpointer:",
             "  _component_: torchtune.training.FullModelHFCheckpointer",
             "  checkpoint_files:",
             "  - model.safetensors",
             "clip_grad_norm: null",
             "",
             "INFO:torchtune.utils._logging:Model is initialized with precision torch.bfloat16."]
    assert spans(texts) == [(0, 7), (9, 9)]


def test_key_value_lines_after_a_blank_line_under_another_record_stay_alone():
    # rule: only a record whose message announces its body (a trailing ':') takes the dump; a blank line
    # ends the dump, and a line of text that is not a key ends it too
    texts = ["INFO:train:step 10 done", "", "batch_size: 4", "clip_grad_norm: null"]
    assert spans(texts) == [(0, 0), (2, 2), (3, 3)]
    texts = ["INFO:train:resolved config:", "", "batch_size: 4", "Starting training now", "epochs: 3"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 4)]
