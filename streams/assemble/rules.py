"""Multiline rules as data: the grammar of each printer, as tables ``merger.py`` interprets.

A line is read in three layers, each a table of patterns (the merger tries, for a line, only the
patterns that can start with its first character; see ``firstchar.py``):

1. **Stream prefixes** (``STREAM_PREFIXES``): what a relay or a launcher puts before every line of a
   process's output (``[rank3]:``, ``(RayWorkerWrapper pid=1, ip=...)``, syslog's
   ``Aug 20 05:33:17 host prog[42]:``, a collector's timestamp). Their stable part is the *key*:
   lines of one key are merged together, interleaved keys apart. Volatile parts (times) are not.
2. **Record heads** (``HEADS``): what a logging library puts before a record's message (Python
   logging, glog, vLLM, Ray, log4j...). A line with a head is a record of its own unless the
   grammar of the open block claims it. Heads marked ``repeats`` are written by formatters that
   repeat the same head on every line of one record (vLLM's NewLineFormatter, torch._logging), so
   an identical head continues the record; for those in ``EVERY_LINE`` a line without the head is
   not part of the record.
3. **Tokens** (``TOKENS``): the shape of the body left after prefix and head (``Traceback (most
   recent call last):``, ``\\tat ...``, ``frame #3: ...``, ``goroutine 7 [running]:``). Tokens are
   matched from the start of the body; leading blanks are part of some patterns because the
   printers indent them (``  File "..."``) and because pasted logs are often shifted by a space.

Each multiline kind is a small state machine (``MODES``): for the current state and the line's token
an action and the next state. Actions:

- ``cont``: the line continues the block when it is not a record of its own (no new head, not one
  of ``RECORDS``) -- the evidence used where a printer writes free text (exception messages);
- ``cont!``: the grammar says the line belongs here whatever it looks like (frames, ``Caused by:``);
- ``deeper``: continue when indented deeper than the block's first line;
- ``after_colon``: ``cont`` when the block's last line ends with ``:`` (it announces more), else ``end``;
- ``list_colon``: as ``after_colon``, when that last line is not a ``- `` item itself (an item of another
  list, or a record whose first field is ``-``, as BGL's alert flag);
- ``announce``: continue when the block's first line announces what follows (level WARN and up,
  ``Exception in ...``, a trailing ``:``, the same repeated head), else start a new block;
- ``own``: ``cont!`` when the block's line is not a record of its own (the printer's own message above
  what it prints next), else ``end``;
- ``expect``: ``cont!`` when the block announces the line (as ``announce``), else ``tent`` (frames confirm it);
- ``src_above``: ``cont!`` when the block is one line without a head indented deeper than this one (a
  frame's source line above the next frame), else as ``announce``;
- ``exc_next``: ``cont`` when the block is one exception line whose message announces its next line
  (``EXC_CAUSE_NEXT_RE``), else ``end``;
- ``under_exc``: ``cont!`` when the block is one exception line (``EXC_LINE_RE``): a line its printer writes
  right under it (a MultiError's details), else ``end``;
- ``last``: append and close (the printer's known last line: ``Extension modules:``, a sanitizer's
  ``SUMMARY:``, the closing rule of a box);
- ``tent``: hold the line tentatively: a later ``cont!``/``last`` confirms it, anything else
  releases it and it is read again on its own (a Java exception message before its ``at`` frames,
  a warning's message before its source line, a framed table before its closing rule);
- ``side``: a line from another writer inside a report with a known shape (kernel printk): emitted
  alone, the block stays open;
- ``end``: the line is not part of the block: the block closes and the line starts the next one;
- ``confirm``: as ``end``, but the line confirms the lines held tentatively: they are the block's (a
  report whose printer writes its own closing line in another write: Hydra's hint after its compact error).

After held blank lines the ``after_blank`` table applies (chained tracebacks, thread dumps); a mode
without one ends at a blank line. What continues after a blank line also continues without it:
some agents (rsyslog's imfile, the OpenTelemetry Collector's filelog) send no record for an empty
line, and the events must not depend on the agent. A token missing from a table takes the mode's ``any`` entry when
it has one, else falls back to ``text``/``indent`` unless it starts blocks of its own (``STARTS``),
in which case the block ends.

A mode may also say: ``tent_heads`` (a line with a record head of its own is held too when the held
line before it ends with ':': a Java exception message that goes on with lines a logger wrote, as
Spring Boot's "Logback configuration error detected: " + logback's "ERROR in <origin> - <message>"
status lines), ``max_tent`` (how many lines it holds at most), ``any_lead`` (its ``any`` entry takes only lines
that start so, a string or a tuple of them), ``any_max_bytes`` (its ``any``
entry takes lines only while the block is smaller: free text whose printer caps its size), ``ends_at_blank`` (when it
closes, held lines before the first held blank line are its own: a free-text message that a blank
line ended), ``depth`` (it ends where the JSON brackets it counts close; ``depth0``: brackets open
before its first line), ``rows`` (a line its own shapes read whole is its row even where it reads as
behind a stream prefix: a table whose padded first column and " | " look like docker compose's prefix),
``wrap_end`` (a line not ending so is hard-wrapped onto the next), ``same_rule`` (its ``last`` rule must repeat
the rule its first line drew), ``cross``
(an unprefixed line may continue it under another writer's prefix), ``headed`` (a line without a
record head that this pattern finds ends it, but for what its ``after_blank`` table names: lines a
message quotes from a log file), ``blank_own`` (the blank line before the line that enters it is the printer's own,
no sign of a source that doubles newlines), ``prose_ends`` (a line of text in the first person, ``PROSE_RE``, ends it:
a person's words under a paste, not its printer's), ``kind_override``.

The patterns use no look-around and no back-references, so that a native engine (Rust ``regex``)
can read the same tables.
"""

from __future__ import annotations

import re

# -- 1. stream prefixes ----------------------------------------------------------------------------
# (name, pattern, key, gate): key "all" (the prefix is the key), "none" (volatile: times), or "k" (the
# named subgroup ``k_<name>`` is the key); gate: a literal the line must contain for the pattern to be
# tried (a cheap test before a pattern that could start with any word). "splice" prefixes (a line
# left unfinished by another writer) are dropped only when a prefixed or headed line follows them
# (``SPLICE_NEXT``).
# Prefixes in ``RELAY_RECORDS`` are written by relays (syslog, the kernel's printk); where the writer
# makes every line a record of its own (``RELAY_RECORD_WRITERS_RE``) only a printer's grammar joins
# such lines, never indentation.
# C's ctime() without its newline, as launchers stamp a child's lines with it: "Thu Aug 29 21:45:09 2019"
_CTIME = (r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d "
          r"\d\d:\d\d:\d\d \d{4}")
STREAM_PREFIXES: tuple[tuple[str, str, str, str | None], ...] = (
    # torchrun/accelerate with --tee or local_ranks_filter prefix every line: "[rank3]:", "[default3]:". The
    # elastic agent writes log_line_prefix_template, by default "[${role_name}${local_rank}]:" (local_elastic_agent.py
    # LocalElasticAgent's docstring: "[trainer0]: foobar"): the role is whatever --role or a launcher names it
    # ("default", "rank", "trainer", "worker"), a word before the rank
    ("rank", r"\[[A-Za-z][A-Za-z_-]*\d+\]: ?", "all", None),
    # Ray's log monitor prefixes each worker line "(Name pid=N, ip=A)"; vLLM V1 "(VllmWorker rank=1 pid=N)";
    # SkyPilot names its Ray tasks "task," / "worker1, rank=1," (cloud_vm_ray_backend.py name_str) and its
    # own streaming prefix is f"({task_name}, pid={pid}) " (log_lib run_with_log): "(task, pid=N)",
    # "(worker1, rank=1, pid=N, ip=A)"; vLLM's _add_prefix writes f"({worker_name} pid={pid}) " whatever the name
    # is, of more than one word too: "(VllmWorker TP1 pid=N)", "(EngineCore_DP0 pid=N)". Ray's print_worker_logs
    # writes f"({task_name} pid=..)" with the task's name as Ray Data gives it: operators joined by "->", each
    # with its function in parentheses ("(ReadRange->MapBatches(<lambda>) pid=N)", "(MapBatches(f) pid=N)")
    ("ray", r"\((?:(?:[\w.<>-]|\([^()\s]*\))+,? ){0,3}(?:(?:pid|rank|ip|node_id|actor_id)=[\w.:-]+,? ?)+\) ?",
     "all", None),
    ("raylet", r"\((?:raylet|gcs_server)(?:, ip=[\d.]+)?\) ?", "all", None),
    # Ray's driver prints the autoscaler's events as f"({pid}) {line}" with pid "autoscaler +{time_string()}"
    # (_private/worker.py print_worker_logs: "(autoscaler +11s) ", older releases "(scheduler +13s) "): the time since
    # the driver started is volatile, the autoscaler is the writer
    ("ray_events", r"\((?P<k_ray_events>autoscaler|scheduler) \+[\dhms.]+\) ", "k", None),
    # Slurm srun --label: the task id before every line, right-aligned to the widest id (slurm's
    # _build_label "%*d: ", "P%u %*d: " in a heterogeneous job): "0: ", " 3: ", "12: ". A padded id
    # is read to width 3 and only at the start of a line (``LINE_START_PREFIXES``): Rust's backtrace
    # frames are "{:>4}: ", and a prefix before them ("[rank3]: ") may have taken one blank
    ("srun", r"(?:P\d+ )?\d{1,5}: ", "all", None),
    ("srun_padded", r"(?:P\d+ )?(?: \d{1,2}|  \d): ", "all", None),
    # pdsh (DeepSpeed's multi-node launcher runs it) prefixes each line with "host: ": a host name as
    # clusters name them, lower case with a digit ("worker-1", "gpu-node017.cluster"), or an IPv4
    # address, so that an exception line ("boto3.exceptions.S3UploadFailedError: ") is not one
    ("pdsh", r"(?P<k_pdsh>[a-z][a-z.-]*\d[a-z0-9.-]*|\d{1,3}(?:\.\d{1,3}){3}): ", "k", None),
    # torch_xla's xla_dist relays each TPU worker's lines through its logger, formatted
    # '%(asctime)-12s %(clientip)s [%(ordinal)s] %(message)s' with datefmt '%Y-%m-%d %H:%M:%S'
    # (xla_dist.py _get_logger): the time is volatile, the worker's address and ordinal are the writer
    ("xla_dist", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (?P<k_xla_dist>\d{1,3}(?:\.\d{1,3}){3} \[\d+\]) ", "k", None),
    # docker buildx / BuildKit plain progress: "#8 12.34 " (the step, then seconds) before a step's output
    ("buildkit", r"(?P<k_buildkit>#\d+) \d+\.\d+ ", "k", None),
    # valgrind writes "==PID== " before every line of its own output (m_libcassert/m_debuglog vmessage): the
    # prefix alone closes a message (a blank line of that writer); each message is then read by its shape
    # (an error's header and its stacks indented under it). (The sanitizers' "==PID==ERROR:" has no blank.)
    # The prefix alone may come without its blank: copies and editors trim a line's trailing blanks.
    ("valgrind", r"==\d+==(?: |\Z)", "all", None),
    # Open MPI's mpirun --tag-output: "[1,0]<stdout>:" (orte/mca/iof/base/iof_base_output.c, PRRTE 1-2 the same:
    # "[%s,%s]<%s>:", local jobid and rank; with --timestamp-output ctime() glued before it, "%s[%s,%s]<%s>:"). Open MPI
    # 5 writes it through PMIx (openpmix src/common/pmix_iof.c write_output_line): "[%s,%s]<%s>: " with the jobid after
    # the nspace's '@' or the whole nspace ("[prterun-host-4242@1,0]<stdout>: "), "--output tag-detailed" adds
    # "[host:pid]", and a timestamp is ctime() in brackets before the tag. The stream may be stddiag. The time is
    # volatile; the tag is the writer
    ("mpi", rf"(?:{_CTIME}|\[{_CTIME}\])?(?P<k_mpi>\[[^\s,\[\]]+,\d+\](?:\[[^\s:\[\]]+:\d+\])?"
            r"<(?:stdout|stderr|stddiag)>:) ?", "k", None),
    # the same launchers' --timestamp-output without a tag: ctime() and the stream ("%s<%s>:"; PMIx: "[%s]<%s>: "),
    # every rank's lines under one stamp, the time volatile
    ("mpi_time", rf"(?:{_CTIME}|\[{_CTIME}\])<(?:stdout|stderr|stddiag)>: ?", "none", None),
    # horovodrun's own relay (Gloo, horovod.run's function mode, horovod.spark; runner/common/util/
    # safe_shell_exec.py prefix_connection): "{time}[{index}]<{stream}>:", the time time.asctime() writes
    # ("Fri Sep 25 16:52:57 2020") with --prefix-output-with-timestamp, else nothing; the index is the writer
    # (PMIx's "--output rank" writes the same shape, "[%s]<%s>: ", its timestamp ctime() in brackets before it)
    ("horovod", rf"(?:{_CTIME}|\[{_CTIME}\])?(?P<k_horovod>\[\d+\]<(?:stdout|stderr|stddiag)>:) ?", "k", None),
    # pm2 logs: the app's id and name, padded to the widest name, then "| " before every line of its output
    # ("0|MINER  | "; lib/API/Log.js writes `${id}|${name} | `). Read as a relay's stamp, not as a writer:
    # pastes from it often take a line's text from after the prefix, the rest of the event with it
    ("pm2", r"\d+\|[^\s|]+ *\| ", "none", "|"),
    # docker compose: "web-1  | ", "elasticsearch_1  | ", "elk_elasticsearch | " (names hold '_' or '-'),
    # and any name padded to the column of the longest one ("tests               | ")
    # (the part before the first '_' or '-' holds neither: else each '_' of a long word was tried as the first)
    # (compose writes the prefix before an empty line too, "loki-1  | ", whose blank at the end a copy or an
    # editor trims: the prefix alone is that writer's empty line)
    ("compose", r"(?P<k_compose>(?:[^\W_]|\.)*[_-][\w.-]*|[\w.-]+ ) +\|(?: |\s*\Z)", "k", " |"),
    # kubectl logs --prefix: "[pod/name/container] "
    ("kubectl", r"\[pod/[\w.-]+/[\w.-]+\] ", "all", None),
    # SerenityOS's kernel dbgln: "[#cpu Process(pid:tid)]: " (AK/Format.cpp vdbg)
    ("serenity", r"\[#\d+ [^\s()\[\]]+\(\d+:\d+\)\]: ", "all", None),
    # rsyslog's RSYSLOG_FileFormat and journalctl -o short-iso: the same writer after an RFC 3339 time,
    # with its pid (or the kernel's): after such a time, as docker and kubectl write it, "word word: "
    # is as often the line's own text ("ERROR shard-manager: ", "Check failed: ")
    ("syslog_iso", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) "
                   r"(?P<k_syslog_iso>\w[\w.-]* (?:[^\s:\[]+\[\d+\]|kernel)): ", "k", None),
    # Heroku's logplex (heroku logs, a log drain): "{RFC 3339 time} {source}[{dyno}]: " before every line of a
    # dyno's output ("app[web.1]: ", "heroku[router]: "); the time is volatile, source and dyno are the writer
    ("heroku", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) "
               r"(?P<k_heroku>(?:app|heroku)\[[\w.-]+\]): ", "k", None),
    # Cloud Foundry's cf logs: three blanks, the time with hundredths and a zone without colon, the source in
    # brackets ("[APP/PROC/WEB/0]", "[RTR/1]", "[STG/0]") and the stream (OUT, ERR) before every line; the
    # source and stream are the writer
    ("cf_logs", r" {0,3}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d{4} "
                r"(?P<k_cf_logs>\[[A-Z]+(?:/[\w.-]+)*\] (?:OUT|ERR)) ", "k", None),
    # a logger that stands in for a stream: FastChat's StreamToLogger (fastchat/utils.py build_logger) sets
    # sys.stdout and sys.stderr to loggers named "stdout" and "stderr", so every line a program prints comes
    # out as a record "%(asctime)s | %(levelname)s | %(name)s | %(message)s" (datefmt "%Y-%m-%d %H:%M:%S"):
    # a relay's prefix whose writer is the stream, not a record head (a traceback printed to stderr is one
    # event; prints of the same second stay apart by their own grammar)
    ("stream_logger", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \| "
                      r"(?P<k_stream_logger>[A-Z]+ \| std(?:out|err)) \| ", "k", None),
    # Airflow's task runner relays each line of the task's subprocess as an INFO record of its own logger
    # (base_task_runner.py _read_task_logs: "Job %s: Subtask %s %s"; Airflow 1.9 "Subtask: %s") under the
    # record format "[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s": the time is
    # volatile, the job and task are the writer, so a traceback the task printed is one event
    ("airflow_subtask", r"\[\d{4}-\d\d-\d\d[^\]]{0,32}\] \{\{?base_task_runner\.py:\d+\}\}? INFO - "
                        r"(?P<k_airflow_subtask>Job \d+: Subtask [\w.-]+|Subtask:) ", "k", "Subtask"),
    # Airflow's KubernetesPodOperator relays each line of a pod's container log as an INFO record of its pod
    # manager, self.log.info("[%s] %s", container_name, message) (providers/cncf/kubernetes/utils/pod_manager.py
    # fetch_container_logs), under the same record format: the time is volatile, the container is the writer,
    # so a stack the container printed (a Spark driver's, a training script's traceback) is one event
    ("airflow_pod", r"\[\d{4}-\d\d-\d\d[^\]]{0,32}\] \{\{?pod_manager\.py:\d+\}\}? INFO - "
                    r"(?P<k_airflow_pod>\[[\w.-]+\]) ", "k", "pod_manager.py"),
    # Determined's trial logs (det trial logs; master/internal/db/postgres_trial_logs.go TrialLogs): the time in
    # brackets, then the container id's first 8 characters, " [rank=N]" where the rank is known, " || " and the
    # line (a level and ": " where the record had one). The time is volatile (read as "rfc3339" before this);
    # container and rank are the writer
    ("determined", r"(?P<k_determined>[0-9a-f]{8}(?: \[[\w=]+\])?) \|\| ", "k", " || "),
    # a collector's or docker's RFC 3339 time before every line (docker logs -t, kubectl --timestamps): one blank
    # after it (PREFIX_NOT_BEFORE: not a time padded by more blanks to a level word)
    ("rfc3339", r"\[?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\]? ", "none", None),
    # Go's log package with its standard flags (log.LstdFlags: Ldate|Ltime, Lmicroseconds adds ".uuuuuu") writes
    # "2006/01/02 15:04:05 " before each message: launchers and job runners written in Go that relay a child's
    # output with log.Print put it before every line. A message of several lines has it on its first only,
    # the time is volatile: the lines after it are read as unprefixed lines of the same stream
    ("golog", r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? ", "none", None),
    # the kernel's printk time (dmesg, serial consoles)
    ("dmesg", r"\[ *\d+\.\d{6}\] ", "none", None),
    # syslog RFC 3164 / journalctl short (short-precise: with a fraction): the time is volatile,
    # "host prog[pid]" is the writer (a daemon's tag may have no pid; a copy may leave the host out; a tag
    # is alphanumeric, RFC 3164 4.1.3: c10's "frame #3: ..." behind moreutils' ts is no "host tag: "; a host
    # before a tag without a pid is written as the machine names itself, in lower case as clusters name
    # them: a tqdm bar's description "Epoch 0: ", Lightning's "Total params: 161" behind ts are no "host tag: ")
    # journalctl's short formats write the month with strftime's "%b" in the reader's LC_TIME locale: "Dez",
    # "окт", "nov.", "7月" (format_timestamp in journalctl's output-mode code), so the month is any short word
    # of letters (with the abbreviation's dot) or a number with CJK's month sign; the writer's tag after it
    # still says it is such a line; the kernel's tag is also taken without its host (a copy of journalctl -k
    # with the machine's name cut out, and before it a host of any case: the tag alone says what the line is); a
    # copy that blanks the host out of journalctl's "<time> <host> <ident>[<pid>]: " (output_short in systemd's
    # logs-show.c writes the host between two blanks) keeps both blanks: "Nov 08 07:06:40  ollama[11902]: ", taken
    # before a tag that has its pid
    ("syslog", r"(?:[^\W\d_]{3,5}\.?|\d{1,2}[月월]) [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? "
               r"(?P<k_syslog>(?:\w[\w.-]* | )?[^\s:\[]+\[\d+\]|[a-z0-9][\w.-]* [^\s:\[#][^\s:\[]*"
               r"|(?:\w[\w.-]* )?kernel): ",
     "k", None),
    # the same time alone, as test runners and relays without a host write it before every line
    ("month_time", r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)? ", "none",
     None),
    # Jenkins' Timestamper plugin on a freestyle job's console: the system clock's time of day before every
    # line (its default format "'<b>'HH:mm:ss'</b> '", copied from the page as the time and two blanks); a
    # logger's own time of day is followed by one blank and a level
    ("timestamper", r"\d\d:\d\d:\d\d  ", "none", None),
    # Rancher's container log viewer, copied: each line's time in the user's date and time formats
    # (defaults "ddd, MMM D YYYY" and "h:mm:ss a"), then " | " and the line (the time is volatile; the
    # separator is the key: the viewer's lines are one stream, a line without it another writer's)
    ("rancher", r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d? \d{4} "
                r"\d\d?:\d\d:\d\d [ap]m (?P<k_rancher>\|) ", "k", None),
    # wandb's terminal log prefixes every line of its messages with "wandb: "
    ("wandb", r"wandb: ", "all", None),
    # test runners and launchers that relay a child's streams label each line with the stream
    # (accelerate's execute_subprocess_async: "stderr: ", "stdout: ")
    ("stdio", r"(?:stdout|stderr): ", "all", None),
    # a box-drawing gutter some build tools draw, indented, before every line of a child's output
    # (mach, pip's "  │ exit code: 1": at column 2, 1 after a "[rank3]:" that took a space). A box's own "│"
    # lines start at column 0 (Rich's traceback box) or at the message column (20+) where RichHandler
    # indents it; loguru's diagnose (better_exceptions) draws "│"/"└" under the values of a frame's
    # source line, which traceback.py indents by 4 (3 after such a prefix)
    ("gutter", r" {1,2}\u2502 ", "all", None),
    # a tqdm bar written without a newline, spliced before the next writer's line
    ("tqdm", r" *\d{1,3}%\|[^|]*\| *\d+/\d+ \[[^\]]*\]", "splice", None),
)

# First lines that their printers write at column 0, whatever came before: the Go runtime's "panic: " and
# "fatal error: " (printpanics, fatalthrow) and a goroutine's header (traceback.go goroutineheader), CPython's
# "Traceback (most recent call last):" (traceback.py), the JVM's uncaught-exception report (ThreadGroup
# uncaughtException: 'Exception in thread "main" '). Where such a line comes indented by a few blanks, a copy
# (a Markdown code block indented by four) put them before every line of the source, as before a record head.
COLUMN0_STARTS_RE = re.compile(r"panic: |fatal error: |goroutine \d+ \[|Traceback \(most recent call last\):"
                               r"|Exception in thread \"")
# The same, behind a Markdown inline code's or code fence's backticks that a paste glued to its first line
# ("`panic: runtime error: ..", "`[2018-12-19 01:11:50,998] ERROR .."): left unpaired on the line (a line
# that opens and closes inline code, "`fa3F@0.0.0` is not supported because:", is its program's own text),
# and only where a record head or such a first line follows them
GLUED_TICKS_RE = re.compile(r"`{1,3}(?=[^`\s])")

# Writers whose prefix alone closes each of their messages, a one-line message too (valgrind's vmessage ends
# every message with "==PID== " and nothing after it): there the prefix alone is the message's last line. A
# prefix alone after another writer's line of its own is that writer's empty line, a line of its own (Ray's
# log monitor prints a worker's empty line as its prefix alone).
PREFIX_ALONE_ENDS_RE = re.compile(r"(?:^|\|)==\d+==$")

# -- 2. record heads -------------------------------------------------------------------------------
# (name, pattern, repeats). Each names the formatter that writes it. ``EVERY_LINE`` heads are written
# on every line of a record (a line without one is not part of it, unless the grammar says so).
# Most heads are instances of one grammar: a time stamp in one of the layouts loggers write, then
# fields (a level, a thread or logger in brackets, a pid, a file:line), then an optional logger name
# with its separator (" - ", ": ", " | "). ``_GENERIC`` below is that grammar; the named heads before
# it are formatters whose heads it does not cover or that carry a meaning of their own (repeated
# per line, a record that opens a mode).
_LVL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|SEVERE|FATAL|CRITICAL)"
# level words as formatters write them: log4j/logback/Python upper case, java.util.logging's FINE..,
# structlog's and zap's lower case
_LVLW = (r"(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|SEVERE|FATAL|CRITICAL|FINEST|FINER|FINE|CONFIG"
         r"|trace|debug|info|notice|warning|warn|error|fatal|critical)")
# date and time: ISO 8601 (any fraction, Z / offset; Airflow's log view writes "2022-11-09, 09:59:40 UTC"),
# Go's log "2006/01/02", US "01/02/06", Tomcat's "02-Jan-2006"
_DATE_TIME = (r"(?:\d{4}-\d\d-\d\d(?:(?:[ T]|, )\d\d:\d\d:\d\d(?:[.,]\d+)?(?: ?(?:Z|[+-]\d\d:?\d\d|UTC))?)?"
              r"|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?"
              r"|\d\d/\d\d/\d\d(?:\d\d)? \d\d:\d\d:\d\d(?:[.,]\d+)?"
              r"|\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d:\d\d(?:[.,]\d+)?)")
# a field after the time: a bracketed thread, logger or level (structlog pads it: "[info     ]"), Airflow's
# braced "{file.py:N}", a level
# (with celery's "/Process", with JUL's ':'), a glog-style level letter, a pid, Spring Boot's "---", a
# parenthesised component (Ray's "(raylet)"), a file:line[:func]
_FIELD = (rf"(?:\[[^\]]{{1,80}}\]|\{{[^}}]{{1,80}}\}}|{_LVLW}(?:/[\w.-]+)?[:\]]?|[DIWEFC]|\d+|---|\([\w.-]+\)"
          r"|[\w$/-]+\.[a-z]{1,4}:\d+(?::\w+)?[\]:]?)")
# a logger name and its separator ("com.x.Y - ", "o.s.b.SpringApplication   : ", "trainer.py:249 -- ",
# "[kafka-0-raft-io-thread]: "), written as runs so that a long word is not tried one character at a time
_LOGGER = r"(?:\[[^\]]{0,40}\]|[\w.$<>/-])[\w.$<>/-]*(?:\[[^\]]{0,40}\][\w.$<>/-]*)* *(?:-{1,2}|:|\|)"
# fields are separated by blanks, " - " or " | ", bracketed ones also by nothing ("[ts][ERROR][x] ")
_SEP = r"[ \t]+(?:[-|][ \t]+)?"
# (Python logging's "%(asctime)s:%(levelname)s: " glues the level to the time's colon: slurm-mail's
# "2022/06/20 17:28:01:ERROR: ")
_GENERIC = (rf"\[?{_DATE_TIME}(?:\]|:(?:{_LVLW}:)?)?(?:{_SEP}{_FIELD}|\[[^\]]{{1,80}}\])*(?:{_SEP}{_LOGGER})?"
            rf"{_SEP}")
# the same after a time of day alone, where a level must follow (logback's default
# "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - ", log4j's "%d{HH:mm:ss} %-5p ")
_TIME_LEVEL = (rf"\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?(?:[ \t]+\[[^\]]{{1,80}}\])?[ \t]+(?:\[ *{_LVLW} *\]|{_LVLW}:?)"
               rf"(?:[ \t]+{_LOGGER})?[ \t]+")
HEADS: tuple[tuple[str, str, bool], ...] = (
    # vLLM's and SkyPilot's NewLineFormatter write "%(levelname)s %(asctime)s %(filename)s:%(lineno)d] "
    # (SkyPilot: the level's first letter; newer vLLM: "[file.py:N]") on every line of a record
    ("vllm", rf"(?:{_LVL}|[DIWEFC]) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:\[[\w.-]+:\d+\]|[\w.-]+:\d+\]) ?", True),
    # torch._logging repeats "[ts] logger: [LEVEL] " on every line of a multi-line message (its
    # TorchLogsFormatter writes the compile's trace id after the time where one is current: "[ts] [0/0] logger: ")
    ("torch_logging", rf"\[\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}}\](?: \[[\w/.]{{1,20}}\])? [\w.]+: \[{_LVL}\] ?",
     True),
    # VS Code's Jupyter extension writes what a kernel writes to stderr and stdout into its output log, one log
    # line per chunk read: "Warn 12:06:22: StdErr from Kernel Process " (the level, the time, the stream)
    ("vscode_kernel", r"(?:Info|Warn|Error|Debug|Trace|Verbose) \d\d:\d\d:\d\d(?:\.\d+)?: "
                      r"Std(?:Err|Out) from Kernel Process ?", True),
    # glog / absl / klog: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ". torch._logging writes the same
    # shape and repeats it on every line of a multi-line record; with microseconds in it, two records
    # of one thread almost never share it, so an identical head is read as the same record. glog 0.6 and
    # later write the year before mmdd by default (FLAGS_log_year_in_prefix: "I20240501 10:00:00.123456 "); absl's
    # log (absl/log/internal/log_format.cc) writes Unix seconds until its time zone is loaded:
    # "E0000 00:00:1718032093.437234"
    # (the same written by C++ code, its head naming a C++ source: such a record never carries a Python
    # traceback, RECORD_MODES; absl-py's Python records name a .py file)
    ("glog_cc", r"[IWEF](?:(?:\d{4})?\d{4} \d\d:\d\d:\d\d|0000 00:00:\d{9,11})\.\d{6} +\d+ "
                r"[^\s\]:]+\.(?:cc|cpp|cxx|c|h|hpp|cu):\d+\] ?", True),
    # Triton's logger with --log-format=ISO8601 (triton common's logging.cc LogMessage, Format::kISO8601):
    # "YYYY-MM-DDThh:mm:ssZ L pid file:line] ", the time read first as a collector's (STREAM_PREFIXES "rfc3339"),
    # what is left the glog head without its time; to the second only, so the same head twice is two records
    ("triton_iso", r"[IWE] \d+ [^\s\]:]+\.(?:cc|cpp|h):\d+\] ?", False),
    # (torch._logging's TorchLogsFormatter, torch/_logging/_internal.py, writes the levels glog has not too: V for
    # DEBUG, the TORCH_LOGS artifacts' records "V1202 ... guards.py:N] [0/1] [__recompiles] ...", C for CRITICAL)
    ("glog", r"[VIWEFC](?:(?:\d{4})?\d{4} \d\d:\d\d:\d\d|0000 00:00:\d{9,11})\.\d{6} +\d+ [^\s\]:]+:\d+\] ?", True),
    # c10 logging without glog (torch): "[E207 01:29:36.730311765 ProcessGroupNCCL.cpp:616] " (ns); the
    # ERROR and FATAL ones apart (HEAD_STARTS)
    ("c10_error", r"\[[EF]\d{3,4} \d\d:\d\d:\d\d\.\d+ (?:\d+ )?[^\s\]:]+:\d+\] ?", True),
    ("c10", r"\[[IW]\d{3,4} \d\d:\d\d:\d\d\.\d+ (?:\d+ )?[^\s\]:]+:\d+\] ?", True),
    ("c10_short_error", r"\[[EF] [^\s\]:]+:\d+\] ?", False),
    ("c10_short", r"\[[IW] [^\s\]:]+:\d+\] ?", False),
    # UCX's fatal-error message (ucs/debug/assert.c ucs_fatal_error_message): the message is split at its
    # newlines and each line written by ucs_log_fatal_error as "[host:pid:thread:tid] file.c:line  <line>"
    # (ib_mlx5_log.c's completion error: the syndrome line, then the QP and WQE line): an identical head is
    # the same message; ucs_handle_error prints its backtrace after it (HEAD_STARTS, as TOKENS "ucx_fatal")
    ("ucs_fatal_line", r"\[[\w.-]+:\d+ *:\d+:\d+\] +[\w.-]+\.(?:c|cc|h|inl):\d+ +", True),
    # Ray's C++ RAY_LOG (src/ray/util/logging.cc): "[%Y-%m-%d %H:%M:%S,%e %L %P %t] (component) file.cc:N: "
    # (spdlog's %L is the level's letter: T, D, I, W, E, and C for the critical level RAY_LOG(FATAL) maps to)
    ("ray_cpp", r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [TDIWEFC] \d+ \d+\] (?:\([\w-]+\) )?[^\s:]+:\d+: ?", False),
    # dmlc-core's LogMessage (dmlc/logging.h; XGBoost's, MXNet's, TVM's C++ records): "[hh:mm:ss] file:line: "
    ("dmlc", r"\[\d\d:\d\d:\d\d\] [^\s:\]]+:\d+: ", False),
    # DeepSpeed's logger: "[ts] [LEVEL] [file.py:N:func] "
    ("deepspeed", r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] \[[A-Z]+\] \[[^\]]+\] ?", False),
    # transformers: "[LEVEL|file.py:N] ts >> "
    ("hf", rf"\[{_LVL}\|[\w.-]+:\d+\] \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d,\d{{3}} >> ?", False),
    # NeMo's logger: "[NeMo W 2023-01-18 07:39:29 file:27] "
    ("nemo", r"\[NeMo [DIWEC] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [\w.-]+:\d+\] ?", False),
    # TensorRT's sample logger (trtexec, samples/common/logging.h): "[%m/%d/%Y-%H:%M:%S] [E] ", the
    # severity letter (F, E, W, I, V), and "[TRT] " before what the TensorRT library itself logged
    ("trtexec", r"\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] \[[FEWIV]\] (?:\[TRT\] )?", False),
    # tornado.log.LogFormatter, whose format NeMo's copies: "[E 240501 12:00:00 web:2246] " (and Jupyter
    # Server's "[I 2024-05-01 12:00:00.123 ServerApp] " through the same formatter). JupyterHub's format
    # (jupyterhub/app.py _log_format_default) names the logger and the module: "[%(levelname)1.1s
    # %(asctime)s.%(msecs).03d %(name)s %(module)s:%(lineno)d]" ("[E 2018-12-11 10:07:53.170 JupyterHub
    # web:1670] "); optuna's colorlog format (optuna/logging.py create_default_formatter) names neither and
    # keeps logging's default asctime, milliseconds after a comma: "[%(levelname)1.1s %(asctime)s]"
    ("tornado", r"\[[DIWEC] (?:\d{6}|\d{4}-\d\d-\d\d) \d\d:\d\d:\d\d(?:[.,]\d{3})?(?: [\w.-]+(?::\d+)?){0,2}\] ?",
     False),
    # ms-swift: "[INFO:swift] "
    ("swift", rf"\[{_LVL}:[\w.-]+\] ?", False),
    # Elasticsearch's log4j pattern "[%d][%-5p][%-25c] "
    ("es", r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d,\d{3}\]\[[A-Z ]+\]\[[^\]]+\] ?", False),
    # Python logging "%(asctime)s - %(name)s - %(levelname)s - " (and relays that add "name: ")
    ("asctime_dash", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3}(?: - \S+){1,3} - (?:[\w.-]+: )?", False),
    # loguru: "ts | LEVEL | module:func:N - "
    ("loguru", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \| *[A-Z]+ *\| \S+ - ?", False),
    # Python logging with its fields between '|' ("%(asctime)s |%(name)-7s|%(levelname)-7s| ", "%(asctime)s |
    # %(levelname)s | %(name)s | "): padded fields, the bars with or without blanks around them (after loguru's)
    ("asctime_pipe", r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[,.]\d{3} ?(?:\|[^|]{1,40}){2,3}\| ?", False),
    # rich.logging.RichHandler: "[MM/DD/YY HH:MM:SS] LEVEL    "; a record in the same second as the one
    # before blanks the time column; a long message wraps onto lines indented to the message column
    ("rich", rf"\[\d\d/\d\d/\d\d \d\d:\d\d:\d\d\] {_LVL} +", False),
    ("rich_same_time", rf" {{20}}{_LVL} +", False),
    # SLF4J SimpleLogger and log4j "[%thread] %level %logger - " ("[main] INFO org.x.Y - ")
    ("thread_level", r"\[[^\]]{1,80}\] (?:TRACE|DEBUG|INFO|WARN|ERROR) ", False),
    # a bracketed tag then a time ("[Router (Rust)] 2025-05-21 03:52:00 - DEBUG - ")
    ("tag_ts", r"\[[^\]]{1,40}\] \d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?: - [A-Z]+ - | )", False),
    # a bracketed time with process tags (sglang "[ts TP0] ")
    ("bracket_ts", r"\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: [A-Z]{2,4}\d+)+\] ?",
     False),
    # Hadoop's and Spark's log4j console layout ("%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex": Spark's
    # log4j2-defaults.properties, Hadoop's log4j.properties with %c{2}): a JVM's records (RECORD_MODES)
    ("log4j_yy", r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d (?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL) [\w$.]+: ", False),
    # java.util.logging's SimpleFormatter writes a record on two lines: "Oct 17, 2023 3:36:54 AM class method",
    # then "LEVEL: message" (HEAD_STARTS)
    ("jul", r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d?, \d{4} \d\d?:\d\d:\d\d (?:AM|PM) ", False),
    # tracing-subscriber's Pretty formatter (fmt/format/pretty.rs): "  <time> <LEVEL> target: message, fields",
    # then "    at file:line" and "    in span with fields" lines (HEAD_STARTS), then a blank line (a prefix
    # such as "[rank3]: ?" may have taken one of its two blanks)
    ("tracing_pretty", rf" {{1,2}}\d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) +{_LVL} ", False),
    # the grammar most formatters share (log4j, logback, Spring Boot, java.util.logging one-line layouts,
    # Python logging, gunicorn, celery, structlog, spdlog, zap, Go's log, Ray's Python logger, TensorFlow's
    # and XLA's TSL logging "%Y-%m-%d %H:%M:%S.uuuuuu: L file:N] ", ...)
    ("generic", _GENERIC, False),
    ("time_level", _TIME_LEVEL, False),
    # log4j's TTCCLayout (BasicConfigurator) "%r [%t] %-5p %c %x - ": milliseconds since start, no date
    ("log4j_ttcc", rf"\d+ \[[^\]]{{1,80}}\] {_LVL} +(?:{_LOGGER} )?", False),
    # HDFS "yyMMdd HHmmss pid LEVEL "
    ("hdfs", r"\d{6} \d{6} \d+ [A-Z]+ ", False),
    # Android logcat threadtime
    ("logcat", r"\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ [VDIWEF] ", False),
    # Apache httpd error log
    ("apache", r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] ", False),
    # Python logging.BASIC_FORMAT "LEVEL:name:" ("WARNING:torch.distributed.run:")
    ("py_basic", rf"{_LVL}:[\w.<>-]+:", False),
    # Python logging "%(name)s - %(levelname)s - " without a time: Dask distributed's default logging-format
    # (distributed.yaml), so its records and tornado's under it ("tornado.application - ERROR - ")
    ("name_level", rf"[\w.<>-]+ - {_LVL} - ", False),
    # uvicorn's "%(levelprefix)s " (the level and ':' padded to 9 columns, then a space)
    ("uvicorn", r"(?:TRACE:    |DEBUG:    |INFO:     |WARNING:  |ERROR:    |CRITICAL: )", False),
    # logrus text "INFO[0000] ", maven "[INFO] ", and a bare level word
    ("logrus", r"(?:TRAC|DEBU|INFO|WARN|ERRO|FATA|PANI)\[\d+\] ", False),
    # a level right-aligned or padded after a time the line's relay took (Rust tracing's " INFO",
    # Rich's console without its time column " WARNING  ")
    ("padded_level", rf" {_LVL} +", False),
    # a bracketed level, also padded (structlog's ConsoleRenderer "[info     ] ")
    ("level_bracket", rf"\[ *{_LVLW} *\] ", False),
    ("level_word", rf"{_LVL} +", False),
)
SPLICE_NEXT = frozenset("[(")
# What else a bar's splice may come before: warnings.showwarning's "file:line: Category: message"
# (warnings.py _formatwarnmsg_impl writes it to stderr while tqdm's bar on the same terminal has no newline
# yet), whose source line must then follow it
SPLICE_REST_RE = re.compile(r"(?:[A-Za-z]:)?[^:\s]+\.pyx?:\d+: [A-Z]\w*Warning: ")
# "host prog: " after a syslog time is also the shape of two-word lines printers write after a
# relay's time (Java's "Caused by: ", the Go runtime's "fatal error: " and "runtime stack:", Rust's
# "stack backtrace:", glog's "Check failed: ", faulthandler's "Extension modules: "): such a
# "writer" is the line's own text
# a stream prefix that is not one when the rest of the line starts so: a time padded by more blanks to a level
# word is a formatter's own head whose tab a copy turned into blanks (zap's console encoder writes
# "<ISO8601 time>\t<LEVEL>\t<logger>\t<message>"), not docker's or kubectl's stamp over the line
PREFIX_NOT_BEFORE = {"p_rfc3339": re.compile(r" +(?:DEBUG|INFO|WARN|WARNING|ERROR|DPANIC|PANIC|FATAL)[ \t]")}
NOT_SYSLOG_WRITERS = frozenset(("Caused by", "fatal error", "runtime stack", "stack backtrace", "Check failed",
                                "Extension modules"))
# rsyslog escapes control characters as '#' and three octal digits ($EscapeControlCharactersOnReceive):
# a frame's leading tab arrives as "#011"
RELAY_ESCAPES = (("#011", "\t"),)
LINE_START_PREFIXES = frozenset(("p_srun_padded",))
# A copy that leads every line but the first with a blank (Python's print(*chunks) puts its separator, a blank,
# after each chunk's newline) moves a writer's bracketed prefix one column right: " [rank3]:[E227 ...]". A launcher
# never writes a blank before its prefix, so a blank then a bracketed writer's prefix ("all" or "k" keyed) is that
# prefix, not a line indented under the block before it.
BLANK_LED_PREFIX_FIRST = frozenset("[(")
# ECMA-48 control sequences terminals read (colours, erasing a line, moving the cursor: colorlog, loguru,
# rich, Ray's coloured prefixes, tqdm) and operating-system commands (a terminal's title, links)
# An OSC string (a hyperlink) counts as markup only once terminated: a line cut inside one keeps its
# text visible to the rules, so a line is never read as blank for what an unfinished escape holds.
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# the same colours with their ESC lost, as a copy from a web page leaves them ("[36m(pid=1)[0m"): read
# only on a line that also holds the reset "[0m"
BARE_SGR_RE = re.compile(r"\[(?:\d{1,3};)*\d{1,3}m")
RELAY_RECORDS = frozenset(("p_syslog", "p_syslog_iso", "p_dmesg"))
# Among syslog's writers only the kernel writes one record per line (printk; a continuation arrives
# already joined). A program's output that journald or a syslog relay split at each newline is the
# program's own stream again: its printer's grammar joins it (journalctl -u trainer, rsyslog files).
RELAY_RECORD_WRITERS_RE = re.compile(r"(?:\S+ )?kernel(?:\[\d+\])?$")
EVERY_LINE = frozenset(("h_vllm", "h_torch_logging"))
# Heads of formatters that write every further line of a record behind an indent of their own:
# tornado's LogFormatter (and NeMo's BaseFormatter, a copy of it) end with
# ``formatted.replace("\n", "\n    ")``, so a message's lines, a captured warning's source line, the
# traceback of exc_info and the message's trailing newline (the indent alone) all start with it.
# Under such a record a line that starts with the indent is the record's, whatever its shape.
# rich.logging.RichHandler (rich/_log_render.py LogRender) renders a record as a grid row: the time column
# ("[MM/DD/YY HH:MM:SS]" and its padding, 20 columns, blank when the time repeats), the level column (8
# and its padding) and the message column, into which the console wraps the message: its further lines,
# also one that reads "INFO: ..." (torch.distributed's own record as ColossalAI's logger relays it), are
# the two empty columns' 29 blanks and the message's text.
CONT_INDENT: dict[str, str] = {"h_nemo": "    ", "h_tornado": "    ", "h_rich": " " * 29, "h_rich_same_time": " " * 29}
# Levels that announce an exception after the record (logger.exception, log4j's %throwable, glog E/F).
# A level is a word of its own in the head: not part of a logger's name ("torch...multiprocessing.errors",
# "uvicorn.error", "error_handler"), whose INFO records carry no traceback.
ANNOUNCE_HEAD_RE = re.compile(r"(?:^|[^\w.])(?:WARN(?:ING)?|ERROR?|SEVERE|FATAL?|CRITICAL|EXCEPTION|[Ww]arn(?:ing)?"
                              r"|[Ee]rror|[Ff]atal|[Cc]ritical)(?:[^\w.]|$)"
                              r"|\[[EWF]\d|^[EWF]\d|^[EWF] \d| [EF] \d|: [EF] "
                              # tornado's LogFormatter (and the formats that copy it: Jupyter's, optuna's) writes
                              # the level's first letter: "[W 240501 ...", "[E 2018-12-11 ...", "[C ..." (CRITICAL)
                              r"|^\[[EWC] \d")
# A record at a quiet level (log4j/logback/logging INFO and below, JUL CONFIG and FINE*, glog I): a
# stack or exception line after it is taken as its own only when its message announces one (a
# "%m%n%ex" layout prints the stack of any level, but a stack under a quiet record that does not
# mention it is, far more often, another writer's printStackTrace between the records).
QUIET_HEAD_RE = re.compile(r"\b(?:INFO|DEBUG|TRACE|NOTICE|CONFIG|FINE|FINER|FINEST)\b|^\[?[ID](?:\d{4})?\d{4} ")
# what a quiet record's message says when it does carry a stack (Elasticsearch's "[DEBUG][bootstrap] Exception",
# Flink's "INFO ... Triggering Checkpoint 1 ... failed due to {}"; a state machine's enum name in capitals:
# Flink's Execution.transitionState logs "{} ({}) switched from {} to {} on {}." at INFO with the failure's
# throwable, the state FAILED, and the job's "switched from state RUNNING to FAILING.")
QUIET_ANNOUNCE_RE = re.compile(r"[Ee]xception|[Ee]rror|[Ff]ail|FAIL(?:ED|ING|URE)\b|[Tt]hrowable|[Ss]tack ?trace"
                               r"|[Cc]rash|[Aa]bort")
# A line without a head that ends like this announces what its writer prints next, in another write:
# threading's "Exception in thread loader-0:" before print_exception, a crash handler's "..., backtrace:"
# before backtrace_symbols_fd. It stays open while other processes' lines (other stream prefixes) come
# between; its own next line decides as ever.
ANNOUNCE_ENDINGS = (":", ": ")
# An exception line pasted without its traceback whose message ends by announcing its cause on the next line:
# the lazy module of transformers (utils/import_utils.py _LazyModule._get_module, copied by diffusers, peft and
# modelscope) raises RuntimeError(f"Failed to import {name}.{module} because of the following error (look up to
# see its traceback):\n{e}"), so the import error's own message is the line below (MODES "plain", act "exc_next")
EXC_CAUSE_NEXT_RE = re.compile(r"(?:Error|Exception)\w*: .*\(look up to see its traceback\):\s*$")
# A repeated head continues a record (HEADS' ``repeats``), but a loop that logs one record per item
# repeats it too when two records fall in the same tick: torch.distributed.elastic's api.py logs
# "Sending process 2448006 closing signal SIGTERM" once per worker through torch._logging's glog-shaped
# formatter, whose fraction is the record's milliseconds (".837000"), so the workers' records share one
# head. A body that is the record's one line again with only its numbers changed is such a record of
# its own; a continuation line of a multi-line message is not the message's first line again.
LOOP_RECORD_NUMBER_RE = re.compile(r"\d+")
# Records known never to carry the traceback that follows them: torch elastic's api.py logs a
# worker's death with logger.error (no exc_info), error_handler.py the child's error file it could not
# copy; the launcher's own uncaught traceback comes next.
# A JSON object on one line is a structured formatter's whole record: it writes the exception into the
# object (PySpark's JSONFormatter "exception": {...}, python-json-logger's "exc_info", loguru's serialize),
# so a traceback after it is another writer's (PySpark's driver after SQLQueryContextLogger's ERROR record).
NO_EXC_BODY_RE = re.compile(r"failed \(exitcode: -?\d+\) local_rank: |^\{\s*\".*\}\s*$"
                            # its agent's shutdown warnings (api.py logger.warning "Sending process %s closing
                            # signal %s", "Received %s death signal, shutting down workers"), also without exc_info
                            r"|Sending process \d+ closing signal SIG[A-Z]+|Received \d+ death signal, shutting down"
                            # its error_handler.py logs where the child's error file went (logger.error/info)
                            r"|no error file defined for parent, to copy child error file \("
                            r"|dumped error file to parent's ")
# A line without a head that speaks in the first person ("I get this error:", "When I run it, I see:", "my
# command ... and error:") is a person's prose around a paste, not a program's message: it announces nothing,
# whatever it ends with (a logger, a runtime or a library does not write "I" or "my" of itself)
PROSE_RE = re.compile(r"(?:^|[\s,(])(?:I(?:'m|'ve|'d)?|[Mm]y) [a-z]+[\s,.!?:]")
# Message text that announces a traceback or a stack (the record's last line).
ANNOUNCE_BODY_RE = re.compile(
    r"(?:[Ee]xception in |Exception ignored in|Error in |task failed|Logging error|:\s*$"
    r"|(?:asyncgen|future|handle|protocol|socket|task|transport): <|exception was never retrieved"
    r"|[Bb]acktrace|[Ss]tack trace|Obtained \d+ stack frames|<<< (?:FAILURE|ERROR)!\s*$"
    # Go's net/http logs "http: panic serving ADDR: v" then the stack; k8s "Observed a panic: "
    r"|[Pp]anic"
    # Hydra's JobReturn.return_value writes this line, then raises the job's exception (its traceback next)
    r"|Error executing job with overrides: "
    # Django's log_response (django/utils/log.py) logs a request's uncaught exception as "%s: %s" % (reason
    # phrase, path) with exc_info; its default console handler has no formatter, so the record is that line
    # and the traceback: "Internal Server Error: /api/x"
    r"|^Internal Server Error: /"
    # what logger.exception is called with where a failure is caught and logged, under logging's default
    # "%(message)s" (Formatter.format writes the message, then the traceback): "Failed to transform operator
    # %s" (NVIDIA Merlin's executors.py LOG.exception)
    r"|^Failed to [a-z]"
    # glog's CHECK message (logging.h: "Check failed: " #condition " "), a fatal record's text: LogMessage::Fail
    # writes "*** Check failure stack trace: ***" and the frames right after it, also where a copy dropped
    # the record's "F0303 10:32:18.867789 30760 file:line] " head
    r"|^Check failed: "
    # a record whose message ends with the throwable's toString() (a layout that writes "%m %ex" on one line).
    # The name's parts are bounded (80 characters, 16 packages; Java's are far shorter) and a part starts after
    # no other part letter: a search over a long word or dotted run would otherwise scan to its end from each
    # of its characters.
    r"|(?<![a-z_$])(?:[a-z_$][\w$]{0,79}\.){1,16}[A-Z][\w$]{0,79}(?:Exception|Error|Throwable)(?::|$))")

# -- 3. tokens -------------------------------------------------------------------------------------
# (name, pattern[, gate]), first match wins. The comment names the printer. A gate is a literal the
# line must contain for the pattern to be tried (a cheap test before a pattern that could start with
# any word).
# One cell of a table row: a number (maybe a percentage), a clock (mm:ss, h:mm:ss), or a value left out: '-'
# (nvidia-smi), '#na#' (fastai v1's Recorder.format_stats), 'None' (fastai v2's ProgressCallback writes str()).
_CELL = r"(?:\d+:\d\d(?::\d\d)?|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?|-|#na#|None)"
# A GPU monitor's cell: a number with its unit glued on (rocm-smi's concise table: "39.0c  102.0W  800Mhz  0%"), N/A;
# after the first two cells also a unit a blank apart (amd-smi monitor: "171 W     42 °C     99 %") or one word of
# state (rocm-smi's Perf column: "auto"). The first two cells are figures, so a source listing's "12    return x"
# is none.
_UCELL = r"(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[A-Za-z]{1,4}|%)|N/A)"
_TAIL_CELL = r"(?:[A-Za-z°%/]{1,8})"
# an elision mark alone (TOKENS "elided", "elided_in"): dots or an ellipsis, bare or bracketed; a word
# saying lines were cut, bracketed or between dots; how many lines were left out ("... (40 lines omitted)",
# "... < many lines > ...", friendly's "... Many other lines. ..."). A count of frames is only a word:
# the Go runtime's own "...additional frames elided..." and "...N frames elided..." are "go_elided"
_DOTS = r"(?:\.{3,}|…+)"
_ELIDED_COUNT = (r"(?:\d+ (?:more )?lines?|(?:[Mm]any|[Ss]ome|[Ss]everal) (?:other |more )?(?:lines|frames))"
                 r"(?: (?:omitted|elided|removed|skipped|hidden|truncated|not shown))?\.?")
_ELISION = (r"(?:" + _DOTS + r"|[\[(<]" + _DOTS + r"[\])>]"
            r"|[\[(<] ?(?:" + _DOTS + r" ?)?(?:snip(?:ped)?|truncated|trimmed|omitted|elided)"
            r"(?: ?" + _DOTS + r")? ?[\])>]"
            r"|" + _DOTS + r" ?(?:snip(?:ped)?|truncated|trimmed)(?: ?" + _DOTS + r")?"
            r"|" + _DOTS + r" ?[\[(<]? ?" + _ELIDED_COUNT + r" ?[\])>]?(?: ?" + _DOTS + r")?"
            r"|[\[(<] ?" + _ELIDED_COUNT + r" ?[\])>])")

# a compiler's "file:L[:C]: " (a path may hold blanks and a drive's colon, never ": ": so an exception's
# "Type: message" is no location)
_CC_LOC = r"[ \t]*[^\s:](?:[^:]|:[^ ])*?:\d+(?::\d+)?: "

TOKENS: tuple[tuple[str, ...], ...] = (
    # pip's DiagnosticPipError as its logger writes it (pip/_internal/exceptions.py __rich_console__): one record,
    # "error: <reference>" (kebab-case), a blank line, "× <message>" with "│ " before the message's further
    # lines, "╰─> <context>" with the context's further lines indented 4 under it (a failed subprocess's
    # "[N lines of output]", its output, "[end of output]"), a blank line, "note: ...", "hint: ...", "Link: ...";
    # the whole indented by pip's indent_log when a build step logs it (MODES "pip_box"). First in the table: inside
    # the box its bar is the box's own, not the left edge of Rich's panel (rich_box)
    ("pip_err", r"[ \t]*(?:error|warning): [a-z]+(?:-[a-z]+)+\s*$"),
    ("pip_x", r"[ \t]*\u00d7 \S"),
    ("pip_bar", r"[ \t]*\u2502 "),
    ("pip_ctx", r"[ \t]*\u2570\u2500> "),
    ("pip_note", r"[ \t]*(?:note|hint): \S"),
    ("pip_link", r"[ \t]*Link: \S"),
    # pip 20 and 21 logged a failed subprocess as one ERROR record (utils/subprocess.py make_subprocess_output_error:
    # "Command errored out with exit status {}:\n command: ...\n     cwd: ...\nComplete output ({} lines):\n" + the
    # output + LOG_DIVIDER, forty '-'), every line indented by indent_log (MODES "pip_legacy")
    ("pip_legacy", r"[ \t]*ERROR: Command errored out with exit status -?\d+:\s*$"),
    ("pip_divider", r"[ \t]*-{40}\s*$"),
    # conda's report of an unexpected error (conda/exception_handler.py print_unexpected_error_report, one write
    # to stderr): the banner, an empty line, the traceback with every line indented 4, then "`$ command`", the
    # environment variables and `conda info`, to "An unexpected error has occurred. Conda has prepared the above
    # report." (MODES "conda_report"). A Markdown copy can drop the banner's "# " as a heading's mark
    ("conda_report", r"(?:# )?>{22} ERROR REPORT <{22}\s*$"),
    ("conda_report_end", r"An unexpected error has occurred\. Conda has prepared the above report\."),
    # ComfyUI's error report, as its front end generates it for the clipboard (src/utils/errorReportUtil.ts
    # generateErrorReport: one Markdown text): the title, "## Error Details" and its "- **Field:**" lines, "## Stack
    # Trace" with the traceback (ComfyUI's list of frame strings joined, an empty line after each frame), then
    # "## System Information", "## Devices", "## Logs" (MODES "comfy_report")
    ("comfy_report", r"# ComfyUI Error Report\s*$"),
    # GCC's diagnostics (gcc/diagnostic.c): diagnostic_report_current_module writes the include stack of a
    # diagnostic's location before it, "In file included from X:L[:C]" and ",\n                 from Y:L" per
    # level, ':' after the last; the language's print_error_function writes "file: In function 'f':" (also
    # "In member function", "In instantiation of", ...) when the function changes; diagnostic_build_prefix writes
    # "file:L:C: " and the kind ("error: ", "fatal error: ", "warning: ", "note: "); default_diagnostic_finalizer
    # then shows the locus (diagnostic_show_locus: the source line and a caret line of '^' and '~', since GCC 9
    # behind a " N | " gutter); a template's instantiation context comes as "file:L:C:   required from ..." lines,
    # a macro's as "file:L:C:   in expansion of macro"; a fatal error ends with "compilation terminated."
    # (diagnostic_action_after_output). Clang's TextDiagnostic writes the same shapes ("In file included from"
    # on every level, the caret line under the source, a fix-it line under the caret). A note belongs to the
    # diagnostic above it (MODES "cc_body")
    ("cc_incl", r"[ \t]*In file included from \S"),
    ("cc_ctx", r"[ \t]*\S.*: In (?:static member function|member function|copy constructor|constructor|destructor"
               r"|lambda function|function|instantiation of|substitution of) .*:\s*$", ": In "),
    ("cc_diag", _CC_LOC + r"(?:fatal error|error|internal compiler error): ", "error: "),
    ("cc_warn", _CC_LOC + r"warning: ", "warning: "),
    ("cc_note", _CC_LOC + r"note: ", "note: "),
    ("cc_req", _CC_LOC + r"  (?:(?:recursively )?required (?:from|by) |in (?:constexpr )?expansion of )", ":   "),
    ("cc_from", r"[ \t]+from \S.*[,:]\s*$"),
    ("cc_gutter", r"[ \t]*\d* ?\|(?: |\s*$)"),
    ("cc_gutter_num", r"[ \t]*\d+ \| "),
    ("cc_caret_gutter", r"[ \t]*\| +[\^~]"),
    ("cc_caret", r"[ \t]*[\^~][\^~ ]*$"),
    ("cc_term", r"[ \t]*compilation terminated\.\s*$"),
    # ninja's report of a failed edge (src/status_printer.cc BuildEdgeFinished): "FAILED: " + the edge's outputs,
    # then the edge's command on the next line (printed whatever the verbosity), then the command's own output
    # (the compiler's diagnostics: events of their own)
    ("ninja_failed", r"[ \t]*FAILED: \S", "FAILED: "),
    # CMake's messages (Source/cmMessenger.cxx DisplayMessage): printMessagePreamble's "CMake Error" (also
    # "CMake Warning", "CMake Warning (dev)", "CMake Deprecation Warning", ...), PrintBacktraceTitle's
    # " at file:L (command)" or " in file", ':'; printMessageText's text indented by two blanks (its paragraphs
    # between empty lines); PrintCallStack's "Call Stack (most recent call first):" and frames indented by two;
    # for an author warning "This warning is for project developers.  Use -Wno-dev to suppress it."; then an
    # empty line
    ("cmake_msg", r"[ \t]*CMake (?:Error|Warning|Internal Error|Debug Log|Deprecation Error|Deprecation Warning)"
                  r"(?: \([\w ]+\))?(?: (?:at|in) \S.*)?:\s*$", "CMake "),
    ("cmake_stack", r"[ \t]*Call Stack \(most recent call first\):\s*$"),
    ("cmake_dev", r"[ \t]*This (?:warning|error) is for project developers\."),
    # CPython Lib/traceback.py (TracebackException.format)
    ("py_tb", r"[ \t]*Traceback \(most recent call last\):"),
    # torch's ExceptionWrapper.reraise (torch/_utils.py): the message is "Caught {type} in DataLoader worker
    # process {N}." (or "in pin memory thread ...") + "\nOriginal Traceback (most recent call last):\n" + the
    # worker's formatted traceback; pasted without the parent's traceback, the first line stands alone
    ("py_orig_tb", r"Original Traceback \(most recent call last\):\s*$"),
    # TorchScript's interpreter error in a traced module (torch 1.x, torch/csrc/jit/runtime/interpreter.cpp):
    # the op's message, this line, then "Traceback (most recent call last):" and the trace's "path(line): fn"
    # lines, all in the exception's message
    ("ts_failed", r"The above operation failed in interpreter\.\s*$"),
    ("py_eg", r"[ \t]*\+ Exception Group Traceback \(most recent call last\):"),
    ("fh_file", r"[ \t]+File \"[^\"]*\", line \d+ in "),  # faulthandler's frame: no comma before "in"
    # (loguru's backtrace marks the frame where the exception was caught with '>' in the first column)
    ("py_file", r"(?:[ \t]+|> )File \"[^\"]*\", line \d+"),
    # (a traceback copied from a page or a viewer that strips leading blanks: traceback.py's frame line
    # '  File "{}", line {}, in {}' at column 0, its source line and its position markers too; a SyntaxError's
    # report names no function: TracebackException._format_syntax_error writes '  File "{}", line {}')
    ("py_file_bare", r"File \"[^\"]*\", line \d+(?:, in \S|\s*$)"),
    ("py_marker", r"[ \t]*[~^][~^ ]*$"),
    # (traceback.py's StackSummary.format collapses a frame repeated more than _RECURSIVE_CUTOFF (3) times in a
    # row: "  [Previous line repeated {count} more time(s)]" at the frame line's indent, after its source lines)
    ("py_repeated", r"[ \t]*\[Previous line repeated \d+ more times?\]\s*$"),
    # ComfyUI's error dialog, as a copy of it reads (web/scripts/app.js #formatExecutionError):
    # `Error occurred when executing ${nodeType}:\n\n${exception_message}\n\n${traceback}`, the traceback
    # traceback.format_tb's frames without the exception line (the page may have dropped their indentation)
    ("comfy_exec", r"Error occurred when executing \S.*:\s*$"),
    # (torch.multiprocessing.spawn's ProcessRaisedException carries the child's traceback in its message,
    # "\n\n-- Process N terminated with the following error:\n" + the traceback: a chain of the same shape)
    ("py_chain", r"[ \t]*(?:During handling of the above exception, another exception occurred:"
                 r"|The above exception was the direct cause of the following exception:"
                 r"|-- Process \d+ terminated with the following error:)"),
    # trio's MultiError before exception groups (trio/_core/_multierror.py traceback_exception_format, trio
    # 0.3-0.21) and anyio 1.x's MultiError.__str__ (anyio/exceptions.py): after the group's own traceback,
    # per embedded exception "\nDetails of embedded exception {i}:\n\n" and that exception's formatted
    # traceback with every line indented by two (textwrap.indent), nested groups deeper again
    ("py_embedded", r"[ \t]*Details of embedded exception \d+:\s*$"),
    # OpenNMT-py's multi-GPU ErrorHandler (copied into fairseq's, PreSumm's, BertSum's train scripts) raises
    # Exception(msg) in the parent with msg = "\n\n-- Tracebacks above this line can probably\n" +
    # 17 blanks + "be ignored --\n\n" + the child's traceback: the exception line ("Exception: "), a blank
    # line, these two lines, a blank line and the child's traceback are one message
    ("onmt_ignored", r"-- Tracebacks above this line can probably\s*$"),
    ("onmt_ignored_end", r"[ \t]+be ignored --\s*$"),
    # PyTorch Lightning's ModelSummary (utilities/model_summary/model_summary.py _format_summary_table, one
    # log.info): the header "  | Name | Type | Params ...", a '-' rule, a row per layer ("0 | encoder | ..."), the
    # rule again, a total per line ("161       Trainable params", counts as get_human_readable_count writes
    # them: "1.2 K"); RichModelSummary's totals (callbacks/rich_model_summary.py: a grid printed after its box,
    # "Trainable params: 161" ... "Total FLOPs: 0", each padded to the console's width)
    ("pl_summary", r"[ \t]*\| Name +\| Type +\| Params"),
    ("pl_row", r"[ \t]*\d+ +\| "),
    ("pl_total", r"[\d.,]+(?: [KMBT])? +(?:Trainable params|Non-trainable params|Total params"
                 r"|Total estimated model params size \(MB\)|Modules in (?:train|eval) mode|Total Flops)\s*$"),
    ("pl_grid", r"Trainable params: \S"),
    ("pl_grid_row", r"(?:Non-trainable params|Total params|Total estimated model params size \(MB\)"
                    r"|Modules in (?:train|eval) mode|Total FLOPs): \S"),
    ("eg_line", r"[ \t]+(?:\| |\|$|\+-|\+\+)"),
    # Rich's traceback handler (rich/traceback.py Traceback.__rich_console__): per exception a panel
    # "╭─ Traceback (most recent call last) ─╮", "│" rows, "╰─╯" (RichHandler indents all of it to its
    # message column), then "Type: message". A panel narrower than its title crops it ("╭─ Traceback (most
    # recent call last─╮" in RichHandler's column at 80). A copy that starts at the title drops the edge's
    # left half ("Traceback (most recent call last) ─────╮": a selection from a notebook's output). A console
    # whose encoding lacks the rounded corners (a GBK or cp936 terminal; Python's stream writes errors as '?')
    # draws "?─── Traceback (most recent call last) ───?" and "?───?" (its "│" and "─" are in the code page)
    ("rich_tb", r"[ \t]*(?:[\u256d?]\u2500+ Traceback(?: \(most[^\u256e?]*)?"
                r"|Traceback \(most recent call last\) \u2500+)[\u256e?]", "Traceback"),
    # (read only inside a Rich traceback: its rows, its bottom edge, the untitled SyntaxError panel and the
    # "Sub-exception #N" panels of an exception group, and the exception line after the panel)
    ("rich_row", r"[ \t]*\u2502"),
    ("rich_end", r"[ \t]*[\u2570?]\u2500+[\u256f?]\s*$"),
    ("rich_panel", r"[ \t]*\u256d\u2500+(?: Sub-exception #\d+ \u2500+)?\u256e\s*$"),
    ("rich_exc", r"[ \t]*[A-Za-z_][\w.]*(?::(?: |\s*$)|\s*$)"),
    # Rich wraps the chain marker to the console's width (RichHandler's message column is narrow): its
    # first words, then the rest of it, which ends with "exception:" / "occurred:"
    ("rich_chain", r"[ \t]*(?:The above exception|During handling of the)(?: |\s*$)"),
    ("rich_chain_end", r"[ \t]*(?:\S+ )*(?:exception|occurred):\s*$"),
    ("rich_box_end", r"\u2570\u2500+\u256f"),
    # boxes drawn with box-drawing characters (Rich panels and tables, Ray Tune's status table,
    # tabulate's "rounded_outline"): a top edge, rows between vertical bars, separators, a bottom edge
    ("rich_box", r"[\u2502\u2503\u2551]"),
    # loguru's diagnose and better_exceptions (better_exceptions/formatter.py, loguru/_better_exceptions.py)
    # write under a frame's source line the values of its names: "│" columns down to each name and
    # "└ value" at its end ("    │   └ 0"), indented with the source line (after Rich's rows in this order:
    # RichHandler's indented panel rows are Rich's)
    ("py_value", r"[ \t]{3,}(?:\u2502 +)*\u2514 "),
    ("box_top", r"[\u256d\u250c\u250f\u2554][\u2500\u2501\u2550\u252c\u2533\u2566]"),
    ("box_sep", r"[\u251c\u2523\u2560\u255e\u2521\u2522][\u2500\u2501\u2550\u253c\u254b\u256c]"),
    ("box_bottom", r"[\u2570\u2514\u2517\u255a][\u2500\u2501\u2550\u2534\u253b\u2569]"),
    # IPython's ultratb: a '-' rule, "ExcType   Traceback (most recent call last)", frames
    # ("Cell In[N], line L" / "File path:L, in f(...)" + numbered source with "---->" markers)
    ("ipy_tb", r"\S+ {2,}Traceback \(most recent call last\)\s*$", "Traceback"),
    # (older IPython: "<ipython-input-N-..> in <module>()" / "/path/x.py in f(...)"; Colab folds "16 frames"
    # and, copied from its page, writes each file as a link: "[/path/x.py](https://localhost:8080/#) in f(...)";
    # VS Code's Jupyter extension (src/notebooks/outputs/tracebackFormatter.ts) links a cell frame's line and
    # the current line's number, which a copy writes "Cell In[3], [line 1](vscode-notebook-cell:..)", "----> [1](..)").
    # VerboseTB.format_record writes f'{link}{", " if call else ""}{call}': a module-level frame has no ", in f(...)"
    # ("File /path/x.py:8" alone); JupyterLab links the path of a copied traceback ("File [~/x.py:37](http://..),
    # in f(...)"); IPython 7 writes the file as it is, a Windows drive too ("d:\\src\\load.py in f(...)")
    ("ipy_frame", r"(?:Cell In\[\d+\], (?:line \d+|\[line \d+\]\([^\s)]*\))|File \S.*:\d+(?:, in |\s*$)"
                  r"|File \[\S[^\]]*:\d+\]\([^\s)]*\)(?:, in |\s*$)|Input In \[\d+\], in "
                  r"|<(?:ipython-input-[\w-]+|decorator-gen-\d+)> in |(?:[A-Za-z]:)?[^\s:]+\.pyx? in \S|\d+ frames$"
                  r"|\[(?:<ipython-input-[\w-]+>|[^\s\]]+\.pyx?)\]\([^\s)]*\) in \S)"),
    # (VerboseTB numbers a frame's source lines right-aligned to 7 columns, "    682 x = f(", marks the
    # current one "--> 603 ", elides with "   (...)": the shape a cut excerpt starts with; inside a
    # traceback any numbered line is read as one, a relay may have shifted them; VS Code links the number of
    # every source line of a file's frame, its padding kept (tracebackFormatter.ts LineNumberMatchRegex), which a
    # copy writes "     [24](file:///...:24) from x import (")
    ("ipy_num", r"(?: {4}\d{3}| {5}\d\d| {6}\d| {3}\d{4}| {2}\d{5}| {2,6}\[\d{1,5}\]\([^\s)]*\)"
                r"|-*-> (?:\d+|\[\d+\]\([^\s)]*\))) "
                r"|   \(\.\.\.\)\s*$"),
    ("ipy_src", r"[ \t]*-*> \d+ |[ \t]+\d+ |[ \t]+\(\.\.\.\)"),
    # (frames hidden by __tracebackhide__ are counted on a line of their own between the blank lines that
    # separate frames: VerboseTB.format_records' "    [... skipping hidden N frame]")
    ("ipy_skip", r"[ \t]+\[\.\.\. skipping hidden \d+ frames?\]"),
    # CPython Python/pylifecycle.c fatal_error() and Modules/faulthandler.c; the header is written to stderr
    # after what stdout left unterminated: pytest -v's test id and its blank, or pytest's progress letters
    # (terminal.py pytest_runtest_logreport writes ".", "F", "E", "s", "x", "X" without a newline), also
    # after the file's path and its blank that start the progress line (write_fspath_result: "test_x.py F")
    ("py_fatal", r"(?:\S+ [.FEsxX]*|[.FEsxX]+)?Fatal Python error: ", "Fatal Python error: "),
    # faulthandler.dump_traceback_later's watchdog: "Timeout (H:MM:SS[.ffffff])!" then every thread's stack
    ("py_timeout", r"Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!\s*$"),
    # faulthandler's lines in a thread's stack that are not frames (Python/traceback.c dump_traceback)
    ("fh_note", r"[ \t]+(?:<no Python frame>|<tstate is freed>|Garbage-collecting|\.\.\.)\s*$"),
    ("py_thread", r"(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):"
                  r"|Stack \(most recent call first\):|Current thread's C stack trace"),
    # "Extension modules: a, b, ... (total: N)" is one line; cut by a terminal's width, its rest follows
    ("py_ext_cut", r"Extension modules: .*,\s*$"),
    ("py_ext", r"Extension modules: "),
    ("py_ext_total", r"\S.*\(total: \d+\)\s*$"),
    ("py_state", r"Python runtime state: "),
    # logging's stack_info (Logger.findCaller): "Stack (most recent call last):" then print_stack's
    # frames, written with the record; asyncio's exception handler writes the handle's creation point
    # the same way ("source_traceback: Object created at (most recent call last):", base_events.py)
    ("py_stack", r"Stack \(most recent call last\):\s*$|(?:source|handle)_traceback: \w+ created at "
                 r"\(most recent call last\):\s*$"),
    # an exception that crossed a process (concurrent.futures.process._RemoteTraceback, multiprocessing.pool's
    # RemoteTraceback): its message is the worker's formatted traceback between two '"""' lines, and it
    # is printed as the cause of the exception result() raised again (its line, then the chain marker)
    ("py_remote", r"(?:[\w.]+\.)?_?RemoteTraceback: ?$"),
    ("py_triple", r'"""\s*$'),
    # a tqdm bar ("{percentage:3.0f}%|"): indented by at most three blanks, never a frame's source line
    # (traceback.py indents those by four), so frames written without an exception line
    # (traceback.print_stack) end at it
    ("tqdm_bar", r" {0,3}\d{1,3}%\|", "%|"),
    # unittest's TextTestResult.printErrorList: a '=' rule of 70, "FLAVOUR: test (module.Class.test)"
    # (its docstring's first line under it), a '-' rule of 70, the traceback
    ("ut_case", r"(?:ERROR|FAIL|UNEXPECTED SUCCESS): \w+ \([\w.]+\)"),
    # warnings.formatwarning: "file:line: Category: message" then "  source line"; a message that starts
    # with a newline leaves "Category: " at the end of the first line, and a copy or a shipper that trims
    # trailing blanks leaves "Category:"
    ("py_warning", r"(?:[A-Za-z]:)?(?:[^:\s]+\.pyx?|<[^>]+>):\d+: [A-Z]\w*Warning:(?: |\s*$)", "Warning:"),
    # multiprocessing.BaseProcess._bootstrap prints "Process Name:" then the traceback
    ("py_process", r"Process [\w-]+:\s*$"),
    # asyncio's default exception handler: the message ("Exception in callback ...", "Task exception was never
    # retrieved"), then the context's objects by key ("handle: <Handle ...>", "future: <Task ...>"), then
    # the traceback (base_events.py default_exception_handler)
    # (the object's repr left open at the line's end: a repr that holds an exception's repr over lines, as
    # "future: <Task finished ... exception=1 validation error for X\n...>" does, goes on to the line that closes
    # it with '>'; MODES "asyncio_repr")
    ("asyncio_handle_open", r"(?:asyncgen|future|handle|protocol|socket|task|transport): <.*[^>\s]\s*$"),
    ("asyncio_handle", r"(?:asyncgen|future|handle|protocol|socket|task|transport): <"),
    # command-line parsers' usage errors, each printed in one go before the program exits: argparse's
    # ArgumentParser.error (print_usage: "usage: prog ..." wrapped at the terminal's width, the further lines
    # indented under the first option; then "prog: error: message"), click's UsageError.show (the command's
    # usage, "Try 'prog --help' for help.", a blank line, "Error: message"), fire's _DisplayError ("ERROR: ...",
    # then helptext.UsageText: "Usage: ...", indented "  available commands:" / "  optional flags:" lines, a
    # blank line, "For detailed information on this command, run:" and the help command indented)
    ("usage_head", r"[Uu]sage: \S"),
    ("argparse_error", r"\S[^:]*: error: "),
    ("click_try", r"Try '[^']+' for help\.\s*$"),
    ("click_error", r"Error: "),
    # pytest's UsageError (config/__init__.py main: tw.line(f"ERROR: {msg}\n") for the error's message, which
    # its argument parser builds as the usage, "prog: error: message" and its config hints, "  inifile: ..."
    # and "  rootdir: ...", indented): one write
    ("pytest_usage", r"ERROR: usage: \S"),
    ("fire_error", r"ERROR: "),
    ("fire_detail", r"For detailed information on this command, run:\s*$"),
    # Hydra's run_and_report (hydra/_internal/utils.py) writes a CompactHydraException's message and its
    # cause's (OmegaConf's "Key 'x' is not in struct" + "    full_key: ..." lines), or the job's traceback, and
    # ends with its hint after a blank line, a write of its own. The message's first lines as the override and
    # config loaders word them (config_loader_impl.py, defaults_list.py): held until the hint confirms them
    ("hydra_compact", r"(?:Could not (?:override|append to config|delete from config|load)[ .]"
                      r"|Error (?:merging|parsing) override |Error merging '|Override \S+ looks like a config group"
                      r"|Multiple values for |Sweep parameters '|Cannot find primary config "
                      # (instantiate's InstantiationException, instantiate/_instantiate2.py: the target it could
                      # not locate or call, then "full_key: ..." on the next line)
                      r"|Error locating target '|Error in call to target '|Error instantiating ')"),
    ("hydra_hint", r"Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace\."),
    # MPICH's mpiexec (hydra, ui/mpich/mpiexec.c) on leaving after a process died of a signal: three printf's, the
    # signal's string and number, then two fixed lines (the "BAD TERMINATION" banner above them is another write)
    ("mpich_exit", r"YOUR APPLICATION TERMINATED WITH THE EXIT STRING: "),
    ("mpich_exit_more", r"(?:This typically refers to a problem with your application\."
                        r"|Please see the FAQ page for debugging suggestions)\s*$"),
    # Unsloth's banners (unsloth/models/_utils.py, llama.py, save.py): one print or logger call of five lines,
    # the sloth drawn down their first 14 columns: "==((====))==  " + the title, then the lines led by
    # "   \\   /|    " (f"{chr(92)}{chr(92)}"; one backslash in older versions), "O^O/ \_/ \    ",
    # "\        /    " and, last, ' "-____-"     '
    ("unsloth_top", r"==\(\(====\)\)== "),
    ("unsloth_art", r"(?: *\\{1,2} +/\||O\^O/ \\_/ \\|\\ +/) "),
    ("unsloth_end", r' *"-____-" '),
    # wandb's terminal log (sdk/wandb_run.py through sdk/lib/printer.py display, each line behind "wandb: "):
    # _header_sync_info's one call when offline ("W&B syncing is set to `offline` ...", then where the run is
    # saved and, in newer versions, the `wandb leet` hint), the footer's panel (_footer_history_summary_info:
    # "\n" + "Run history:" and its grid + "\n" + "Run summary:" and its grid + "\n": each grid row
    # "{key:>width} {value}"), _footer_sync_info's
    # "You can sync this run to the cloud by running:" + the command
    ("wandb_sync_more", r"(?:Run data is saved locally in |View this run in the terminal with )"),
    ("wandb_sync_info", r"W&B syncing is set to `offline`"),
    ("wandb_panel", r"Run (?:history|summary):\s*$"),
    ("wandb_sync", r"You can sync this run to the cloud by running:\s*$"),
    ("wandb_sync_cmd", r"wandb sync "),
    # accelerate's PartialState/AcceleratorState.__repr__ (src/accelerate/state.py), logged by every
    # example script as logger.info(accelerator.state) or printed: "Distributed environment: X  Backend: y",
    # then one "Field: value" line each ("Num processes", "Process index", "Local process index",
    # "Device", "Mixed precision type" (older: "Use FP16 precision"), DeepSpeed's "ds_config: {...}"); the repr
    # ends with a newline
    ("accel_state", r"Distributed environment: "),
    # accelerate launch's record of the defaults it used (accelerate/commands/launch.py
    # _validate_launch_command, one logger.warning): this line, a tab-led line per default, then its last line
    ("accel_defaults", r"The following values were not passed to `accelerate launch` and had defaults used instead:"),
    ("accel_defaults_end", r"To avoid this warning pass in values for each of the problematic parameters "),
    ("accel_field", r"(?:Num processes|Process index|Local process index|Device|Mixed precision type|Use FP16 precision"
                    r"|ds_config): "),
    ("ray_check", r"\.Please check \S+ for details"),  # (Ray's GCS start failure, MODES "ray_err_files")
    # Node.js's uncaught exception report (src/node_errors.cc GetErrorSource, TriggerUncaughtException): the
    # throw's "file:line", its source line, a caret line, a blank line, the error as util.inspect prints it,
    # a blank line, "Node.js vX.Y.Z". util.inspect writes an error's own properties after its last frame
    # ("    at f (x.js:1:2) {", indented members, "}" at column 0) and folds frames a cause shares
    # (Node 16 and later name its builtin modules "node:internal/modules/cjs/loader", without an extension)
    ("node_src", r"(?:\S+\.(?:[cm]?[jt]s|[jt]sx)|node:[\w/.-]+):\d+\s*$", ":"),
    ("node_caret", r"[ \t]*\^+\s*$"),
    ("node_version", r"Node\.js v\d+\.\d+\.\d+\s*$"),
    ("node_at_open", r"[ \t]+at \S.* \{\s*$"),
    ("node_more", r"[ \t]*\.\.\. \d+ lines? matching cause stack trace \.\.\."),
    ("node_close", r"\}\s*$"),
    # cmd.exe's message for a command it cannot find (its message 9009: one string with a line break in it)
    # IPython's banner under its first line ("Python 3.10.2 (main, ...) [GCC 9.3.0]"): IPython/core/usage.py
    # default_banner is one string of three lines, the copyright hint and "IPython 8.0.1 -- An enhanced Interactive
    # Python. Type '?' for help.". (CPython's REPL header is not: Modules/main.c pymain_header writes "Python %s on
    # %s" and its COPYRIGHT hint with two fprintf calls, two lines of their own.)
    ("py_banner_more", r"Type 'copyright', 'credits' or 'license' for more information\s*$"
                       r"|IPython \S+ -- An enhanced Interactive Python\."),
    # libmamba's solver error (MSolver::problems_to_str: "Encountered problems while solving.\n" and one "Problem: "
    # line per libsolv problem, solver_problem2str; conda-libmamba-solver's LibMambaUnsatisfiableError writes the
    # ":" form with "  - " items, which the indented lines under it already are), MODES "mamba_problems"
    ("mamba_solve", r"(?:\w+Error: )?Encountered problems while solving\.\s*$"),
    ("mamba_problem", r"Problem: \S"),
    # pydantic's ValidationError pasted without its traceback: its message always goes on under the exception line
    # (v1 error_wrappers.py ValidationError.__str__ and v2 pydantic_core: "N validation error(s) for Model", then
    # each error's location and its indented message), read as a message after a traceback's exception line
    ("pyd_validation", r"(?:[\w.]+\.)?ValidationError: \d+ validation errors? for \S+\s*$"),
    ("cmd_not_found", r"'[^']*' is not recognized as an internal or external command,\s*$"),
    ("cmd_not_found_end", r"operable program or batch file\.\s*$"),
    # Open MPI's signal handler (opal/util/stacktrace.c show_stackframe): every line behind "[host:pid] ",
    # from "*** Process received signal ***" through the signal, its code, the address and the "[ N] "
    # frames of opal_backtrace_print to "*** End of error message ***" (under mpirun --tag-output each
    # write of a frame is tagged, so "[1,1]<stderr>:" also comes inside a frame's line). The "[host:pid] " is
    # optional: a logger's head can take it as one of its fields (a date before it), and copies drop it
    ("ompi_sig", r"(?:\[[\w.-]+:\d+\] )?\*\*\* Process received signal \*\*\*", "*** Process received"),
    ("ompi_sig_line", r"(?:\[[\w.-]+:\d+\] )?(?:Signal: |Signal code: |Failing at address: |Associated errno: "
                      r"|\[ *\d+\] |\[\d+,\d+\]<std(?:err|out)>:)"),
    ("ompi_sig_end", r"(?:\[[\w.-]+:\d+\] )?\*\*\* End of error message \*\*\*"),
    # valgrind's preamble (coregrind/m_main.c print_preamble): the tool and its description, the copyright,
    # the version, the command (with -v more lines: the parent's pid, the options)
    ("vg_banner", r"(?:Memcheck|Helgrind|DRD|Cachegrind|Callgrind|Massif|DHAT|Lackey|Nulgrind), a ", ", a "),
    ("vg_banner_line", r"(?:Copyright \(C\) |Using Valgrind-|Command: |Parent PID: )"),
    # valgrind's stack lines (coregrind/m_stacktrace.c VG_(apply_StackTrace) printing "at 0x..: fn (file)" for the
    # first ip, "by 0x..: " for the callers), indented under the error's first line; copies that collapse the
    # indentation after the "==PID==" prefix leave them at the body's start, still under that line
    ("vg_frame", r"[ \t]*(?:at|by) 0x[0-9A-Fa-f]+: "),
    # Java Throwable.printStackTrace (and logback/log4j %throwable, V8 Error.stack "    at ...")
    ("j_uncaught", r"Exception in thread \"[^\"]*\" "),
    # (a Java frame is one also where a paste or a viewer stripped its indentation)
    # (V8 names a method called under another name "f [as g]" and a constructor "new F": messages.cc)
    ("j_at", r"[ \t]+at (?:async )?(?:new )?[^\s(]+(?: \[as [^\]]+\])?(?: \(|\()"
             r"|at (?:[\w$-]+[./])+[\w$<>-]+\((?:[\w$.-]*\.(?:java|scala|kt|groovy"
             r"|clj|aj)(?::\d+)?|Native Method|Unknown Source)\)"),
    # the rest of a frame a console hard-wrapped at its width (Windows' conhost wraps at 80 columns, at
    # column 0): the file name's tail, ':' and the line number, the ')' printStackTrace closes a frame with
    ("j_wrap_tail", r"[\w$.-]*(?::\d*)?\)\s*$"),
    # a frame's location on its own line: Rust's "      at src/main.rs:3:5", V8's "    at node:internal/x:23:47"
    ("at_path", r"[ \t]+at [^\s(]+:\d+(?::\d+)?$"),
    # a line a reporter or a tool put in a stack in place of the lines it left out, when the stack was pasted
    # into an issue or cut by a viewer: "...", "…", "[...]", "(...)", "<snip>", "[... snip ...]",
    # "<truncated>", "... (40 lines omitted)", "... 12 more lines ...", "\tat ..." in a Java stack. Only
    # the mark on its line, indented ("elided_in": at a frame's indent, the stack's) or at column 0
    # ("elided": held until a frame after it confirms it). Before "j_more", whose "... N more" is the JVM's own
    ("elided_in", r"[ \t]+(?:at )?" + _ELISION + r"\s*$"),
    ("elided", r"(?:at )?" + _ELISION + r"\s*$"),
    # the line that closes an asyncio object's repr left open (MODES "asyncio_repr"; after the elision marks, which
    # a line like "<snip>" is first)
    ("asyncio_repr_end", r".*>\s*$"),
    ("j_more", r"[ \t]*\.\.\. \d+ (?:more|common frames omitted)"),
    # .NET's Exception.ToString/StackTrace between the "   at " frames of one exception: where it was rethrown
    # (SR.Exception_EndStackTraceFromPreviousThrow: "--- End of stack trace from previous location ---", before
    # .NET Core 3 "... location where exception was thrown ---") and after an inner exception's frames
    # ("   " + SR.Exception_EndOfInnerExceptionStack)
    ("dotnet_marker", r"[ \t]*--- End of (?:stack trace from previous location(?: where exception was thrown)?"
                      r"|inner exception stack trace) ---\s*$", "--- End of "),
    # anyhow's and eyre's Debug of an error (what `main` returning Err prints after "Error: "): the
    # message, then sections each after a blank line, their titles alone on a line: "Caused by:" (the
    # causes indented, numbered "    0: " when more than one), eyre's "Location:" (the place indented),
    # "Stack backtrace:" (std's Backtrace: "   0: sym" / "             at file:l:c"); indented as a whole
    # where a logger indents a message's further lines (env_logger's format_indent)
    ("rust_caused", r"[ \t]*Caused by:\s*$"),
    # tracing-subscriber's Pretty formatter: the spans an event is in, each on its own line under it
    ("tracing_in", r"[ \t]+in [\w:<>]+(?: with |\s*$)"),
    ("rust_location", r"[ \t]*Location:\s*$"),
    ("rust_stack_bt", r"[ \t]*Stack backtrace:\s*$"),
    # color-eyre (handler.rs, config.rs): its panic hook's "The application panicked (crashed)." + "Message:  "
    # + "Location: "; the backtrace section under its rule "━━━ BACKTRACE ━━━" (frames and "⋮ N frames
    # hidden ⋮" indented by 2); the env section's hints, each on a line
    ("eyre_panic", r"The application panicked \(crashed\)\."),
    ("eyre_field", r"(?:Message: |Location: )"),
    ("eyre_bt_rule", r" *━{3,} BACKTRACE ━{3,}"),
    ("eyre_env", r"Backtrace omitted\. Run with RUST_BACKTRACE=1 "
                 r"|Run with (?:COLORBT_SHOW_HIDDEN=1|RUST_BACKTRACE=full) "),
    ("j_caused", r"[ \t]*Caused by: "),
    ("j_suppressed", r"[ \t]+Suppressed: "),
    ("j_circular", r"[ \t]*\[CIRCULAR REFERENCE: "),
    # an exception line with no message at all ("KeyboardInterrupt", "asyncio.exceptions.TimeoutError"):
    # traceback.py writes nothing of the exception after it but its notes and chained exceptions
    ("exc_bare", r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*\s*$"),
    # (Ray's "ray.exceptions.RayTaskError(ValueError): ..." names the cause's type in parentheses)
    ("j_exc", r"(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)(?:\([\w.]+\))?(?::|$)"),
    # libstdc++ __gnu_cxx::__verbose_terminate_handler
    ("terminate", r"[ \t]*terminate called (?:after throwing|without an active|recursively)"),
    ("what", r"[ \t]+what\(\):  "),
    # mmcv's and mmengine's load_state_dict report logged (logger.warning) or printed when not strict: its first
    # line, then after a blank line each list of keys (runner/checkpoint.py; the keys are the "msg_para" below)
    ("mm_sd_head", r"The model and loaded state dict do not match exactly\s*$"),
    # paragraphs libraries write into an exception's message after a blank line: torch._dynamo's
    # augment_exc_message (torch/_dynamo/exc.py: the user frames, the replay file, the verbosity hint, the
    # minifier script, the fallback to eager), torch.load's pointer to its documentation, PySpark's
    # "JVM stacktrace:", huggingface_hub's
    # hf_raise_for_status ("403 Client Error.", a blank line, then what was not found or not allowed)
    ("msg_para", r"(?:from user code:$|Set TORCH_LOGS=|Set TORCHDYNAMO_VERBOSE=1|Set torch\._dynamo\.config\.verbose="
                 r"|You can suppress this exception and fall back to eager|Last frame execution written to "
                 r"|Minifier script written to |(?:Revision|Entry|Repository) Not Found for url: "
                 r"|Cannot access (?:gated repo|repository) for url |Bad request(?: for \S+ endpoint)?:$"
                 r"|\d{3} Forbidden: "
                 # mmcv's and mmengine's load_state_dict (runner/checkpoint.py): "The model and loaded state dict do
                 # not match exactly\n" and its "unexpected key ..." / "missing keys ..." lines, each ending with a
                 # newline, joined by newlines (raised as a RuntimeError when strict, else logged or printed)
                 r"|(?:unexpected key|missing keys) in source state_dict: "
                 # torch.load's weights-only refusal (torch/serialization.py: "\n\nCheck the documentation ...")
                 r"|Check the documentation of torch\.load to learn more "
                 # PySpark's CapturedException.__str__ with spark.sql.pyspark.jvmStacktrace.enabled: the JVM's
                 # stack after a blank line (pyspark/errors/exceptions/captured.py)
                 r"|JVM stacktrace:\s*$"
                 # JAX's UnfilteredStackTrace (jax/_src/traceback_util.py _jax_message_append); before its frames
                 # were put first, jax/traceback_util.py's FilteredStackTrace note said "above" (its message:
                 # the original exception's format_exception_only, a blank line, then this note)
                 r"|The stack trace (?:below|above) excludes JAX-internal frames\.$"
                 # inductor's CppCompileError (torch/_inductor/exc.py: "C++ compile error\n\nCommand:\n<cmd>\n\n
                 # Output:\n<the compiler's diagnostics>")
                 r"|(?:Command|Output):\s*$"
                 # torch.fx's data-dependent guard errors (fx/experimental/symbolic_shapes.py
                 # _make_data_dependent_error, _get_stack_summary, _blame_user_code) and torch.export's pointer to
                 # draft_export (export/__init__.py)
                 r"|consider using data-dependent friendly APIs |For C\+\+ stack trace, run with TORCHDYNAMO_"
                 r"|The following call raised this error:\s*$|The error above occurred when calling torch\.export\."
                 # Ray's RayGetError (ray 0.5/0.6 worker.py: "... created by remote function f which failed
                 # with:\n\n" + str(RayTaskError)), whose own message is "Remote function f failed with:\n\n" and
                 # the remote traceback
                 r"|Remote function \S+ failed with:$)"),
    # TensorFlow's graph execution error (python/framework/error_interpolation.py): after "Graph execution
    # error:" and a blank line, "Detected at node N defined at (most recent call last):", the frames where the
    # op was built (TF 2.11+: "  File ..." each followed by an empty line; before: indented with their source),
    # the op's message, then the status's "\t [[{{node N}}]]" lines, the last with " [Op:__inference_...]"
    ("tf_detected", r"Detected at node .* defined at \(most recent call last\):\s*$", "Detected at node "),
    ("tf_node_line", r"\t \[\[.*\]\]", "[["),
    # TensorFlow 1's OpError.__str__ (python/framework/errors_impl.py): the message, an empty line, "Caused by op
    # 'X', defined at:" and the frames where the op was built (traceback.format_list), for an op made from another
    # an empty line and "...which was originally created as op 'Y', defined at:" with its frames, then an empty
    # line and "<Type> (see above for traceback): <message>": all the exception's message
    ("tf1_caused_by_op", r"Caused by op .*, defined at:\s*$", "Caused by op "),
    ("tf1_original_op", r"\.\.\.which was originally created as op .*, defined at:\s*$", "...which"),
    ("tf1_see_above", r"[A-Z]\w*Error \(see above for traceback\): "),
    # JAX's traceback filtering (jax/_src/traceback_util.py) adds a note to the exception: a rule of 20
    # dashes, then this line (the rule alone reads as a table's opening rule)
    ("jax_note", r"For simplicity, JAX has removed its internal frames from the traceback"),
    # (the note's second line, _jax_message_append: "The following"/"The preceding is the original exception
    # that occurred, unmodified.", an empty line, then its own rule of 20 dashes)
    ("jax_orig", r"The (?:following|preceding) is the original exception that occurred, unmodified\.\s*$",
     "original exception"),
    # the exception line of JAX's own exception that carries the original one's message (traceback_util.py:
    # FilteredStackTrace, later UnfilteredStackTrace(f"{format_exception_only(e)}\n\n{note}")): the last line
    # of a traceback, also where a paste starts at it; its message (the original's, over lines) follows it
    ("jax_stack_exc", r"(?:jax\.(?:_src\.)?traceback_util\.)?(?:Unfiltered|Filtered)StackTrace: ",
     "StackTrace: "),
    # xFormers' dispatch error (xformers/ops/fmha/dispatch.py): "No operator found for `op` with inputs:",
    # the inputs 5 blanks in, then per operator "`name` is not supported because:" and its reasons 4 blanks
    # in, all one exception message
    ("xf_unsupported", r"`[^`\s]+` is not supported because:\s*$", "` is not supported because:"),
    # gin-config's augment_exception_message_and_reraise appends where the error happened to the exception's
    # message (gin/config.py: "\n  In call to configurable '{}' ({}){}", and for a config file the location,
    # "  In file \"x.gin\", line N", with the line itself under it): part of that message, also where a paste
    # starts at the exception line
    ("gin_loc", r"  In (?:call to configurable '[^']*' \(|file [\"'][^\"']*[\"'], line \d+)", "  In "),
    # the hint TensorFlow's runtime appends to a ResourceExhausted status's message, on a line of its own under
    # the OOM text and its "[[node ...]]" line (TF 2 adds " This isn't available when running in Eager mode."):
    # part of that message wherever it is printed (an exception's, a status record's)
    ("tf_oom_hint", r"Hint: If you want to see a list of allocated tensors when OOM happens, add "
                    r"report_tensor_allocations_upon_oom to RunOptions", "report_tensor_allocations_upon_oom"),
    # TensorFlow's cpu_feature_guard.cc: its INFO record's second line (TF 2.11+: "To enable the following
    # instructions: AVX2 FMA, in other operations, rebuild ..."; before: "To enable them in other operations, ...")
    ("tf_cpu_hint", r"To enable (?:them|the following instructions: .*,) in other operations, rebuild TensorFlow "
                    r"with the appropriate compiler flags\.", "rebuild TensorFlow"),
    # c10_cuda_check_implementation's fixed hint lines (c10/cuda/CUDAException.cpp): part of a c10 message.
    # Without TORCH_USE_CUDA_DSA the check ends the message with this line (then only the c10::Error's
    # "Exception raised from ..." frames, after the empty line its trailing newline leaves)
    ("cuda_dsa", r"Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions\.", "TORCH_USE_CUDA_DSA"),
    ("cuda_hint", r"(?:CUDA kernel errors might be asynchronously reported|For debugging consider passing "
                  r"CUDA_LAUNCH_BLOCKING=1|Compile with `TORCH_USE_CUDA_DSA` to enable"
                  r"|Device-side assertion tracking)"),
    # ggml's CUDA_CHECK and CUBLAS_CHECK before ggml_cuda_error (ggml-cuda.cu): fprintf(stderr, "\nCUDA error %d
    # at %s:%d: %s\n", ...) (cuBLAS's alike), then fprintf(stderr, "current device: %d\n", id) and exit(1): two
    # writes of one report, the device line always right under it
    ("ggml_cuda_err", r"(?:CUDA|cuBLAS) error -?\d+ at \S+:\d+: \S", " error "),
    ("ggml_cuda_dev", r"current device: \d+\s*$", "current device: "),
    # transformers' cached_file (utils/hub.py) ends its OSError's message with this second line, after
    # "We couldn't connect to '...' to load this file, couldn't find it in the cached files ...": the message's own
    ("hf_offline_hint", r"Checkout your internet connection or see how to run the library in offline mode at ",
     "offline mode"),
    # c10::Error (c10/util/Exception.cpp): "Exception raised from f at file:N (most recent call first):"
    ("c10_raised", r"[ \t]*Exception raised from \S+ at "),
    # c10::get_backtrace "frame #N: sym + 0x.. (0x.. in lib)"; lldb bt "  * frame #N: 0x..."
    ("frame", r"[ \t]*(?:\* )?frame #\d+: "),
    # (c10::get_backtrace writes one such line in place of the interpreter's frames, c10/util/Backtrace.cpp)
    ("c10_omit", r"[ \t]*<omitting python frames>\s*$"),
    # sanitizer_common symbolizer (ASan/TSan/UBSan/MSan/LSan): "    #N 0xADDR in func file:line"
    ("san_frame", r"[ \t]+#\d+ 0x[0-9a-fA-F]+ (?:in |\()"),
    # ThreadSanitizer writes its frames without the pc (tsan_flags.cpp sets stack_trace_format to
    # "    #%n %f %S %M": function, file:line or "<null>", "(module+0xoffset)"; newer runtimes add
    # " (BuildId: ...)"): "    #0 main /src/a.c:822 (a.out+0x54f4)", "    #1 <null> <null> (libtsan.so.0+0x29b3d)"
    ("tsan_frame", r"[ \t]+#\d+ \S.* \([^\s()]+\+0x[0-9a-fA-F]+\)(?: \(BuildId: [0-9a-fA-F]+\))?\s*$", "+0x"),
    # (Report() puts "==PID==" before the tool's first line: ASan's and LSan's "ERROR: ...", MSan's
    # "WARNING: MemorySanitizer: use-of-uninitialized-value", msan_report.cpp; TSan prints its with Printf)
    ("san_head", r"==\d+==(?:ERROR|WARNING): \w+Sanitizer|WARNING: ThreadSanitizer|[A-Z]\w*Sanitizer:DEADLYSIGNAL",
     "Sanitizer"),
    ("go_race", r"WARNING: DATA RACE"),  # Go's race detector (the same runtime as TSan)
    # UBSan (ubsan_diag.cpp Diag::~Diag: "file:line:col: runtime error: ..."); written to stderr, it can land
    # after a progress line that stdout left without its newline (unittest's "test_x (m.C) ... "): text
    # without a ':' before it is such a line, not a message that quotes the error
    ("san_runtime", r"(?:[^:\n]* )?[^\s:]+:\d+:\d+: runtime error: ", "runtime error: "),
    ("san_summary", r"SUMMARY: \w+Sanitizer: "),
    # UBSan's notes under a runtime error (ubsan_diag.cpp: "0xADDR: note: pointer points here", then the
    # bytes and a caret, indented)
    # (RenderLocation writes a location in a module without symbols as "(module+0xoffset)": "... defined here")
    ("san_note", r"(?:0x[0-9a-fA-F]+|[^\s:]+:\d+:\d+|\([^\s()]+\+0x[0-9a-fA-F]+\)|<unknown>): note: ", "note: "),
    # ASan after its SUMMARY (asan_errors.cpp PrintShadowMemoryForAddress / PrintLegend, asan_report.cpp):
    # "Shadow bytes around the buggy address:", rows ("  0x0c04..: 00 fa", "=>0x0c04..: [fa]"), the legend
    # title and its indented lines ("==PID==ABORTING" after them is Die()'s line of its own)
    # (PrintShadowBytes writes a space before each byte, "[" before the guilty one: "=>0x1000468525f0:[f2]f2")
    ("san_shadow", r"Shadow byte(?:s around the buggy address| legend)|=>0x[0-9a-fA-F]+:[ \[]"),
    # (a row without the arrow: the address, then 16 shadow bytes, " %02x" each, the guilty one as "[%02x]"
    # with no blank after it, so one of ' ', '[', ']' before every byte; a row where an excerpt starts, the
    # middle of a report cut above it)
    ("san_shadow_row", r"[ \t]*0x[0-9a-fA-F]+:(?:[ \[\]][0-9a-fA-F]{2}){16}\]?\s*$"),
    # PaddlePaddle's error string (platform/enforce.h, init.cc SignalHandle): dashed section heads
    # "C++ Traceback (most recent call last):" with "N   frame" lines, then "Error Message Summary:"
    ("paddle_head", r"(?:C\+\+ Traceback \(most recent call last\)|Error Message Summary):"),
    # (GetCurrentTraceBackString writes this line under the head where it found no frame: the section goes on, a
    # blank line and the summary's dashed head)
    ("paddle_nostack", r"No stack trace in paddle, may be caused by external reasons\."),
    ("num_frame", r"[ \t]*\d+ {2,}\S"),
    # (SignalHandle's "  [TimeInfo: *** Aborted at N (unix time) ...]" and "  [SignalInfo: *** SIGSEGV (@0x0)
    # received by PID N ...]" under the summary's FatalError line, enforce's "  [Hint: ...]", "  [operator < x >
    # error]": indented details of the error line, read as such also where a copy dropped the indent)
    # (GetCurrentTraceBackString pads a frame's number with "%-4d": a copy whose blanks Markdown collapsed
    # writes "0 paddle_infer::Predictor::Predictor(...)")
    ("num_frame1", r"\d+ [^\s\d]"),
    ("paddle_info", r"[ \t]*\[(?:TimeInfo|SignalInfo|Hint): |[ \t]*\[operator < "),
    # UCX's signal handler (ucs/debug/debug.c): "Caught signal 11 (...)", "==== backtrace (tid: N) ====",
    # numbered frames, a closing rule of '='
    # (ucs_log_fatal_error writes the signal line after its "[host:pid:thread:tid] " prefix; older UCX
    # omits the tid from the backtrace's header; bfd-resolved frames are "N 0xADDR func()  file:line")
    # (ucs_log pads the pid to five columns: "[host:6807 :0:6807]")
    ("ucx_sig", r"(?:\[[\w.-]+:\d+ *:\d+(?::\d+)?\] +)?Caught signal \d+ \("),
    # a FATAL log record (ucs_log_default_handler: "[host:pid:thread:tid] file.c:line LEVEL: message"): at
    # that level UCX's error handler prints the backtrace right after it
    ("ucx_fatal", r"\[[\w.-]+:\d+ *:\d+(?::\d+)?\] +\S+:\d+ +(?:FATAL|Fatal error):? ", "] "),
    ("ucx_bt", r"==== backtrace (?:\(tid: *\d+\) )?===="),
    ("ucx_frame", r"[ \t]*\d+ +0x[0-9a-fA-F]+ \S"),
    # LLVM's crash handler (Support/PrettyStackTrace.cpp CrashHandler, then Signals' PrintStackTrace), as every
    # LLVM-based compiler prints it (clang, triton-opt, XLA's and Triton's JITs): the bug-report line, "Stack
    # dump:", the pretty stack's "N.\tProgram arguments: ..." / "N.\tRunning pass ..." entries, then frames
    # "#N 0xADDR symbol (module+0x..)" with "#N" right-justified
    ("llvm_please", r"PLEASE submit a bug report to \S+ and include the crash backtrace", "PLEASE submit"),
    ("llvm_stack_dump", r"Stack dump(?: without symbol names .*)?:\s*$", "Stack dump"),
    ("llvm_pst", r"\d+\.(?:\t| +)\S"),
    ("llvm_frame", r"[ \t]*#\d+ 0x[0-9a-fA-F]+ \S"),
    # backward-cpp's Printer (backward.hpp print_trace): "Stack trace (most recent call last)[ in thread N]:",
    # then per frame "#N" padded to 2, and "   Object \"lib\", at 0x.., in sym" or "   Source \"file\", line N,
    # in f [0x..]" (print_source_loc), inlined calls as "    | Source ...", snippets as "      123: code"
    # (">" on the line itself); its signal handler then calls psiginfo(), which writes the signal and glibc's
    # detail: "Aborted (Signal sent by tkill() PID UID)", "Segmentation fault (Address not mapped to object [0x0])"
    ("bwd_head", r"Stack trace \(most recent call last\)(?: in thread \d+)?:\s*$"),
    ("bwd_frame", r"#\d+ +(?:Object|Source) \""),
    ("bwd_inline", r" +\| Source \""),
    ("bwd_snippet", r"(?: *>)? +\d+: "),  # the blanks before '>' only with it: a blank run splits one way
    ("bwd_siginfo", r"[A-Z][a-z]+(?: [a-z]+)* \((?:Signal sent by \w+\(\) \d+ \d+"
                    r"|[A-Z][\w ]+ \[0x[0-9a-fA-F]+\])\)\s*$"),
    # gdb backtrace (stack.c print_frame): "#N  0xADDR in func (args) at file:line" / "#N  func (args) ..."
    # (frame #0 opens a backtrace: `bt` after a stop's "#0 ..." + source line, each thread of `thread apply
    # all bt` under its "Thread N (Thread 0x... (LWP n) "name"):" line)
    ("gdb_frame0", r"#0 +(?:0x[0-9a-fA-F]+ in \S|[\w:~<>.*&$-]+ \()"),
    # (print_frame_info writes a signal trampoline's frame and a call gdb made as "#N  <signal handler called>",
    # "#N  <function called from gdb>")
    ("gdb_frame", r"#\d+ +(?:0x[0-9a-fA-F]+ in \S|[\w:~<>.*&$-]+ \("
                  r"|<(?:signal handler|function) called(?: from gdb)?>)"),
    ("gdb_thread", r"Thread \d+ \((?:Thread|LWP|process) .*\):\s*$"),
    # `bt full` writes each frame's locals under it, indented, or one of these (stack.c print_frame_local_vars)
    ("gdb_nolocals", r"No (?:locals|symbol table info available)\.\s*$"),
    # A row of a table whose every cell is a value, under a header printed once: nvidia-smi dmon's rows
    # ("    0   111    83    25 ...   -     -", right-aligned, '-' for none); fastai's Recorder table through
    # fastprogress' ConsoleMasterBar.write(table=True) ("0         0.318497    0.223164    0.927000  00:13": each
    # cell padded to its name's width plus two, floats "%.6f", format_time's mm:ss). Each row is a record of its
    # own, written when its interval or epoch ends: not a gdb source line, not a deeper line of the header
    # (the first gap is two blanks or more: the first column is padded, and a log line's "081109 203615 148 INFO"
    # fails at once; or a tab, as csv.DictWriter(delimiter="\t") writes DVCLive's plots/metrics/*.tsv rows,
    # "1717243200123\t100\t0.4321" under "timestamp\tstep\tloss")
    ("value_row", r"[ \t]*(?:" + _CELL + "|" + _UCELL + r")(?:[ \t]{2,}|\t)(?:" + _CELL + "|" + _UCELL
     + r")(?:[ \t]+(?:" + _CELL + "|" + _UCELL + "|" + _TAIL_CELL + r"))+[ \t]*$"),
    ("gdb_src", r"(?:warning: )?\d+(?:\t| {2,}\S)"),
    # absl failure_signal_handler ("*** SIGSEGV received at time=..."), glog's failure handler
    # ("*** Aborted at N (unix time) ..." then "*** SIGSEGV (@0x0) received by PID ..."), absl CHECK
    ("absl_sig", r"[ \t]*\*\*\* (?:SIG[A-Z]+ received|Aborted at \d+|Check failure stack trace: \*\*\*)"),
    ("glog_sig", r"[ \t]*\*\*\* SIG[A-Z]+ \(@"),
    # (glog's DumpStackTrace writes each pc with "%p": glibc prints a null one, the last frame of many
    # unwinds, as "(nil)": "    @              (nil)  (unknown)"; the MSVC runtime prints the pointer's
    # hex digits without "0x", in capitals and zero-padded: "    @   00007FF7E2D9712B  google::LogMessage::Fail")
    ("absl_frame", r"[ \t]*(?:PC: )?@ +(?:0x[0-9a-fA-F]+|[0-9A-F]{8}(?:[0-9A-F]{8})? |\(nil\)"
                   r"|\.\.\. and at least \d+ more frames)"),
    # dmlc-core's LogMessageFatal (dmlc/logging.h, as in XGBoost, MXNet, TVM): the record "[hh:mm:ss] file:line: "
    # + the message, then "Stack trace:" and StackTrace()'s frames, "  [bt] (N) " + backtrace_symbols' line
    ("dmlc_bt_head", r"Stack trace:\s*$"),
    ("dmlc_bt", r"[ \t]+\[bt\] \(\d+\) "),
    # caffe2's and c10's fatal signal handler (caffe2/utils/signal_handler.cc, c10/util/signal_handler.cpp
    # stacktraceSignalHandler): per thread "SIGSEGV(11), [PID: N, ]Thread N: ", then the thread's frames --
    # caffe2's printStacktrace "[i] name[+0xoff](pc)[ in lib]" (name "???" without a symbol, a null pc "0"),
    # c10's get_backtrace "frame #i: ..." -- and an empty line
    ("c2_sig", r"SIG[A-Z]+\(\d+\), (?:PID: \d+, )?Thread \d+: ?$"),
    ("c2_frame", r"\[\d+\] \S.*\((?:0x[0-9a-fA-F]+|0)\)(?: in \S.*)?$", "] "),
    # TensorFlow/XLA's CurrentStackTrace (tsl/platform/stacktrace.h) and its kin: "*** Begin stack trace ***",
    # tab-indented frames, "*** End stack trace ***"
    ("bt_begin", r"[ \t]*\*{3,} ?[Bb](?:egin|EGIN) [Ss](?:tack|TACK) [Tt](?:race|RACE) ?\*{3,}"),
    ("bt_end", r"[ \t]*\*{3,} ?[Ee](?:nd|ND) [Ss](?:tack|TACK) [Tt](?:race|RACE) ?\*{3,}"),
    # (CurrentStackTrace writes each frame as a tab and the demangled symbol, at most 128 frames: a run
    # of such lines whose "Begin" line was cut above them ends at the "End" line)
    ("tsl_frame", r"\t(?:[\w$.~]|::|<[^<>]*(?:<[^<>]*>[^<>]*)*>|\([^()]*(?:\([^()]*\)[^()]*)*\)|\[abi:\w+\])+"
                  r"(?: const)?(?: \[clone [^\]]*\])*\s*$"),
    # TSL's signal handler (platform/default/stacktrace_handler.cc StacktraceHandler): "*** Received signal N
    # ***", backtrace_symbols_fd's frames between "*** BEGIN MANGLED STACK TRACE ***" and "*** END MANGLED
    # STACK TRACE ***" and a blank line, then CurrentStackTrace's "*** Begin stack trace ***" section
    ("tsl_signal", r"\*\*\* Received signal \d+ \*\*\*"),
    ("tsl_mangled", r"\*\*\* BEGIN MANGLED STACK TRACE \*\*\*"),
    ("tsl_mangled_end", r"\*\*\* END MANGLED STACK TRACE \*\*\*"),
    # Open MPI's MPI_ERRORS_ARE_FATAL report (ompi/errhandler/errhandler_predefined.c): the lines of
    # help-mpi-errors.txt's "mpi_errors_are_fatal" behind "[host:pid] ", or the same lines bare from
    # backend_fatal_no_aggregate before MPI_INIT; the error string's line is any text, and the report
    # ends with "***    and potentially your MPI job)"
    ("ompi_fatal", r"(?:\[[\w.-]+:\d+\] )?\*\*\* An error occurred ", "*** An error occurred "),
    ("ompi_fatal_end", r"(?:\[[\w.-]+:\d+\] )?\*\*\* +and potentially your MPI job\)"),
    ("ompi_fatal_line", r"(?:\[[\w.-]+:\d+\] )?\*\*\* \S"),
    # glibc debug/backtracesyms.c "%s(%s%c%#tx) [%p]" and malloc's "*** Error in" report
    # (and "%s[%p]" / "[%p]" when dladdr finds no symbol)
    ("glibc_frame", r"[ \t]*[^\s()\[\]]*(?:\([^()\s]*[+-]0x[0-9a-fA-F]+\) ?)?\[0x[0-9a-fA-F]+\]$", "[0x"),
    # boost::stacktrace's operator<< (detail/frame_decl.hpp to_string): each frame "%2d# " (a space before
    # a one-digit index; a launcher's prefix "[rankN]: " may take it), then the function "at file:line" or
    # "in module", or "0x%016X in module"
    ("boost_frame", r" ?\d+# \S", "# "),
    # (older glibc: "*** glibc detected *** prog: double free ..."; a Markdown copy escapes a '*', a
    # terminal copy may shift the first line by a blank)
    ("glibc_err", r" ?\*\*\\?\* (?:Error in [`'][^']*'|glibc detected \*\*\\?\* |stack smashing detected"
                  r"|buffer overflow detected)"),
    ("glibc_section", r"======= (?:Backtrace|Memory map): ="),
    ("maps_line", r"[0-9a-f]{8,16}-[0-9a-f]{8,16} [r-][w-][x-][ps-] "),
    # systemd-coredump (src/shared/elf-util.c, coredumpctl info): "Process N (comm) of user N dumped core.",
    # coredumpctl's right-aligned fields ("           PID: N (comm)"), then per thread "Stack trace of
    # thread N:" and "#N  0xADDR sym (module + 0xoff)" frames, threads separated by blank lines
    ("sd_dumped", r"(?:[ \t]*Message: )?Process \d+ \([^)]*\) of user \d+ dumped core\."),
    ("sd_pid", r" {3,}PID: \d+ \("),
    ("sd_stack", r"[ \t]*Stack trace of thread \d+:"),
    ("sd_frame", r"[ \t]*#\d+ +0x[0-9a-fA-F]+ \S+ \("),
    ("sd_module", r"[ \t]*Module \S+ (?:with(?:out)? build-id|from )"),
    ("sd_elf", r"[ \t]*ELF object binary architecture: "),
    # HotSpot's fatal error header (vmError.cpp): '#'-framed lines from a bare "#" on
    ("hs_err", r"# (?:A fatal error has been detected by the Java Runtime Environment|There is insufficient memory "
               r"for the Java Runtime Environment)"),
    ("hash_bare", r"#\s*$"),
    ("hash_line", r"# |\[error occurred during error reporting"),
    # glog's and klog's log file header (glog logging.cc LogFileObject::Write, klog createFile): "Log file
    # created at: yyyy/mm/dd hh:mm:ss", "Running on machine: host", optional "Application fingerprint: ",
    # "Running duration (h:mm:ss): " (glog) or "Binary: Built with ..." (klog), then "Log line format: ..."
    ("glog_file", r"[ \t]*Log file created at: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d"),
    ("glog_file_line", r"[ \t]*(?:Running on machine|Application fingerprint|Running duration \(h:mm:ss\)|Binary): "),
    ("glog_file_end", r"[ \t]*Log line format: "),
    # Spark's YARN client (yarn/Client.scala formatReportDetails): the report's fields, each written
    # "\n\t key: value" in this order under one record; the diagnostics' value spans lines (YARN's
    # container diagnostics, which quote the tail of the container's own logs) and "user" is the last
    ("yarn_diag", r"[ \t]+diagnostics: "),
    ("yarn_field", r"[ \t]+(?:client token|ApplicationMaster host|ApplicationMaster RPC port|queue|start time"
                   r"|final status|tracking URL): "),
    ("yarn_user", r"[ \t]+user: "),
    # Hadoop's container diagnostics (ContainerLaunch, ContainerExecutor): after the launch failure's
    # "Stack trace: " and the stack, "Container exited with a non-zero exit code N" (Hadoop 3 stamps it
    # "[time]" and names the error file: ". Error file: prelaunch.err.", then "Last N bytes of <file> :" and
    # the file's tail; without it the exit line is the diagnostics' last. The stamp's date alone reads as a
    # record head, "[2019-12-04 ": the time left of it is part of the shape)
    ("yarn_exited_tail", r"(?:\[[^\]]{1,40}\]|\d\d:\d\d:\d\d\.\d+\])?Container exited with a non-zero exit code \d+\. "
                         r"Error file: "),
    ("yarn_exited", r"(?:\[[^\]]{1,40}\]|\d\d:\d\d:\d\d\.\d+\])?Container exited with a non-zero exit code \d+"),
    # Spark's TaskSetManager aborts a job with "... most recent failure: <reason>\nDriver stacktrace:" (the
    # reason holds the executor's exception and its frames, then an empty line): the SparkException's own
    # frames follow that line, so a stack goes on after it
    ("spark_driver", r"Driver stacktrace:\s*$"),
    # Spark standalone's ExecutorRunner and DriverRunner start the child's stderr file with one write:
    # "Spark Executor Command: <quoted argv>" (or "Launch Command: "), a rule of 40 '=', a blank line
    ("spark_cmd", r"(?:Spark Executor Command|Launch Command): \""),
    # SerenityOS's kernel backtrace (Kernel/KSyms.cpp dump_backtrace): "{:p}  {} +{}" (address, symbol,
    # offset) per frame, the address alone where no symbol is known (userspace frames)
    ("serenity_frame", r"0x[0-9a-f]{8}(?:[0-9a-f]{8})?  \S+.* \+\d+\s*$"),
    ("serenity_addr", r"0x[0-9a-f]{8}(?:[0-9a-f]{8})?\s*$"),
    # macOS backtrace_symbols: "N  image  0xADDR symbol + offset"
    ("mac_frame", r"\d+ +\S+ +0x[0-9a-fA-F]+ \S.* \+ \d+"),
    # lldb process stop report and thread backtrace
    ("lldb_stop", r"Process \d+ stopped"),
    # the process's other state changes (Process::HandleProcessStateChangedEvent, the run command's result):
    # written apart from a stop report, after it where the stop came first ("Process N launched: '..'")
    ("lldb_process", r"Process \d+ (?:launched|resuming|exited|detached)(?:[:\s]|$)"),
    # (the selected thread is starred; "bt all" writes the others' headers without the star)
    ("lldb_thread", r"[ \t]*(?:\* )?thread #\d+(?:[,:]|\s*$)"),
    ("lldb_target", r"Target \d+: \(.*\) stopped\."),
    # the source lines lldb lists under a stop's frame #0 (SourceManager::File::DisplaySourceLines: a marker
    # padded to two columns, "->" at the stop's line, a space, the line number left-justified in four, a
    # tab, the source line; under the stop's line "    \t" and a caret at its column); lldb on Linux
    # writes no "Target N: (..) stopped." after them, so the listing is the report's end (a launcher's prefix
    # "[rankN]: " may take one of the leading spaces)
    ("lldb_src", r"(?:-> | {2,3})\d+ *(?:\t.*)?$| {3,4}\t *\^\s*$"),
    # Go runtime (runtime/panic.go printpanics, runtime/traceback.go)
    ("go_panic", r"panic: |fatal error: "),
    # where traceback.go cannot unwind a frame it prints, inside the stack, "runtime: unexpected return pc
    # for f called from 0x..", then tracebackHexdump's "stack: frame={sp:0x.., fp:0x..} stack=[0x..,0x..)"
    # and the stack's words (print.go hexdumpWords: "0x..: " every 16 bytes, each word after a mark
    # ' ', '<' (sp), '>' (fp) or '!' (the bad pc), a "<func+0x..>" after a word it can symbolize)
    ("go_bad_pc", r"runtime: (?:g ?\d+: )?unexpected return pc for "),
    ("go_hexdump_head", r"stack: frame=\{sp:0x[0-9a-fA-F]+, fp:0x[0-9a-fA-F]+\} stack=\["),
    ("go_hexwords", r"0x[0-9a-fA-F]+: [ <>!]0x[0-9a-fA-F]+ "),
    # the runtime's diagnostics before a throw ("runtime: goroutine stack exceeds 1000000000-byte limit",
    # "runtime: sp=0x.. stack=[..]" then "fatal error: stack overflow": runtime/stack.go newstack)
    ("go_runtime_note", r"runtime: \S"),
    ("go_nested", r"[ \t]+panic: "),
    # runtime/signal_unix.go sighandler: the signal's name and description ("SIGQUIT: quit") then "PC=.. m=N
    # sigcode=N"; a terminal's echo of the key that sent it (ECHOCTL writes Ctrl+\\ as "^\\") may come first
    ("go_sig", r"(?:\^[A-Z\\])?SIG[A-Z]+: [a-z][\w ]*$"),
    # (its next line: print("PC=", hex(pc), " m=", mp.id, " sigcode=", code), " addr=" hex where the signal
    # has an address; Go 1.4 wrote "PC=0x.. m=N"), then every goroutine and, after a blank line, dumpregs'
    # registers, one a line: "rax    0x0", "rflags 0x246", arm64's "r0      0x0", "lr ..."
    # (on Windows, signal_windows.go winthrow: "Exception " and the exception's code, its first two
    # parameters and the pc, each in hex, then "PC=0x.." without the m, a blank line and the faulting
    # goroutine's frames without a header (tracebacktrap), then the other goroutines and the registers)
    ("go_win_exc", r"Exception 0x[0-9a-fA-F]+ 0x[0-9a-fA-F]+ 0x[0-9a-fA-F]+ 0x[0-9a-fA-F]+\s*$"),
    ("go_sig_pc", r"PC=0x[0-9a-fA-F]+(?: m=-?\d+(?: sigcode=-?\d+)?(?: addr=0x[0-9a-fA-F]+)?)?\s*$"),
    ("go_signal", r"\[signal [A-Z]+"),
    ("go_reg", r"[a-z][a-z0-9]{1,6} +0x[0-9a-fA-F]+\s*$"),
    ("go_goroutine", r"goroutine \d+ (?:gp=\S+ m=\S+ (?:mp=\S+ )?)?\["),
    ("go_runtime_stack", r"runtime stack:"),
    # containerd's and its shims' dumpStacks on SIGUSR1 log runtime.Stack(all) between two markers in one
    # record ("=== BEGIN goroutine stack dump ===\n%s\n=== END goroutine stack dump ==="), behind a logger's
    # head or inside logrus' msg="..."
    ("go_dump_begin", r"(?:.*[ \"])?=== BEGIN goroutine stack dump ===", "=== BEGIN goroutine"),
    ("go_dump_end", r"=== END goroutine stack dump ==="),
    ("go_created", r"created by "),
    ("go_file", r"(?:[ \t]+|/)(?:[^\s:]*\.(?:go|s)|<autogenerated>|\?):\d+(?: |$)"),
    # a file line whose tab a relay dropped; also old k8s HandleCrash's callers (util/runtime logPanic: one
    # "file:line" per runtime.Caller, no tab), where a compiler-made wrapper's file is "<autogenerated>"
    ("go_file_bare", r"(?:[^\s:]+\.(?:go|s)|<autogenerated>):\d+(?: |$)"),
    # runtime/traceback.go: "...additional frames elided..." past the frame limit, and in a deep stack's
    # middle "...N frames elided..." (traceback1 prints the first and last frames)
    ("go_elided", r"[ \t]*\.\.\.(?:additional|\d+) frames elided\.\.\."),
    ("go_func", r"(?:[\w.%~\u00b7-]+/)*[\w.%~\u00b7-]+(?:\[[^\]]*\])?(?:\.\(\*?[\w.]+(?:\[[^\]]*\])?\)[\w.\u00b7]*)?"
                r"\([^()]*\)$"),
    # warnings.formatwarning's source line (TOKENS "warn_src") where a copy lost its indentation (a notebook's
    # output pasted as text): only the warn call itself, the line most library warnings show (stacklevel=1),
    # is known for one
    ("warn_src_bare", r"warnings\.warn(?:_explicit)?\("),
    # zap's and errors' stacks name the function without its arguments ("net/http.(*conn).serve"): held
    # until its file line
    ("go_func_bare", r"(?:[\w.~%-]+/)*[\w~%-]+\.[\w.*()\[\]~%-]+$"),
    # klog/v2 writes a string value that holds newlines as "key=<", each of its lines behind a tab, then
    # " >" on a line of its own, the record's further key/values after it (internal/serialize
    # writeStringValue); that line may open the next such value. (A prefix such as "[rank3]: ?" may
    # have taken the blank before '>')
    ("klog_reopen", r" ?>.*=<\s*$"),
    ("klog_close", r" ?>(?: |\s*$)"),
    # Rust std panicking.rs default_hook and the backtrace printer; since Rust 1.89 the hook names the
    # thread's id after its name: "thread 'main' (6720) panicked at src/main.rs:22:20:"
    ("rust_panic", r"thread '[^']*'(?: \(\d+\))? panicked at "),
    # (the hook writes to stderr: after a line stdout left unterminated (a model's streamed text) the header
    # continues that line; Rust 1.73+ ends it with the location and ':', the message on the lines below)
    ("rust_panic_glued", r".*thread '[^']*'(?: \(\d+\))? panicked at [^\s:]+:\d+:\d+:\s*$", "' panicked at "),
    # (before Rust 1.73 the hook quoted the message: "thread 'main' panicked at '{msg}', {file}:{line}:{col}"; a
    # message over several lines leaves its end and the location on a line of their own: "', src/build.rs:207:13")
    ("rust_msg_tail", r"[ \t]*', [^\s']+:\d+:\d+\s*$"),
    # (std's panicking.rs closes a panic that cannot unwind, in a destructor or a nounwind function, with
    # "thread caused non-unwinding panic. aborting.")
    ("rust_note", r"note: (?:run with `RUST_BACKTRACE=|Some details are omitted)"
                  r"|thread caused non-unwinding panic\. aborting\."),
    ("rust_bt_head", r"[ \t]*stack backtrace:"),
    ("rust_frame", r"[ \t]+\d+:\s+(?:0x[0-9a-fA-F]+ - |\S*::)"),
    # pip closes a failed build's subprocess output box (indented like the traceback inside it)
    ("pip_box_end", r"[ \t]*\[end of output\]"),
    # pip's own records: its IndentingFormatter (pip/_internal/utils/logging.py) writes every logger call
    # behind the indentation indent_log() has reached, so the steps of one requirement come indented under
    # its "Collecting X" without being part of it: "Requirement already satisfied: ", the download
    # (network/download.py _log_download: "Downloading X (1.9 MB)", "Using cached X") and rich's bar under it
    # ("━━━━━ 1.9/1.9 MB 371.5 kB/s eta 0:00:00"), the non-interactive spinner's "<step>: started" and
    # "<step>: finished with status 'error'" (cli/spinners.py; on a terminal "<step> ... done"), the wheel
    # builder's (wheel_builder.py: "Created wheel for X: filename=...", "Stored in directory: ..."; a
    # DiagnosticPipError's box is "pip_err"); the install's own steps (commands/install.py, req/req_install.py,
    # req_uninstall.py: "Installing collected packages: ", "Attempting uninstall: X", "Found existing installation:
    # X 1.0", "Uninstalling X-1.0:", "Successfully uninstalled X-1.0", indented one level further each); after a
    # failed build's box, the two verbose records utils/subprocess.py call_subprocess logs on their own: "full
    # command: <args>" and "cwd: <dir or [inherit]>"
    ("pip_status", r"[ \t]*(?:Collecting \S|full command: \S|cwd: (?:/|[A-Za-z]:\\|\[inherit\])"
                   r"|Requirement already satisfied: |Downloading \S+ \(|Using cached \S"
                   r"|Installing collected packages: |Attempting uninstall: |Found existing installation: "
                   r"|Uninstalling \S+:\s*$|Successfully uninstalled \S"
                   r"|[\u2501\u2578\u257a]+ [\d.]+/[\d.]+ [kMGT]?B "
                   r"|(?:Preparing metadata|Building wheel|Getting requirements to build wheel"
                   r"|Installing build dependencies|Running setup\.py \w+ for )[^:]*"
                   r"(?:: (?:started|finished with status)| \.\.\. (?:done|error|canceled)\s*$)"
                   r"|Building wheels for collected packages: |Created wheel for \S+: |Stored in directory: )"),
    # the fields of Dask's "Compute Failed" warning (MODES "dask_compute")
    ("dask_field", r"(?:Key|State|Function|args|kwargs|Exception|Traceback): +\S"),
    # NVIDIA compute-sanitizer: every line starts with "========= "
    ("cs_end", r"=========\s*$"),
    ("cs_cont", r"=========\s{2,}\S"),
    ("cs_open", r"========= \S"),
    # Linux printk reports (lib/dump_stack.c, kernel/panic.c __warn, kernel/hung_task.c, mm/kasan)
    ("kern_start", r"INFO: task \S+ blocked for more than|BUG: |WARNING: CPU: \d+ PID: \d+|Kernel panic - not syncing"
                   r"|general protection fault|Oops: |------------\[ cut here \]------------|Unable to handle kernel"
                   r"|watchdog: BUG: soft lockup|(?:rcu: )?INFO: rcu_(?:sched|preempt) detected stalls"),
    ("kern_end", r"---\[ end "),
    # the x86 frame unwinder's dump of the stack it could not walk (arch/x86/kernel/unwind_frame.c unwind_dump,
    # after "WARNING: kernel stack frame pointer at ... has bad value" and "unwind stack type:..."): one printk a
    # word, "%p: %0*lx (%pB)", a run of zero words as "%p: %0*x ..."; a dump whose header was cut opens the
    # report with it
    ("kern_word", r">?[0-9a-f]{16}: [0-9a-f]{16} (?:\(\S+(?: \[[\w-]+(?: [0-9a-f]+)?\])?\)|\.\.\.)\s*$"),
    ("kern_line", r"(?:CPU: \d+ |Hardware name: |Call Trace:|Call trace:|RIP: |RSP: |R[A-Z0-9]{2}: |Code: "
                  r"|Modules linked in:"
                  r"|Kernel Offset:|Rebooting in|Allocated by task|Freed by task|The buggy address|Memory state around"
                  r"|Dumping ftrace|Not tainted|Tainted:|task:\S+ +state:|>?[0-9a-f]{16}: |\"echo 0 > /proc|Workqueue: "
                  r"|irq event stamp:|hardirqs |softirqs |Showing all locks|\d+ locks? held by|#\d+: |pc : |lr : |sp : "
                  r"|x\d+: |Read of size|Write of size|page:|flags: |raw: |page dumped because"
                  # x86's page fault report (arch/x86/mm/fault.c show_fault_oops, dump_pagetable): "IP: [<addr>]
                  # sym" (before 4.x, "RIP: " since), "#PF: ..." (since 5.x), one page table level a line
                  r"|IP: |#PF: |(?:PGD|P4D|PUD|PMD|PTE) [0-9a-f]+ ?)"),
    # a call trace's frame (arch/x86/kernel/dumpstack.c printk_stack_address: "%s %s%pBb\n", "? " before
    # an unreliable address; arm64's dump_backtrace the same without it): "sym+0xoff/0xsize [module]", a
    # record of its own in dmesg but the report's line; a trace whose header was cut opens the report with it
    ("kern_frame", r"[ \t]+(?:\? )?[A-Za-z_.$][\w.$]*\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[[\w-]+(?: [0-9a-f]+)?\])?\s*$"),
    ("kern_task", r"\S+ +[RSDTtZXIK]\s*\d+ +\d+ +\d+ 0x"),  # sched_show_task: "comm  D21856  8442  4763 0x..."
    # framed tables and boxes: a rule of 10+ '=', '-' or '*' (bare, or with a title)
    # pytest's section rules (_pytest/terminal.py write_sep("=", title): the fill shrinks to one "=" each side of a
    # long title, "= 3 failed, 2 passed, 1 warning in 0.60s =")
    ("pt_eq", r"=+ \S.* =+\s*$", "= "),
    ("rule_eq", r"={10,}\s*$"),
    ("rule_dash", r"-{10,}\s*$"),
    ("rule_star", r"\*{10,}\s*$"),
    ("rule_eq_t", r"={10,}"),
    ("rule_dash_t", r"-{10,}"),
    ("rule_star_t", r"\*{10,}"),
    # tables drawn in ASCII (tabulate's "psql"/"grid", PrettyTable, MySQL's client): "+---+---+" rules
    # and "| a | b |" rows
    ("rule_plus", r"\+(?:[-=]{2,}\+)+\s*$"),
    ("pipe_row", r"\|.*\|\s*$"),
    # transformers' loading report (transformers/utils/loading_report.py log_state_dict_report, one
    # logger.warning): "<Model> LOAD REPORT from: <path>", a table of keys ("Key | Status | ..." over a
    # "-+-" rule, a row per key), then "\n\nNotes:" and a "- STATUS:\t<note>" line per status shown
    # transformers' report of the weights a checkpoint did not fill (modeling_utils.py _load_pretrained_model,
    # one logger.warning or logger.info each, the message's lines joined by newlines, no head of their own):
    # "Some weights of the model checkpoint at P were not used when initializing M: [..]" + "- This IS expected
    # if ..." + "- This IS NOT expected if ..."; "Some weights of M were not initialized from the model checkpoint
    # at P and are newly initialized[ because the shapes did not match]: [..]" (then a "- key: found shape ..."
    # line per mismatch) + "You should probably TRAIN this model ..."; "All the weights of M were initialized from
    # the model checkpoint at P." + "If your task is similar to the task ..."
    ("hf_weights", r"(?:Some weights of .*(?: were not used when initializing | were not initialized from the model "
                   r"checkpoint )|All the weights of \S+ were initialized from the model checkpoint )", "weights of "),
    ("hf_weights_more", r"- This IS expected if |- \S.*: found shape "),
    ("hf_weights_end", r"You should probably TRAIN this model |- This IS NOT expected if |If your task is similar to "
                       r"the task the model of the checkpoint was trained on"),
    # huggingface/tokenizers' fork warning (bindings/python/src/utils/parallelism.rs child_after_fork, run in the
    # child by pthread_atfork): three eprintln! calls, "huggingface/tokenizers: The current process just got forked,
    # after parallelism has already been used. Disabling parallelism to avoid deadlocks...", "To disable this
    # warning, you can either:", then two tab-led bullets, "- Avoid using `tokenizers` before the fork if possible"
    # and "- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)". A forked DataLoader
    # worker writes it while the parent's tqdm bar holds the line: its first line may come glued after the bar
    ("tok_fork", r".*huggingface/tokenizers: The current process just got forked, after parallelism has already been"
                 r" used\.", "huggingface/tokenizers: "),
    ("tok_fork_more", r"To disable this warning, you can either:\s*$"),
    ("tok_fork_avoid", r"\s+- Avoid using `?tokenizers`? before the fork if possible"),
    ("tok_fork_end", r"\s+- Explicitly set the environment variable TOKENIZERS_PARALLELISM="),
    # systemctl's failed job (src/shared/bus-wait-for-jobs.c log_job_error_with_service_result): one log_error
    # call over two lines, "Job for <unit> failed[ because <explanation>]." then "See \"systemctl status <unit>\"
    # and \"journalctl -xe[u <unit>]\" for details." (systemd 232-: one line with both, which needs no rule)
    ("sd_job_failed", r"Job for \S+ failed(?: because .*)?\.\s*$"),
    ("sd_job_see", r"See \"\S*systemctl [^\"]*status [^\"]*\" and \"\S*journalctl [^\"]*\" for details\.\s*$"),
    ("hf_report", r"(?:\x1b\[1m)?[\w.]+ LOAD REPORT(?:\x1b\[0m)? from: ", " LOAD REPORT"),
    ("hf_row", r"[^\s|][^|]* \| ", " | "),
    ("hf_rule", r"-+(?:\+-+)+\s*$"),
    ("hf_notes", r"Notes:\s*$"),
    ("hf_note", r"- (?:\x1b\[[\d;]*m)?[A-Z]+:(?:\x1b\[[\d;]*m)?\t"),
    # a member whose string value is left open at the line's end: its text runs over lines, as VS Code copies a
    # notebook's error output ({"name": ..., "message": ..., "stack": ...} with the stack's newlines written as they
    # are, its quotes and backslashes escaped), to the line whose unescaped quote closes it (MODES "json_str")
    ("json_str_open", r'[ \t]*"[^"]{1,200}": "(?:[^"\\]|\\.)*$'),
    ("json_str_close", r'(?:[^"\\]|\\.)*"[ \t]*,?[ \t]*$'),
    # a JSON object's member or closing bracket on a line of its own (pretty-printed dumps)
    ("json_member", r"[ \t]+\"[^\"]{1,200}\": "),
    ("json_close", r"[ \t]*[}\]],?\s*$"),
    # a line of a dump written without indentation starts with a bracket or a quoted member
    # (Elasticsearch's JSON layout writes its "stacktrace" array's items at column 0)
    ("json_line", r"[\[\]{}\"]"),
    # java.util.logging SimpleFormatter's second line: "LEVEL: message"
    ("jul_level", r"(?:SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST): "),
    # c10's warning handler ends a TORCH_WARN message it hands to Python's warnings with
    # "{msg} (Triggered internally at {file}:{line}.)": the message's last line, the source line comes after
    ("c10_triggered", r"[ \t]?.*\(Triggered internally at \S+:\d+\.\)\s*$", "(Triggered internally at "),
    # warnings.formatwarning's source line: exactly two spaces, then the stripped source (one, when a
    # stream prefix written without a space, torchrun's "[rank3]:", took the first as its separator)
    ("warn_src", r"  ?\S"),
    # torchrun's ChildFailedError box (torch/distributed/elastic/multiprocessing/errors/__init__.py
    # _MSG_FORMAT_TEMPLATE): its '-' section rule, then "Root Cause (first observed failure):", the root
    # failure's fields and the closing '=' rule
    ("box_root", r"Root Cause \(first observed failure\):\s*$", "Root Cause"),
    # (a failure's fields, _FAILURE_FORMAT_TEMPLATE: the name padded to 10, ": ", the value; where the excerpt
    # starts among them, the box's other parts cut, they are held until its closing '=' rule confirms them)
    ("box_field", r"  (?:time      |host      |rank      |exitcode  |error_file|traceback ): "),
    # (the title under its border: "{name} FAILED")
    ("box_title", r"\S.* FAILED\s*$"),
    # (the other failures' section under the box's first '-' rule: "Failures:", then "[N]:" and the fields)
    ("box_failures", r"Failures:\s*$", "Failures:"),
    # an error named inside an exception's message, by the naming convention of exception classes
    # ("ncclUnhandledCudaError: Call to CUDA function failed.")
    ("exc_named", r"[A-Za-z_][\w.]*(?:Error|Exception|Failure|Interrupt|Exit)\w*: "),
    # a Python exception line: "Name: message" or a bare name (the line after a traceback's frames)
    ("exc_line", r"[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:\([\w.]*\))?(?::(?: |$)|$)"),
    # Ray's RayTaskError.__str__ (python/ray/exceptions.py) writes the remote traceback with its "Traceback (most
    # recent call last):" line replaced by "ray::<proctitle>() (pid=N, ip=A[, actor_id=.., repr=..])", also
    # after a chain marker and at the end of a message that quotes the error ("Exception raised in creation
    # task: The actor died because of an error raised in its creation task, ray::A.__init__() (pid=..)")
    ("ray_tb", r"(?:\S.*? )?ray::\S+\(\) \(pid=\d+, ip=[\w.:-]+(?:, actor_id=\w+, repr=.*)?\)\s*$", "ray::"),
    # a YAML mapping's top-level line, "key: value" or "key:" (OmegaConf.to_yaml, yaml.dump: the config a
    # recipe logs after "... with resolved config:" and a blank line, torchtune's and Hydra's apps); last in
    # this table, so that every other shape is read first
    # Python source a program prints, a class or function at column 0 with its indented body: torch.fx's
    # GraphModule code (fx/graph_module.py print_readable: "class GraphModule(torch.nn.Module):", blank lines
    # between the statements of a node group; Graph.python_code: "def forward(self, ...):"), which torch.export
    # prints to stderr before it raises (export/_trace.py, the partial graph of a failed trace)
    # pytest's report of one test (_pytest/terminal.py summary_failures, summary_errors, summary_passes:
    # write_sep("_", "test_x" or "ERROR at setup of test_x"), then the report's longrepr and its captured sections)
    ("pt_title", r"_{3,} \S.* _{3,}\s*$", "___ "),
    ("py_def", r"(?:class \w+\([\w., ]*\)|def \w+\(.*\)(?: -> .+)?):\s*$", ":"),
    # the source line of a traceback's last frame where an excerpt starts below its "  File" line: traceback.py
    # writes the statement stripped, 4 blanks in (a copy may drop them): an assignment from a call, a call, a
    # raise or return. Held until the exception line under it confirms it (MODES "py_src_cut")
    ("py_stmt", r"[ \t]{0,8}(?:[A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:, ?[A-Za-z_][\w.]*)* ?[-+*/%@|&^]?= ?(?:await )?"
                r"[A-Za-z_][\w.]*(?:\[[^\]]*\])*\(.*|(?:raise [A-Z]\w*|return [A-Za-z_][\w.]*)(?:\(.*)?$"
                r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(.*\)$)"),
    ("yaml_key", r"[A-Za-z_][\w.-]*:(?: \S.*)?$"),
    # a dict a record announced ("...:", a blank line) as pprint.pformat writes it: "{" then its first key's
    # repr ("{'lr': 0.1,", with indent= "{ 'agent0': {"; RLlib's summarize pformats a sample batch into its
    # "Trajectory fragment after postprocess_trajectory():\n\n{}" record), or json.dumps(indent=...)'s "{" alone
    ("dump_open", r"\{ ?(?:['\"]|\s*$)"),
    # an item of a list a line announced ("...:" and the items "- " at column 0, one write: Ray Train's controller
    # logs "Started training worker group of size 4: \n" + "\n".join of "- (ip=.., pid=..) world_rank=.." lines,
    # worker_group.py _start_impl), as YAML writes a sequence under its key
    ("bullet", r"- \S"),
    # PowerShell's error record as its console host writes it (the ErrorRecord's default view, "ErrorInstance" in
    # PowerShellCore_format_ps1xml.cs, NormalView): "<command> : <message>" (the message hard-wrapped at the
    # console's width), the InvocationInfo's PositionMessage ("At line:1 char:1" or "At <script>:12 char:5",
    # localized as "所在位置 行:1 字符: 653"; then "+ " with the source and "+ " with the '~' carets under it), and the
    # fields "    + CategoryInfo          : ..." and "    + FullyQualifiedErrorId : ...". The first line is held
    # with the message's further lines until the position or a field confirms them (MODES "ps_msg"); the command is
    # one word (a cmdlet, "python.exe") or a Windows path, which may hold blanks
    ("ps_msg", r"(?:\S+|[A-Za-z]:\\[^:]*?|\.{1,2}\\[^:]*?) : \S"),
    ("ps_pos", r"(?:At (?:line:\d+ char:\d+|\S.*:\d+ char:\d+)|所在位置 行:\d+ 字符: ?\d+)\s*$"),
    ("ps_src", r"\+ "),
    ("ps_field", r"[ \t]+\+ [A-Za-z]+ +: "),
)

# Lines that are records of their own (ending a free-text part of a block) without a head:
# (name, pattern, literal the line must contain for the pattern to be tried, or None).
RECORDS: tuple[tuple[str, str, str | None], ...] = (
    # tqdm bars (with sglang's bar_format, and the text-only form notebooks show: " 17% 1/6 [01:01<05:09]")
    ("tqdm", r"[^|]{0,80}?\d%(?:\||\s+Completed \|| \d+/\d+ \[)", "%"),
    # NCCL src/debug.cc: "host:pid:tid [dev] NCCL INFO ..." (newer: "... [dev] file.cc:N NCCL WARN ...")
    ("nccl", r"[\w.-]+:\d+:\d+ \[\d+\] (?:[\w./-]+:\d+ )?NCCL (?:INFO|WARN|TRACE|ABORT)", None),
    ("megatron_iteration", r"iteration\s+\d+/\s*\d+ \|", None),  # Megatron training_log
    # ctest's status lines (cmCTestRunTest: "Start" right-aligned before the test's number, then
    # "N/M Test #N: name .....   Passed   0.01 sec"): each is a line of its own, never an indented line of the
    # "test N" line -V writes above it
    ("ctest", r"Start +\d+: \S+\s*$|\d+/\d+ Test +#\d+: \S+ \.+", None),
    # cargo's status lines (a verb right-aligned to column 12): "    Finished `dev` profile [...]",
    # "     Running `target/debug/x`", "   Compiling serde v1.0.1 (...)"
    # (before cargo 1.77 the profile is named bare: "Finished release [optimized] target(s) in 4.33s")
    # (cargo test's "Running" names the test target, src/cargo/ops/cargo_test.rs cmd_builds: "unittests src/lib.rs
    # (target/debug/deps/x-hash)", "tests/it.rs (target/...)"; before cargo 1.56 the bare executable path)
    ("cargo_status", r"(?:Finished (?:`\w+` profile|[\w-]+ \[)|Running (?:`|unittests |[\w./\\-]+\.rs \(|target[/\\])"
                     r"|(?:Compiling|Checking|Downloaded|Fresh|Documenting) [\w-]+ v\d)", None),
    # Keras' Progbar (verbose=1 written to a file): "  12/1875 [>.....] - ETA: 5:23 - loss: 2.30"
    ("keras_progbar", r"\d+/\d+ \[[=>.]*\] - ", "] - "),
    ("ds_chat_step", r"epoch: \d+\|step: \d+\|", None),  # DeepSpeed-Chat's step print
    # Ray Tune's progress report (tune/progress_reporter.py _get_trial_progress_str / CLIReporter.report): a
    # print of its own whose first line is "== Status ==", also right under a trial's traceback
    ("tune_status", r"== Status ==\s*$", "== Status"),
    # shells and debuggers (bash's "user@host:dir$ "; zsh's default PROMPT "%n@%m %1~ %# ", macOS's default shell:
    # "user@host dir % ", after a virtualenv's "(venv) ")
    ("prompt", r"[\w.-]+@[\w.-]+:\S*[$#] |\((?:gdb|lldb|Pdb)\) |>>> |(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+ [^\s%#$]+ [%#] ",
     None),
    # a shell's prompt without user@host: the working directory and "$" (zsh's and fish's "dir $", a
    # virtualenv's "(venv) "), PowerShell's "PS C:\dir> "; alone, or before the command typed after it
    ("prompt_dir", r"(?:\([\w.-]+\) )?(?:[~\w.-]*[/~][\w./~-]*|[\w.-]+) ?\$(?: \S|\s*$)"
                   r"|(?:\([\w.-]+\) )?PS [A-Z]:\\[^>]*> ", None),
    ("shell_status", r"(?:Killed|Aborted|Segmentation fault|Bus error|Illegal instruction)(?: \(core dumped\))?\s*$",
     None),
    ("slurm", r"(?:srun|slurmstepd|sbatch|salloc): ", None),
    # cmd.exe's COPY ("%1 file(s) copied.", the count right-aligned in 9 columns) and XCOPY ("N File(s) copied"):
    # one line per command, never an indented line of the one above
    ("win_copy", r"\d+ [Ff]ile\(s\) copied\.?\s*$", "copied"),
    # PyInstaller's bootloader after PyErr_Print() has written the traceback (pyi_launch.c: "Failed to execute
    # script '%s' due to unhandled exception!", older ones "Failed to execute script %s", behind "[PID] "): its
    # own line, not a line of the exception's message
    ("pyinstaller_failed", r"(?:\[\d+\] )?Failed to execute script \S", "Failed to execute script"),
    # The kernel's log as dmesg -t or a journal prints it, where a GPU job's own output may meet it: the NVIDIA
    # driver's error log (nvErrorLog_va: "NVRM: Xid (", one line each; NVRM's other messages may run over
    # several lines, each with the prefix again), its modules ("nvidia-uvm: ", "nvidia-nvswitch0: ") and
    # dev_printk's "<driver> <PCI address>: " (mlx5_core, pcieport's AER reports, the nvidia module itself)
    ("kernel_driver", r"NVRM: S?Xid \(|nvidia-(?:uvm|modeset|peermem|nvswitch\d*): "
                      r"|[\w-]+ [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: ", None),
    # GNU make's error report ("make: *** [Makefile:12: test] Error 1", "make[2]: *** [x] Aborted")
    ("make", r"(?:g?make|ninja)(?:\[\d+\])?: \*\*\* ", None),
    # bash's job status after a child dies: "./run.sh: line 8: 30182 Aborted (core dumped) cmd"
    ("bash_status", r"\S+: line \d+: +\d+ (?:Aborted|Killed|Segmentation fault|Bus error|Illegal instruction"
                    r"|Floating point exception)", None),
    # pip's progress lines, each logged on its own and indented by indent_log under the requirement it works on
    # (operations/prepare.py "Collecting %s", "Using cached %s", "Downloading %s"; the spinners' "Preparing
    # metadata (setup.py) ... done"; rich's download bar "━━━ 6.0/6.0 MB 164.7 kB/s eta 0:00:00"): never an
    # indented line of the one above
    ("pip_status", r"(?:Collecting|Using cached|Downloading|Requirement already satisfied:|Obtaining) \S"
                   r"|(?:Installing build dependencies|Getting requirements to build wheel|Preparing metadata \(\S+\)"
                   r"|Building wheel for \S+ \(\S+\)) \.\.\. "
                   r"|\u2501+ [\d.]+/[\d.]+ [kMGT]?i?B ", None),
    ("json", r"\{\s*\"", None),
    # HF Trainer's metrics, a dict printed whole by its progress callback
    ("hf_metrics", r"\{'(?:loss|eval_\w+|train_\w+|epoch|learning_rate|grad_norm)'", None),
    ("logfmt", r"(?:time|ts|level)=", None),
    # a structured record of key=value pairs and nothing else ("step=100 loss=2.17 lr=3e-4")
    ("kv_pairs", r"[\w.-]+=[^\s=]+(?: +[\w.-]+=[^\s=]*)+\s*$", "="),
    ("mlir", r"loc\(\"[^\"]*\":\d+:\d+\): (?:error|warning|note|remark): ", None),  # MLIR diagnostics
    ("level_bracket", r"\[(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR)\b", None),  # bracketed levels not in HEADS
    # "LEVEL: message", as programs print their own warnings and errors (glog's "WARNING: Logging before
    # InitGoogleLogging()", pip's "ERROR: ...", the DataLoader worker's "ERROR: Unexpected ...")
    ("level_colon", r"(?:TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|SEVERE|FATAL|CRITICAL): ", None),
    # a line that starts with a date and a time of day, or a time alone, is a record of a logger
    # whatever its layout ("[10.30 20:43:49] ", "20171223-22:19:58:381|", "11:25:44 "); so is one whose first
    # field ends with them (a file name stamped with its rotation time, then the record's own time)
    ("stamp", r"\[?(?:[\w.-]*[._-])?(?:\d{4}[-./]\d\d[-./]\d\d|\d\d[-./]\d\d(?:[-./]\d{2,4})?|\d{8})[ T_-]"
              r"\d\d?:\d\d:\d\d?|\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?[ \t]", None),
    ("megatron_msg", r">(?: |$)", None),  # Megatron's print_rank_0 messages (" > building ...")
    # gdb's own event lines ("[New Thread 0x.. (LWP N)]", "[Inferior 1 (process N) exited ...]")
    ("gdb_event", r"\[(?:New (?:Thread|LWP)|Thread 0x[0-9a-fA-F]+ \(LWP \d+\) exited|Inferior \d+ |Switching to "
                  r"|Current thread is )", None),
    # gdb's stop report (infrun.c print_signal_received_reason): "Program received signal SIGABRT, Aborted."
    ("gdb_signal", r"(?:Program|Thread \d+ \"[^\"]*\") received signal SIG[A-Z]+"
                   r"|Program terminated with signal ", None),
    # CPython's own reports that open with a line of their own, then a traceback: sys.unraisablehook
    # ("Exception ignored in: <obj>", Python/errors.c), atexit ("Error in
    # atexit._run_exitfuncs:", Python 2's "Error in sys.exitfunc:"), threading.excepthook ("Exception in
    # thread NAME:"; Java's names its thread in quotes), logging.Handler.handleError ("--- Logging error ---"),
    # asyncio's default exception handler ("Exception in callback ...", "Task/Future exception was never
    # retrieved"). Each is a new report, never the next line of the exception message above it (atexit and
    # unraisablehook write them back to back at shutdown). Since 3.13 CPython reports most unraisable errors
    # with PyErr_FormatUnraisable's own message, which the default hook writes with ":" after it
    # (Python/errors.c write_unraisable_exc_file): "Exception ignored while calling deallocator <function
    # X.__del__ at 0x..>:", "... while calling weakref callback ...:", "... on calling ctypes callback function
    # ...:", "Exception ignored in sys.unraisablehook:"
    ("py_report", r"Exception ignored in: |Exception ignored \S.*:\s*$"
                  r"|Error in (?:atexit\._run_exitfuncs|sys\.exitfunc):\s*$"
                  r"|Exception in thread [^\"\s].*:\s*$|--- Logging error ---\s*$"
                  r"|(?:Task|Future) exception was never retrieved\s*$|Exception in callback ", None),
)
# Tokens their printers write bare (traceback.py's exception line, printStackTrace's): a line with a
# record head of its own is a new record, not the exception line of the stack before it; so is a line
# that is a record of its own without a head ("ERROR: ...", "srun: error: ...", RECORDS).
BARE_TOKENS = frozenset(("exc_bare", "exc_line", "j_exc"))
# A held prefix-only line goes with the next line, not the previous block, when that line is an
# NCCL WARN: NCCL writes each WARN as "\n<header> NCCL WARN ..." (src/debug.cc); wandb's footer panel
# starts with its newline (sdk/lib/printer.py panel: "\n" + "Run history:" ..., each line behind "wandb: ").
LEADING_BLANK_RE = re.compile(r".*NCCL WARN|Run (?:history|summary):\s*$")

# -- 4. what a token starts: (mode, multiline kind) ------------------------------------------------
STARTS: dict[str, tuple[str, str | None]] = {
    "pip_box_end": ("plain", None),  # a line of its own whatever it follows
    "pip_status": ("plain", None),  # (so is each of pip's own records)
    "pip_err": ("pip_box", "pip_error"),
    "pip_x": ("pip_box", "pip_error"),  # (a box cut above its "error: <reference>" line)
    "pip_legacy": ("pip_legacy", "pip_error"),
    "conda_report": ("conda_report", "python_traceback"),
    "comfy_report": ("comfy_report", "python_traceback"),
    "empty_head": ("await", None),  # a record head with nothing after it: the message is on the next line
    "empty_prefix": ("lead", None),  # a writer's prefix with nothing after it (see LEADING_BLANK_RE)
    "py_tb": ("py_head", "python_traceback"),
    "py_eg": ("py_eg", "python_traceback"),
    "py_embedded": ("py_embedded", "python_traceback"),  # (a MultiError's report cut above its details)
    "ray_tb": ("py_head", "python_traceback"),
    "eg_line": ("py_eg", "python_traceback"),  # an exception group whose head was cut
    "py_file": ("py_frames", "python_traceback"),  # a traceback whose head was cut
    # a chained traceback whose first part was cut or elided: traceback.py's TracebackException.format writes
    # the chain's message, an empty line, then the next traceback, so the message opens that traceback
    "py_chain": ("py_chain", "python_traceback"),
    "py_file_bare": ("py_bare_frame", "python_traceback"),  # (its indentation stripped)
    "comfy_exec": ("comfy_head", "python_traceback"),
    "fh_file": ("fatal_frames", "python_fatal"),  # a thread dump whose head was cut
    "py_fatal": ("py_fatal", "python_fatal"),
    "py_timeout": ("py_timeout", "python_fatal"),
    "py_thread": ("fatal_frames", "python_fatal"),  # faulthandler.dump_traceback without a fatal error
    "py_warning": ("py_warn", "python_warning"),
    "ipy_tb": ("ipy", "python_traceback"),
    "ipy_num": ("ipy_cut", None),  # the middle of a traceback whose head was cut
    "ipy_frame": ("ipy_cut_frame", None),  # (cut at a frame's header)
    "jax_stack_exc": ("py_msg", "python_traceback"),  # (a traceback's exception line, its frames cut above it)
    "rich_tb": ("rich_tb", "python_traceback"),
    "py_process": ("await", None),
    "accel_state": ("accel_state", None),
    "accel_defaults": ("accel_defaults", None),
    "py_remote": ("py_remote", "python_traceback"),
    "node_src": ("node_src", "node_error"),
    "cc_incl": ("cc_head", "compiler_diagnostic"),
    "cc_ctx": ("cc_head", "compiler_diagnostic"),
    "cc_req": ("cc_head", "compiler_diagnostic"),
    "cc_diag": ("cc_body", "compiler_diagnostic"),
    "cc_warn": ("cc_body", "compiler_diagnostic"),
    "cc_note": ("cc_body", "compiler_diagnostic"),  # (the notes of a diagnostic cut above)
    "cc_gutter_num": ("cc_cut", None),  # (the locus of a diagnostic cut above its first line)
    "ninja_failed": ("ninja_failed", "ninja_failed"),
    "cmake_msg": ("cmake_msg", "cmake_message"),
    "vg_banner": ("vg_banner", "valgrind"),
    "ompi_sig": ("ompi_sig", "ompi_backtrace"),
    "ompi_fatal": ("ompi_fatal", "mpi_error"),
    "j_uncaught": ("java_head", "java_stack"),
    "j_exc": ("java_head", "java_stack"),
    "j_caused": ("java_head", "java_stack"),
    "j_at": ("java_frames", "java_stack"),  # a stack whose exception line was cut
    "terminate": ("terminate", "cpp_frames"),
    "cuda_hint": ("c10_msg", "cpp_frames"),  # a c10 CUDA message whose first line was cut
    "cuda_dsa": ("c10_msg", "cpp_frames"),
    "c10_raised": ("c10_frames", "cpp_frames"),
    "frame": ("c10_frames", "cpp_frames"),
    "san_frame": ("san_report", "llvm_sanitizer"),
    "tsan_frame": ("san_report", "llvm_sanitizer"),  # a TSan report whose header was cut
    "san_head": ("san_report", "llvm_sanitizer"),
    "san_runtime": ("ubsan", "llvm_sanitizer"),
    "go_race": ("go_race", "go_race"),
    "gdb_frame": ("gdb", "gdb_bt"),
    "bwd_head": ("backward", "cpp_frames"),
    "bwd_frame": ("backward", "cpp_frames"),
    "gdb_frame0": ("gdb", "gdb_bt"),
    "gdb_thread": ("gdb_thread", "gdb_bt"),
    "absl_sig": ("sig_head", "cpp_frames"),
    # (Paddle's section heads open its error string also where a paste lost the dashed rules around them:
    # Markdown renders unfenced "-----" lines as a horizontal rule)
    "paddle_head": ("paddle", "cpp_frames"),
    "san_shadow_row": ("san_done", "llvm_sanitizer"),
    "absl_frame": ("sigdump", "cpp_frames"),
    "c2_sig": ("c2_sigdump", "cpp_frames"),
    "c2_frame": ("c2_sigdump", "cpp_frames"),  # a thread's frames whose header was cut
    "glibc_frame": ("glibc", "glibc_backtrace"),
    "boost_frame": ("boost_bt", "cpp_frames"),
    "glibc_err": ("glibc_report", "glibc_backtrace"),
    "mac_frame": ("mac_bt", "macos_backtrace"),
    "lldb_stop": ("lldb_stop", "lldb_stop"),
    "lldb_thread": ("lldb_bt", "lldb_bt"),
    "go_panic": ("go_head", "go_panic"),
    "go_sig": ("go_head", "go_panic"),
    "go_win_exc": ("go_head", "go_panic"),
    "go_runtime_note": ("go_runtime", "go_panic"),
    "go_goroutine": ("go_stack", "go_panic"),
    "go_dump_begin": ("go_stack", "go_panic"),
    "go_file": ("go_stack", "go_panic"),  # a dump whose head was cut
    "rust_panic": ("rust_panic", "rust_panic"),
    "rust_panic_glued": ("rust_panic", "rust_panic"),
    "eyre_panic": ("eyre_panic", "rust_panic"),
    "ucx_sig": ("ucx", "cpp_frames"),
    "ucx_fatal": ("ucx", "cpp_frames"),
    "llvm_please": ("llvm_crash", "cpp_frames"),
    "llvm_stack_dump": ("llvm_crash", "cpp_frames"),
    "ucx_bt": ("ucx", "cpp_frames"),
    "rust_bt_head": ("rust_bt", "rust_panic"),
    "rust_frame": ("rust_bt", "rust_panic"),
    "at_path": ("rust_bt", "rust_panic"),
    "cs_open": ("cs_report", "sanitizer_report"),
    "cs_cont": ("cs_report", "sanitizer_report"),  # a report cut above: its detail lines, Host Frames
    "dmlc_bt_head": ("dmlc_bt", "cpp_frames"),
    "dmlc_bt": ("dmlc_bt", "cpp_frames"),  # (its header cut)
    "rust_msg_tail": ("rust_panic", "rust_panic"),  # (the panic line cut above its message's end)
    "cmd_not_found": ("cmd_not_found", "shell_error"),
    "pyd_validation": ("py_msg_more", "python_traceback"),
    "mamba_solve": ("mamba_problems", "solver_error"),
    "ps_msg": ("ps_msg", None),
    "kern_start": ("kernel", "kernel_report"),
    "kern_frame": ("kernel", "kernel_report"),  # (a call trace whose header was cut)
    "kern_word": ("kernel", "kernel_report"),  # (an unwinder's stack dump whose header was cut)
    "rule_eq": ("table_eq", "table"), "rule_eq_t": ("table_eq", "table"),
    "rule_dash": ("table_dash", "table"), "rule_dash_t": ("table_dash", "table"),
    "rule_star": ("table_star", "table"), "rule_star_t": ("table_star", "table"),
    "rule_plus": ("table_plus", "table"),
    "box_root": ("py_box_cut", "childfailed_box"),  # torchrun's box cut above its root-cause section
    "box_field": ("py_box_cut", "childfailed_box"),  # the same box cut among a failure's fields
    "pipe_row": ("table_plus", "table"),  # an ASCII table whose opening rule (and header) was cut
    "box_top": ("box", "table"),
    "rich_box": ("box", "table"),  # a box whose top edge was cut
    "bt_begin": ("begin_bt", "cpp_frames"),
    "tsl_frame": ("tsl_frames", "cpp_frames"),  # TSL's frames whose "Begin" line was cut
    "tsl_signal": ("tsl_signal", "cpp_frames"),
    "tsl_mangled": ("tsl_mangled", "cpp_frames"),
    "serenity_frame": ("serenity_bt", "cpp_frames"),
    "glog_file": ("glog_file", "glog_header"),
    "yarn_field": ("yarn_report", "yarn_report"),
    "yarn_diag": ("yarn_diag", "yarn_report"),
    "spark_cmd": ("spark_cmd", "spark_command"),
    "sd_dumped": ("coredump", "coredump"),
    "sd_pid": ("coredump", "coredump"),
    "sd_stack": ("coredump", "coredump"),
    "hs_err": ("hs_err", "jvm_fatal_error"),
    "hash_bare": ("hash_open", None),
    "json_member": ("json_tail", "json_dump"),  # a pretty-printed dump whose first lines were cut
    "py_ext_cut": ("py_ext_more", "python_fatal"),
    "hf_report": ("hf_report", None),
    "hf_weights": ("hf_weights", None),
    "ggml_cuda_err": ("ggml_cuda", "other_multiline"),
    "tok_fork": ("tok_fork", None),
    "sd_job_failed": ("sd_job", None),
    "mm_sd_head": ("mm_sd", "other_multiline"),
    "usage_head": ("usage", "usage_error"),
    "pytest_usage": ("pytest_usage", "usage_error"),
    "fire_error": ("fire_error", None),
    "hydra_compact": ("hydra_compact", None),
    "mpich_exit": ("mpich_exit", None),
    "pl_summary": ("pl_summary", "model_summary"),
    "pl_grid": ("pl_grid", "model_summary"),
    "wandb_sync_info": ("wandb_header", None),
    "wandb_panel": ("wandb_panel", "wandb_summary"),
    "unsloth_top": ("unsloth", None),
    "wandb_sync": ("wandb_sync", None),
    "py_def": ("py_def", "python_source"),
    "py_stmt": ("py_src_cut", None),  # a frame's source line whose "  File" line was cut above it
    "pt_title": ("pt_report", "pytest_report"),
    # an elision mark at column 0 where no stack is open: the frames after it are the rest of the stack a
    # reporter cut above them ("elided_lead"); without them it is a line of its own
    "elided": ("elided_lead", None),
    # the values under a source line where an excerpt starts (loguru's diagnose, better_exceptions): held
    # with the lines under them until the next frame's '  File "..."' confirms them ("py_values")
    "py_value": ("py_values", None),
}
# Starts that are soft: inside a block whose mode does not name them they are read as text (a c10
# CUDA hint line is the message's own line after a traceback's exception line; a boxed line under a
# record is a table, nvidia-smi's, unless an exception group opened the block).
SOFT_STARTS = frozenset(("cuda_hint", "cuda_dsa", "tsan_frame", "eg_line", "hash_bare", "ipy_frame", "ipy_num",
                         "json_member",
                         "tsl_frame", "yarn_field", "yarn_diag", "usage_head", "fire_error", "hydra_compact", "py_def",
                         "box_field", "elided", "py_stmt", "jax_stack_exc",
                         # (XGBoostError's message carries dmlc-core's whole fatal record, its stack too)
                         "dmlc_bt_head", "dmlc_bt",
                         # (a table's numbered row, " 0 | encoder | Linear", is no compiler's cut locus)
                         "cc_gutter_num",
                         # (a line "<command> : <message>" is text to every mode but PowerShell's own)
                         "ps_msg",
                         # (pydantic's exception line under a traceback is that traceback's)
                         "pyd_validation"))
# Heads whose record opens a mode of its own (by the name of the record's innermost head): torch's
# c10 ERROR and FATAL records ("[E207 ...]", older "[E file.cpp:916] ") carry an exception's what()
# (free text, then "Exception raised from ..." and frames); java.util.logging's SimpleFormatter writes
# the level and message on the line after its time and source. glog/klog records without brackets
# are single lines unless a stack follows (handled as any record).
HEAD_STARTS: dict[str, tuple[str, str | None]] = {
    "h_c10_error": ("c10_msg", "cpp_frames"),
    "h_c10_short_error": ("c10_msg", "cpp_frames"),
    "h_jul": ("jul", None),
    "h_tracing_pretty": ("tracing_pretty", "rust_log"),
    "h_ucs_fatal_line": ("ucx", "cpp_frames"),
}
# Heads of formatters that never write a Java throwable under a record (see MODES "record_native"):
# their records open "record_native" where others open "record".
RECORD_MODES: dict[str, str] = {f"h_{name}": "record_native" for name in (
    "vllm", "torch_logging", "glog", "c10_error", "c10", "c10_short_error", "c10_short", "ray_cpp", "deepspeed",
    "hf", "nemo", "tornado", "trtexec", "swift", "asctime_dash", "asctime_pipe", "loguru", "rich", "rich_same_time",
    "py_basic", "name_level", "uvicorn", "logrus", "dmlc")}
# A JVM's records: log4j's "%ex" writes a Java throwable under a record, never a Python traceback. In
# PySpark the driver's Python traceback comes right after the JVM's last record on the same stderr
# ("ERROR TaskSetManager: Task 0 in stage 0.0 failed 1 times; aborting job"): it is its own event.
RECORD_MODES["h_log4j_yy"] = "record_jvm"
# C++ code's glog/absl records (TensorFlow's "W0000 00:00:1796174706.849965 20378 local_rendezvous.cc:412]
# Local rendezvous is aborting with status: ...", then the Python traceback of the error it reports)
RECORD_MODES["h_glog_cc"] = "record_cpp"
# A record whose message ends like this starts the mode (logger.exception's "...: Traceback ...").
BODY_SUFFIX_STARTS: tuple[tuple[str, str, str], ...] = (
    ("Traceback (most recent call last):", "py_head", "python_traceback"),
    # Ray's node.py when the GCS does not come up: "Failed to start GCS. Last N lines of error files:",
    # then the last C/E lines of gcs_server.err quoted as they are (Ray's C++ log lines, with their heads)
    ("lines of error files:", "ray_err_files", "ray_error_files"),
    # klog/v2's "key=<": a string value over lines follows (MODES "klog_value")
    ("=<", "klog_value", "klog_record"),
    # Dask's worker logs a failed task with logger.warning("Compute Failed\nKey:       %s\nState:     %s\n"
    # "Function:  %s\nargs:      %s\nkwargs:    %s\nException: %r\nTraceback: %r\n", ...) (distributed/worker.py;
    # older releases without Key, State and Traceback): one record, its fields on the lines below (MODES "dask_compute")
    ("Compute Failed", "dask_compute", "dask_compute_failed"),
)
# A source whose last lines came each followed by one blank line (a copy or a relay that doubled every
# newline) is read as if those blank lines were not there: after this many such lines in a row, one
# blank line does not end what the grammar would continue.
SPACED_AFTER = 2
# A terminal (or a console that wraps at a fixed width: Rich at COLUMNS, a Windows console, tmux's or
# screen's scrollback when copied) cuts a line longer than its width into lines of exactly that width, the
# rest at column 0 without a head. Terminals are at least 80 columns wide; narrower lines are not taken for
# cut ones (merger._wraps).
WRAP_MIN_WIDTH = 80
# A relay's prefix (horovodrun's "[0]<stderr>:", mpirun's tags) is written on the line its writer wrote; a
# terminal that cuts that line puts the rest below it without one. Where the cut falls on the blank between
# two words the rest begins with that one blank ("...opened dynamic library" / " libcudart.so.11.0"):
# the word after it is what must look like the middle of a line.
WRAP_AT_BLANK_RE = re.compile(r" \S")
JSON_OPEN = "{["  # a line ending with one of these opens a JSON dump until the brackets balance

# -- 5. modes --------------------------------------------------------------------------------------
# What ends each block, by the evidence its printer leaves. A block ends on a line that is a record of
# its own (a head of its own, RECORDS: NCCL, tqdm/Keras bars, JSON/logfmt/key=value records, prompts,
# shell and make status, lines led by a time stamp; a line of another writer's prefix) wherever its
# table says "cont", "tent", "deeper", "announce" or "after_colon"; only "cont!"/"last" take such a
# line, for shapes the printer itself writes (frames, "Caused by:", box rules).
# - printers with a known last line end there: sanitizers' SUMMARY, compute-sanitizer's bare rule,
#   "Extension modules:", "*** End stack trace ***", lldb's "Target N: ... stopped.", Rust's note,
#   the kernel's "---[ end trace", HotSpot's last '#' line, a box's bottom edge, a framed table's rule,
#   torchrun's closing '=' rule, balanced JSON brackets;
# - frame lists end at the first line that is not a frame of their grammar (py_frames: then only the
#   exception line; java_frames, go_stack, c10_frames, glibc, sigdump, gdb, lldb_bt, rust_bt, coredump);
# - free text (a Python exception's message: py_msg; Java's: java_head; c10's what(): c10_msg; a Rust
#   panic's message; a logger record's further lines: body) ends at a record of its own; Python's and
#   Rust's take a line of text only after a line ending with ':' or once the message showed it spans
#   lines (indented lines, an inner error named); Java's is held until frames confirm it, and a blank
#   line ends it (ends_at_blank); a JSON dump ends at a line of text at column 0;
# - held lines ("tent": a warning's message before its source line, table rows before their rule,
#   text under a record before the stack it announces) are confirmed only by the printer's next shape
#   and are read again on their own otherwise;
# - a record opens a block on the next line only with positive evidence: a stack or frame start that
#   its level or message announces (WARN and up as a word of the head, "...:", "Exception in ..."),
#   frames that cannot stand alone ("\tat", "frame #N", "... N more") after a JVM formatter's record,
#   a deeper-indented line; a record of a formatter that never prints a Java throwable
#   (RECORD_MODES) takes Java or c10 frames only when it announces them.
_C, _S, _E, _L, _T = "cont", "cont!", "end", "last", "tent"

# anyhow's and eyre's report sections (ErrorImpl::debug, eyre's DefaultHandler::debug): after a blank
# line under the error's message, whatever wrote the message (std's "Error: " for `main`, a logger's
# record with "{:?}")
# the reports that open with an '=' rule, each taken from the rule's mode on its header: unittest's
# failure, sanitizer_common's report (ASan, LSan, MSan, TSan), Go's race detector, the kernel's report
_RULE_EQ_REPORTS = {"ut_case": (_S, "ut_head"), "san_head": (_S, "san_report"), "go_race": (_S, "go_race"),
                    "kern_start": (_S, "kernel")}
_RUST_SECTIONS = {"rust_caused": (_S, "rust_causes"), "rust_location": (_S, "rust_loc"),
                  "rust_stack_bt": (_S, "rust_bt"), "eyre_bt_rule": (_S, "eyre_bt"), "eyre_env": (_S, "eyre_env")}

# What a single line takes: the stacks and frames that always belong to the line before them, the
# tracebacks it may announce. Shared by the plain modes.
_ATTACH = {
    "indent": ("deeper", None),
    "py_banner_more": (_S, None),  # (IPython's banner: the lines under its "Python x.y.z (...)" line)
    # (IPython's numbered source lines are a frame's, not a deeper line of the line above: an excerpt that
    # starts in the middle of a traceback; a record whose message introduces them, "...:", keeps them:
    # MODES "body")
    "ipy_num": (_E, None),
    "value_row": (_E, None),  # (a table's row is no continuation of the line above it: not even its header)
    "j_at": (_S, "java_frames"), "j_more": (_S, "java_frames"), "j_caused": (_S, "java_head"),
    "j_suppressed": (_S, "java_frames"),
    "c10_raised": (_S, "c10_frames"), "frame": (_S, "c10_frames"), "what": (_S, "c10_msg"),
    "san_frame": (_S, "san_report"), "absl_frame": (_S, "sigdump"), "absl_sig": ("announce", "sig_head"),
    "dmlc_bt_head": ("announce", "dmlc_bt"), "dmlc_bt": (_S, "dmlc_bt"),
    "go_file": (_S, "go_stack"), "gdb_src": (_S, "gdb"), "asyncio_handle": (_S, None),
    "asyncio_handle_open": (_S, "asyncio_repr"),
    "vg_frame": (_S, "vg_frames"),
    # (TensorFlow's cpu_feature_guard record: its message's second line)
    "tf_cpu_hint": (_S, None), "tf_oom_hint": (_S, None),
    # (logging writes the stack with the record; asyncio the creation point with its handler's message)
    "py_stack": (_S, "py_stack"), "py_remote": ("announce", "py_remote"),
    # (the same file line with its tab dropped by a viewer or relay: Rancher's, syslog's)
    "go_file_bare": ("own", "go_stack"),
    "py_tb": ("announce", "py_head"), "py_eg": ("announce", "py_eg"), "rich_tb": ("announce", "rich_tb"),
    # (Ray's RayTaskError carries the remote traceback's frames under its message, without a header)
    "py_file": ("announce", "py_frames"),
    "glibc_frame": ("announce", "glibc"), "mac_frame": ("announce", "mac_bt"), "boost_frame": ("announce", "boost_bt"),
    # k8s apimachinery HandleCrash logs "Observed a panic: ..." then the goroutine's stack
    "go_goroutine": ("announce", "go_stack"),
    # a function without arguments, then its "\tfile.go:N" line: the frames zap's stacktrace
    # (zap.takeStacktrace) and pkg/errors' "%+v" (errors.StackTrace.Format) write under the record or
    # message they belong to, in the same write; held until its file line confirms it ("loud": zap adds the
    # stack at its stacktrace level, Error in production and Warn in development (zap.AddStacktrace), so a
    # record at a quiet level, klog's "I", never carries one: frames after it are a record whose head was lost)
    "go_func_bare": ("loud", "go_pair"),
    **_RUST_SECTIONS,
    # an exception line after the line that announces it (surefire's "... <<< FAILURE!")
    "j_exc": ("announce", "java_head"),
    "bt_begin": ("announce", "begin_bt"),
    # (TSL's frames whose "Begin" line was cut: only a line ending with ':' introduces them; the "End"
    # line closes them)
    "tsl_frame": ("after_colon", "tsl_frames"),
}

MODES: dict[str, dict] = {
    # a line with no head: continued by deeper-indented lines and by the stacks it introduces
    # (glibc's backtrace_symbols_fd writes frames only: the line without a head right above them is the
    # handler's own, "Check failed: ...", "Error: signal 11:", whatever it says)
    # (a member of a pretty-printed dump under a line that opened no bracket is the tail of a dump
    # whose top was cut: it starts its own block, "json_tail")
    # (traceback.py writes its chain marker only after an exception line: a plain line it follows
    # was the exception line of a traceback cut above it)
    # (traceback.py writes a frame as "  File ..." and its source line 4 blanks in: an indented line
    # right above a "  File" line, less indented than it, is the source line of a frame cut above it,
    # where an excerpt starts in the middle of a traceback)
    # pip's error box (TOKENS "pip_err"): the message's "× " and "│ " lines (the bar is the box's own, not a
    # child's gutter: "own_gutter"), the context from "╰─> ", then after a blank line the note and the hint.
    # The next box ("error: metadata-generation-failed" after the subprocess's) is another record
    "pip_box": {"kind": "pip_error", "on": {"pip_x": (_S, None), "pip_bar": (_S, None), "pip_ctx": (_S, "pip_ctx"),
                                            "pip_note": (_S, "pip_note")},
                "after_blank": {"pip_x": (_S, None), "pip_ctx": (_S, "pip_ctx"), "pip_note": (_S, "pip_note")},
                "own_gutter": True},
    # the context's further lines, indented under the box (the subprocess's output whatever it holds, its
    # blank lines, "[end of output]"), then the note at the box's own indentation
    "pip_ctx": {"kind": "pip_error", "on": {"pip_note": (_S, "pip_note")}, "any": ("deeper!", None),
                "after_blank": "on"},
    "pip_note": {"kind": "pip_error", "on": {"pip_note": (_S, None), "pip_link": (_S, None),
                                             "indent": ("deeper", None)},
                 "after_blank": {"pip_link": (_S, None)}},
    # pip 20-21's record of a failed subprocess (TOKENS "pip_legacy"): its fields and the output, whatever it holds
    # (blank lines too), to the divider that closes it; a line that is a record of its own ends it where the
    # divider was cut
    "pip_legacy": {"kind": "pip_error", "on": {"pip_divider": (_L, None)}, "any": (_C, None), "after_blank": "on"},
    # conda's error report (TOKENS "conda_report"): the traceback, the command and the environment it reports, with
    # the empty lines between them, to its closing sentence; a line that is a record of its own ends it where that
    # sentence was cut
    "conda_report": {"kind": "python_traceback", "on": {"conda_report_end": (_L, None)}, "any": (_C, None),
                     "after_blank": "on"},
    # ComfyUI's error report (TOKENS "comfy_report"): its sections and the empty lines between them, whatever they
    # hold; the server's log records its "## Logs" section quotes are records of their own and end it
    "comfy_report": {"kind": "python_traceback", "on": {}, "any": (_C, None), "after_blank": "on"},
    "plain": {"kind": None, "on": {**_ATTACH, "text": ("exc_next", "py_msg_more"), "json_member": (_E, None),
                                   "py_chain": (_S, "py_chain"), "glibc_frame": ("own", "glibc"),
                                   "boost_frame": ("own", "boost_bt"),
                                   "py_file": ("src_above", "py_frames"), "xf_unsupported": (_C, None),
                                   # (anyio 1.x's MultiError.__str__ writes its details right under the group's
                                   # message line: a paste cut above that line's traceback keeps it with them)
                                   "py_embedded": ("under_exc", "py_embedded"),
                                   # an exception line pasted without its traceback: c10's CUDA check appends
                                   # its hint lines to the message's "CUDA error: ..." line
                                   # (c10/cuda/CUDAException.cpp), transformers its offline-mode line; the
                                   # message then runs on as after a traceback's exception line
                                   "cuda_hint": (_C, "py_msg_more"), "cuda_dsa": (_C, "py_cuda_end"),
                                   "hf_offline_hint": (_C, "py_msg_more"),
                                   # the worker's traceback that torch's DataLoader message carries (TOKENS
                                   # "py_orig_tb"), under that message's first line
                                   "py_orig_tb": (_C, "py_head"),
                                   # Hydra's "Error executing job with overrides: [...]" (ANNOUNCE_BODY_RE), then
                                   # run_and_report's write of the job's compact error
                                   "hydra_compact": ("announce", "hydra_compact"),
                                   "bullet": ("list_colon", "bullets"),
                                   # a dict a line announced as it prints it right below: NeMo-RL's run
                                   # scripts print("Final config:") then pprint.pprint(config), whose first
                                   # line is "{" and the first key (TOKENS "dump_open")
                                   "dump_open": ("after_colon", None)},
              "after_blank": {"py_chain": (_S, "py_chain"), **_RUST_SECTIONS}},
    # the items of a list a line without a head announced (TOKENS "bullet") and the lines indented under them (a YAML
    # sequence of mappings), to the first line of another shape
    "bullets": {"kind": None, "on": {"bullet": (_C, None), "indent": (_C, None)}},
    # a logging record: a following line without a head may be the exception line of its stack
    # (log4j %throwable, logger.exception). Evidence that ends it: any line that is neither a stack
    # start nor deeper-indented; a line of text is held (record_tent) and kept only when a stack the
    # record announces confirms it. An exception-shaped line after a WARN/ERROR record is its
    # exception even with no frames below; after any other record of a formatter the JVM uses
    # (log4j, logback, SLF4J: Flink logs failures at INFO with the throwable) it is held until frames
    # confirm it (record_exc).
    # (printStackTrace writes the exception line before the frames: frames right under a record
    # whose level does not announce them are the rest of a stack whose head was cut, not its own)
    "record": {"kind": None, "on": {**_ATTACH, "text": (_T, "record_tent"), "j_exc": ("expect", "java_head"),
                                    "j_at": ("announce", "java_frames"), "j_more": ("announce", "java_frames"),
                                    "j_suppressed": ("announce", "java_frames"), "json_member": (_E, None)},
               # Spring Boot's "%wEx" writes a blank line between the record and its stack
               "after_blank": {"j_exc": (_T, "record_tent"), **_RUST_SECTIONS}},
    # a record of a formatter that never prints a Java throwable under it (glog, c10, Python logging's
    # own layouts, vLLM, DeepSpeed, transformers, loguru, Rich, logrus: RECORD_MODES): a Java stack
    # after it belongs to it only when the record announces it (WARN and up, "...:"); else the stack
    # is another writer's and the record stays alone. So are c10's "Exception raised from" and its
    # frames: they follow the error record that carries the what() (glog/c10 E and F records)
    "record_native": {"kind": None,
                      "on": {**_ATTACH, "text": (_T, "record_tent"), "j_exc": ("announce", "java_head"),
                             "json_member": (_E, None),
                             "j_at": ("announce", "java_frames"), "j_more": ("announce", "java_frames"),
                             "j_caused": ("announce", "java_head"), "j_suppressed": ("announce", "java_frames"),
                             "c10_raised": ("announce", "c10_frames"), "frame": ("announce", "c10_frames")},
                      "after_blank": {"j_exc": (_T, "record_tent"), **_RUST_SECTIONS}},
    # the exception line held after a record that does not announce it: frames confirm it
    "record_exc": {"kind": None, "on": {"j_at": (_S, "java_frames"), "j_more": (_S, "java_frames"),
                                        "j_caused": (_S, "java_head"), "text": (_T, None), "indent": (_T, None)},
                   "max_tent": 12},
    # lines of text held after a record: kept only when a stack the record announces follows (a
    # multi-line message that ends in logger.exception's traceback); without an announcement the held
    # lines are read again on their own and the stack starts its own event
    "record_tent": {"kind": None, "on": {"text": (_T, None), "indent": (_T, None),
                                         "j_exc": (_T, None), "j_at": ("announce", "java_frames"),
                                         "j_more": ("announce", "java_frames"), "j_caused": ("announce", "java_head"),
                                         # zap's stacktrace under an error record: function, then "\tfile:N"
                                         "go_file": ("announce", "go_stack"),
                                         # glog's fatal record writes its whole message (a CHECK's streamed
                                         # text may span lines), then LogMessage::Fail's stack; dmlc-core's
                                         # likewise its "Stack trace:"
                                         "absl_sig": ("announce", "sig_head"), "dmlc_bt_head": ("announce", "dmlc_bt")},
                    "after_blank": {"text": (_T, None), "indent": (_T, None), "j_at": ("announce", "java_frames")},
                    "max_tent": 24, "quiet_ends": True, "tent_heads": True},
    # a record whose message ends with ':' or is empty: the lines below are its body until a record
    # (a logger writes a message's further lines as they are, without its head: what ends the body is
    # the next line that is a record of its own; the ':' that announced the body is the evidence that
    # the lines between belong to it. After a blank line only indented lines go on: a line of text at
    # column 0 there is the next output, the body's own lines rarely hold an empty one)
    "body": {"kind": None, "on": {**_ATTACH, "indent": (_C, None), "ipy_num": (_C, None), "text": (_C, None),
                                  "tsl_frame": (_C, None), "value_row": (_C, None),
                                  "py_tb": (_S, "py_head"), "glibc_frame": (_S, "glibc"),
                                  "boost_frame": (_S, "boost_bt"), "rule_dash": (_T, "body_rule")},
             # (a record that introduces a traceback, "[IPKernelApp] ERROR | Exception in message handler:",
             # keeps it after a blank line: a relay that doubles every newline writes one between them before
             # the doubling shows)
             "after_blank": {"indent": (_C, None), "j_exc": (_T, "record_tent"), "yaml_key": (_C, "yaml"),
                             "dump_open": (_C, None),
                             "py_tb": (_S, "py_head"), **_RUST_SECTIONS}},
    # a dashed rule under a record that introduces what follows: IPython's ultratb traceback when its header comes
    # next (ipykernel's ipkernel.py logs "Exception in execute request:\n%s" with the traceback's lines joined;
    # ultratb opens it with a rule of dashes and "X   Traceback (most recent call last)"); else the rule is read
    # again on its own
    "body_rule": {"kind": None, "on": {"ipy_tb": (_S, "ipy")}},
    # asyncio's context object whose repr runs over lines (TOKENS "asyncio_handle_open"): its lines are held until
    # the one that closes it with '>'; then the further context objects and the traceback default_exception_handler
    # logs with the message (exc_info)
    "asyncio_repr": {"kind": None, "on": {"asyncio_repr_end": (_S, "asyncio_after"), "text": (_T, None),
                                          "indent": (_T, None)}, "max_tent": 40},
    "asyncio_after": {"kind": None, "on": {"asyncio_handle": (_S, None), "asyncio_handle_open": (_S, "asyncio_repr"),
                                           "py_tb": (_S, "py_head")}},
    # a YAML dump a record announced ("...:", a blank line): its keys at column 0 and everything indented
    # under them, to a line of another shape or a blank line (the dump holds none)
    # Python source printed whole (TOKENS "py_def"): its body is indented, blank lines inside it are followed
    # by more of it; the first line at column 0 is the next record
    "py_def": {"kind": "python_source", "on": {"indent": (_C, None)}, "after_blank": {"indent": (_C, None)}},
    # pytest's report of one test (TOKENS "pt_title"): written whole at the end of the session, its longrepr (the
    # frames, "E   " lines, a native traceback, "_ _ _" between entries) and its sections under "-" rules (what the
    # test printed and logged: any line, blank lines too) run to the next report's title or the next "=" section
    # rule ("=== warnings summary ===", "=== short test summary info ===", the closing counts)
    "pt_report": {"kind": "pytest_report", "on": {"pt_title": (_E, None), "pt_eq": (_E, None), "rule_eq_t": (_E, None),
                                                  "rule_eq": (_E, None)},
                  "any": (_S, None), "after_blank": "on"},
    "yaml": {"kind": "yaml_dump", "on": {"yaml_key": (_C, None), "indent": (_C, None), "exc_line": (_C, None)}},
    # a head with an empty message ("WARNING:torch.distributed.run:", "Process X:"): the next line
    # is the message, and decides the mode
    "await": {"kind": None, "on": {}, "await": True},
    # a writer's prefix alone: the next line of the writer joins only when it is an NCCL WARN
    "lead": {"kind": None, "on": {}},
    # an elision mark at column 0 with no stack open (STARTS "elided"): a frame that cannot stand alone takes it
    # as the stack's cut head (gdb's "#9 ...", "\tat ...", '  File "..."', c10's "frame #3: ..."); any other
    # line ends it
    # the value lines of a frame cut above them (STARTS "py_value"): the lines of a value's repr and more
    # values are held until the next frame line confirms them as a traceback's; any other line ends it
    "py_values": {"kind": None, "on": {"py_value": (_T, None), "indent": (_T, None), "py_file": (_S, "py_frames")}},
    "elided_lead": {"kind": None, "on": {"gdb_frame": (_S, "gdb"), "gdb_frame0": (_S, "gdb"),
                                         "j_at": (_S, "java_frames"), "py_file": (_S, "py_frames"),
                                         "frame": (_S, "c10_frames")}},
    # java.util.logging's first line: the "LEVEL: message" line is the record's own
    # (SimpleFormatter writes the level at the start of the second line: it is the record's head too,
    # and announces the throwable printed right under the message)
    "jul": {"kind": None, "on": {"jul_level": (_S, "record")}, "head_line": True},

    # Ray's GCS start failure (python/ray/_private/node.py): the quoted lines of gcs_server.err, whatever
    # their heads, up to the blank line the message writes after them, then ".Please check <file> for
    # details" (newer Ray) or nothing
    "ray_err_files": {"kind": "ray_error_files", "on": {"text": (_S, None), "indent": (_S, None)},
                      "after_blank": {"ray_check": (_L, None)},
                      # (node.py quotes only the lines that hold " C " or " E ": its head's level letter)
                      "headed": re.compile(r" [CE] ")},
    # accelerate's state repr: its field lines, nothing else (the blank line its trailing newline leaves
    # ends it)
    "accel_state": {"kind": "other_multiline", "on": {"accel_field": (_S, None)}},
    # ggml's CUDA_CHECK report (TOKENS "ggml_cuda_err"): the device line it ends with, nothing else
    "ggml_cuda": {"kind": "other_multiline", "on": {"ggml_cuda_dev": (_L, None)}},
    # transformers' weights report (TOKENS "hf_weights"): its fixed further lines, to the one it ends with
    "hf_weights": {"kind": "other_multiline", "on": {"hf_weights_more": (_S, None), "hf_weights_end": (_L, None)}},
    # mmcv's load_state_dict report (TOKENS "mm_sd_head"): its lists of keys, each after a blank line
    "mm_sd": {"kind": "other_multiline", "on": {"msg_para": (_S, None)}, "after_blank": {"msg_para": (_S, None)}},
    "accel_defaults": {"kind": None, "on": {"indent": (_S, None), "accel_defaults_end": (_L, None)}},
    # systemctl's failed job (TOKENS "sd_job_failed"): the See line its message ends with
    "sd_job": {"kind": "other_multiline", "on": {"sd_job_see": (_L, None)}},
    # tokenizers' fork warning (TOKENS "tok_fork"): its fixed further lines, to the bullet it ends with
    "tok_fork": {"kind": "other_multiline", "on": {"tok_fork_more": (_S, None), "tok_fork_avoid": (_S, None),
                                                   "tok_fork_end": (_L, None)}},

    # -- CPython traceback.py ----------------------------------------------------------------------
    # "Traceback (most recent call last):", frames ("  File ..." + source + carets), the exception
    # line ("Type: message"), then the message's further lines (free text: ends at a record).
    "py_head": {"kind": "python_traceback",
                "on": {"py_file": (_S, "py_frames"), "fh_file": (_S, "py_frames"), "indent": (_S, "py_frames"),
                       "py_file_bare": (_S, "py_bare_frame"), "exc_line": (_S, "py_msg"),
                       "j_exc": (_S, "py_msg"), "text": (_C, "py_msg")},
                "after_blank": {"py_file": (_S, "py_frames")}},
    "py_frames": {"kind": "python_traceback",
                  "on": {"py_file": (_S, None), "fh_file": (_S, None), "indent": (_S, None), "eg_line": (_S, None),
                         "py_value": (_S, None),
                         "tqdm_bar": (_E, None), "py_file_bare": (_S, "py_bare_frame"),
                         "elided_in": (_S, None), "elided": (_T, None),
                         "exc_bare": (_S, "py_done"), "exc_line": (_S, "py_msg"), "j_exc": (_S, "py_msg"),
                         "tf1_original_op": (_S, None), "tf1_see_above": (_S, "py_msg_more"),
                         "py_embedded": (_S, "py_embedded")},
                  # (after the frames traceback.py writes the exception line, "Type" or "Type: message":
                  # a line of another shape is not this traceback's, whatever its own writer)
                  # loguru's diagnose (better_exceptions) writes a blank line before each frame of the
                  # user's code and before the exception line, and the values under the source line
                  "after_blank": {"py_file": (_S, None), "exc_bare": (_S, "py_done"), "exc_line": (_S, "py_msg"),
                                  "py_embedded": (_S, "py_embedded"),
                                  "j_exc": (_S, "py_msg"), "tf1_original_op": (_S, None),
                                  "tf1_see_above": (_S, "py_msg_more")}},
    # a traceback whose lines lost their indentation (copied from a rendered page, or a viewer that strips
    # leading blanks): traceback.py's order is all that is left. After a frame line comes its source line,
    # whatever it looks like ("main()" reads as an exception line), unless the frame has none (a frozen
    # module's: the next frame line); after the source line its position markers ("^^^^", "~~~^^"), then the
    # next frame or the exception line. An indented frame line goes back to the indented grammar.
    "py_bare_frame": {"kind": "python_traceback",
                      "on": {"py_file_bare": (_S, None), "py_file": (_S, "py_frames"), "fh_file": (_S, "py_frames"),
                             "py_tb": (_E, None), "py_repeated": (_S, "py_bare_src")},
                      "any": (_C, "py_bare_src")},
    # ComfyUI's dialog (TOKENS comfy_exec): its header, the exception's message (its lines), then after a blank
    # line the frames; a blank line not followed by a frame ends it
    "comfy_head": {"kind": "python_traceback", "on": {}, "after_blank": {}, "any": (_C, "comfy_msg")},
    "comfy_msg": {"kind": "python_traceback",
                  "on": {"py_file": (_S, "py_frames"), "py_file_bare": (_S, "py_bare_frame"), "text": (_C, None),
                         "indent": (_C, None)},
                  "after_blank": {"py_file": (_S, "py_frames"), "py_file_bare": (_S, "py_bare_frame")}},
    "py_bare_src": {"kind": "python_traceback",
                    "on": {"py_marker": (_S, None), "node_caret": (_S, None), "py_file_bare": (_S, "py_bare_frame"),
                           "py_repeated": (_S, None),
                           "py_file": (_S, "py_frames"), "fh_file": (_S, "py_frames"),
                           "exc_bare": (_S, "py_done"), "exc_line": (_S, "py_msg"), "j_exc": (_S, "py_msg")}},
    # after an exception line without a message: its notes (indented or "note"-like lines are not told
    # apart from the next record, so none are taken), then only a chained exception or the thread
    # dump of a fatal error continue it; any other line is the next record
    "py_done": {"kind": "python_traceback",
                "on": {"py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"), "py_ext": (_L, None),
                       "py_ext_cut": (_S, "py_ext_more"), "rule_eq": (_C, "py_box"),
                       "onmt_ignored": (_S, "onmt_ignored"), "py_embedded": (_S, "py_embedded")},
                "after_blank": {"py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"), "py_ext": (_L, None),
                                "py_ext_cut": (_S, "py_ext_more"), "onmt_ignored": (_S, "onmt_ignored"),
                                "py_embedded": (_S, "py_embedded")}},
    # the exception line's message (str(exc), then __notes__) is free text with no end of its own.
    # (A line of text in the first person, rules.PROSE_RE, is a person's words under a pasted traceback whose
    # fence a copy removed, not the message's: "prose_ends".)
    # Evidence that it goes on: the exception line ends with ':' (the message's detail follows), or
    # the next line is indented, names an inner error ("ncclUnhandledCudaError: ..."), or is a shape
    # that messages embed (a Java stack, c10 frames, torchrun's box); then the message is open
    # ("py_msg_more") and its text runs to the first record of its own. A line of text with none of
    # that evidence is taken too (a message's further lines and add_note()'s notes are free text that
    # traceback.py prints under the exception line; a print after traceback.print_exc() looks the same),
    # and the first record of its own ends it.
    "py_msg": {"kind": "python_traceback", "prose_ends": True,
               "on": {"text": (_C, "py_msg_more"), "indent": (_C, "py_msg_more"), "ts_failed": (_C, "ts_failed"),
                      "cuda_hint": (_C, "py_msg_more"), "cuda_dsa": (_C, "py_cuda_end"),
                      "exc_named": (_C, "py_msg_more"), "j_exc": (_C, "py_msg_more"), "py_file": (_C, "py_msg_more"),
                      "py_file_bare": (_C, "py_msg_more"),
                      "fh_file": (_C, "py_msg_more"), "j_at": (_C, "py_msg_more"), "j_caused": (_C, "py_msg_more"),
                      "frame": (_C, "py_msg_more"), "c10_raised": (_C, "py_msg_more"),
                      "rule_eq": (_T, "py_box_open"), "rule_eq_t": (_C, "py_box"),
                      "py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"), "py_ext": (_L, None),
                      "py_ext_cut": (_S, "py_ext_more"), "rule_dash": (_T, "py_msg_rule"),
                      # logging's stack_info after the record's traceback (exc_info and stack_info both)
                      "py_stack": (_S, "py_stack"), "py_embedded": (_S, "py_embedded"),
                      # a message that quotes another process's traceback after a ':' (PySpark's
                      # PythonException, pyspark/errors/exceptions/captured.py: "An exception was thrown
                      # from the Python worker:" and the worker's traceback)
                      "py_tb": ("after_colon", "py_msg_more"), "tf_detected": (_S, "tf_node"),
                      # TSL's CurrentStackTrace inside the message: XLA's statuses and torch_xla's XLA_CHECK
                      # (tf_logging.cpp: the check's text, then "*** Begin stack trace ***" and the frames)
                      "bt_begin": (_C, "py_msg_bt")},
               # chained exceptions, the thread dump of a fatal error that printed the exception, and the
               # paragraphs libraries write into their messages
               "after_blank": {"py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"),
                               "onmt_ignored": (_S, "onmt_ignored"), "indent": (_C, "py_msg_more"),
                               "py_embedded": (_S, "py_embedded"),
                               "py_ext": (_L, None), "py_ext_cut": (_S, "py_ext_more"),
                               "rule_dash": (_T, "py_msg_rule"), "msg_para": (_S, "py_msg_more"),
                               "tf_detected": (_S, "tf_node"), "tf1_caused_by_op": (_S, "py_msg_more"),
                               # the JVM's frames after a Python worker's traceback that a Java exception
                               # quotes (Spark's PythonException: its message is the traceback, which ends
                               # with a newline, then printStackTrace's "\tat" lines)
                               "j_at": (_C, "py_msg_more")}},
    # (CurrentStackTrace's section in a message: an indented symbol a line, a frame whose symbol is unknown
    # as a blank line, to "*** End stack trace ***", after which the message may go on)
    "py_msg_bt": {"kind": "python_traceback",
                  "on": {"indent": (_S, None), "tsl_frame": (_S, None), "bt_end": (_C, "py_msg_more")},
                  "after_blank": {"indent": (_S, None), "tsl_frame": (_S, None), "bt_end": (_C, "py_msg_more")}},
    # a message known to span lines: its text runs until a line that is a record of its own
    "py_msg_more": {"kind": "python_traceback", "prose_ends": True,
                    "on": {"text": (_C, None), "bt_begin": (_C, "py_msg_bt"), "indent": (_C, None), "j_exc": (_C, None),
                           "py_file": (_C, None),
                           "cuda_dsa": (_C, "py_cuda_end"), "ts_failed": (_C, "ts_failed"),
                           "fh_file": (_C, None), "py_file_bare": (_C, None),
                           "j_at": (_C, None), "j_caused": (_C, None), "frame": (_C, None),
                           "c10_raised": (_C, None), "rule_eq": (_T, "py_box_open"), "rule_eq_t": (_C, "py_box"),
                           "py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"), "py_ext": (_L, None),
                           "py_ext_cut": (_S, "py_ext_more"), "rule_dash": (_T, "py_msg_rule"),
                           "py_stack": (_S, "py_stack"), "py_tb": ("after_colon", None),
                           "tf_detected": (_S, "tf_node"), "jax_orig": (_S, "jax_orig"),
                           "py_embedded": (_S, "py_embedded")},
                    "after_blank": {"py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames"),
                                    "py_embedded": (_S, "py_embedded"),
                                    "indent": (_C, None), "py_ext": (_L, None), "py_ext_cut": (_S, "py_ext_more"),
                                    # a paragraph ending with ':' and the traceback it quotes after a blank
                                    # line (Ray's "Remote function f failed with:\n\n" + the traceback)
                                    "py_tb": ("after_colon", None),
                                    "rule_dash": (_T, "py_msg_rule"), "msg_para": (_S, None),
                                    "spark_driver": (_C, None), "tf_detected": (_S, "tf_node"),
                                    "tf1_caused_by_op": (_S, None), "tf1_original_op": (_S, None),
                                    "tf1_see_above": (_S, None),
                                    # (a Java stack the message quotes, whose exception message ends with an
                                    # empty line: PySpark's "JVM stacktrace:" under an AnalysisException's plan)
                                    "j_at": (_C, None)}},
    # JAX's note ends its message with an empty line and a rule of 20 dashes: the rule is the message's own, not
    # a table's, also where a paste stops at it; then after an empty line the chain to the original exception
    "jax_orig": {"kind": "python_traceback", "on": {"rule_dash": (_S, "jax_rule")},
                 "after_blank": {"rule_dash": (_S, "jax_rule")}},
    "jax_rule": {"kind": "python_traceback", "on": {"py_chain": (_S, "py_chain")},
                 "after_blank": {"py_chain": (_S, "py_chain")}},
    # after TorchScript's "The above operation failed in interpreter." (TOKENS "ts_failed") the traced module's
    # traceback header is the message's, and its "path(line): fn" lines with it
    "ts_failed": {"kind": "python_traceback",
                  "on": {"py_tb": (_C, "py_msg_more"), "text": (_C, "py_msg_more"), "indent": (_C, "py_msg_more")}},
    # the last line of c10's CUDA check message: the c10::Error's frames (after the empty line the message
    # ends with) or a chained exception may follow; a line of text is the next record
    "py_cuda_end": {"kind": "python_traceback",
                    "on": {"c10_raised": (_S, "c10_frames"), "frame": (_S, "c10_frames"), "py_chain": (_S, "py_chain"),
                           "py_thread": (_S, "fatal_frames"), "py_stack": (_S, "py_stack")},
                    "after_blank": {"c10_raised": (_S, "c10_frames"), "frame": (_S, "c10_frames"),
                                    "py_chain": (_S, "py_chain"), "py_thread": (_S, "fatal_frames")}},
    # TensorFlow's node definition site in a graph execution error: its frames (blank lines between them),
    # the op's message held until the status's "\t [[{{node N}}]]" line confirms it
    "tf_node": {"kind": "python_traceback",
                "on": {"py_file": (_S, None), "indent": (_S, None), "text": (_T, None), "exc_line": (_T, None),
                       "exc_named": (_T, None), "j_exc": (_T, None), "yaml_key": (_T, None),
                       "tf_node_line": (_S, "tf_node_end")},
                "after_blank": {"py_file": (_S, None), "text": (_T, None), "exc_line": (_T, None),
                                "exc_named": (_T, None), "j_exc": (_T, None), "tf_node_line": (_S, "tf_node_end")},
                "max_tent": 20},
    "tf_node_end": {"kind": "python_traceback", "on": {"tf_node_line": (_S, None), "tf_oom_hint": (_S, None)}},
    # Rich's traceback: the panel's rows to its bottom edge, then the exception line ("Type: message",
    # "Type"; a SyntaxError's own panel comes first), then the message (free text, wrapped to the
    # console's width), its "[NOTE]" lines, and after a blank line the chain marker and the next panel
    # (rich/traceback.py __rich_console__)
    "rich_tb": {"kind": "python_traceback", "on": {"rich_row": (_S, None), "rich_end": (_S, "rich_exc")}},
    # (an exception group's "Sub-exception #N" panels hold their exception lines: after one a blank
    # line, then the next panel or the chain marker)
    "rich_exc": {"kind": "python_traceback", "on": {"rich_exc": (_S, "rich_msg"), "rich_panel": (_S, "rich_tb"),
                                                    "py_chain": (_S, "py_chain"), "rich_chain": (_S, "rich_chain")},
                 "after_blank": {"rich_panel": (_S, "rich_tb"), "py_chain": (_S, "py_chain"),
                                 "rich_chain": (_S, "rich_chain")}},
    # the chain marker wrapped over lines: its rest, to the line that ends it, then the next panel
    "rich_chain": {"kind": "python_traceback", "on": {"rich_chain_end": (_S, "py_chain"), "text": (_C, None),
                                                      "indent": (_C, None)}},
    # a box drawn with box-drawing characters: rows and separators to its bottom edge
    "box": {"kind": "table", "on": {"rich_box": (_S, None), "box_sep": (_S, None), "box_bottom": (_L, None),
                                   "rich_box_end": (_L, None)}},
    "ipy": {"kind": "python_traceback", "kind_override": True,
            "on": {"ipy_frame": (_S, None), "ipy_num": (_S, None), "ipy_src": (_S, None), "indent": (_S, None),
                   "exc_line": (_S, "ipy_msg"), "j_exc": (_S, "ipy_msg"), "ipy_skip": (_S, None)},
            # (after the frames ultratb writes the exception line, "Type: message": a line of another
            # shape is the next record)
            "after_blank": {"ipy_frame": (_S, None), "exc_line": (_S, "ipy_msg"), "j_exc": (_S, "ipy_msg"),
                            "ipy_skip": (_S, None)}},
    # the middle of an ultratb traceback, as an excerpt cuts it: numbered source lines ("    682     x = f(",
    # "--> 603 ...", "   (...)") are held until a frame's header or a hidden-frames line confirms them
    "ipy_cut": {"kind": None, "on": {"ipy_num": (_T, None), "ipy_src": (_T, None), "indent": (_T, None),
                                     "ipy_frame": (_S, "ipy"),
                                     "ipy_skip": (_S, "ipy"), "exc_line": (_S, "ipy_msg"), "j_exc": (_S, "ipy_msg")},
                # (ultratb ends a frame with an empty line and writes the exception line after the last
                # frame's: "Type: message" there confirms the held lines as the tail of a traceback)
                "after_blank": {"ipy_frame": (_S, "ipy"), "ipy_skip": (_S, "ipy"), "exc_line": (_S, "ipy_msg"),
                                "j_exc": (_S, "ipy_msg")}, "max_tent": 40},
    # (a frame's header, "File ~/x.py:603, in f(self)" / "Cell In[3], line 1", is ultratb's only when its
    # numbered source lines follow; a frame whose file has no source, "<decorator-gen-12> in f(x)", is its header
    # alone, then the empty line ultratb ends every frame with, then the next frame's header)
    "ipy_cut_frame": {"kind": None, "on": {"ipy_num": (_S, "ipy"), "ipy_src": (_S, "ipy"), "ipy_frame": (_S, "ipy")},
                      "after_blank": {"ipy_frame": (_S, "ipy")}},
    # (ultratb ends each frame's lines with an empty line, so the exception line comes after one: that
    # blank line is the printer's, not a copy's doubled newline, and one blank line after the message ends it)
    "ipy_msg": {"kind": "python_traceback", "blank_own": True, "prose_ends": True,
                # (a chain's message right under it, no empty line between, goes on as text did before chain
                # messages opened tracebacks of their own: STARTS "py_chain")
                "on": {"text": (_C, None), "indent": (_C, None), "j_exc": (_C, None), "py_chain": (_C, None)},
                # (TensorFlow's graph execution error: "Graph execution error:", an empty line, the node's
                # definition site, as after traceback.py's exception line: MODES "py_msg")
                # (and the paragraphs libraries write into a message, JAX's note under its UnfilteredStackTrace)
                "after_blank": {"py_chain": (_S, "ipy_chain"), "tf_detected": (_S, "tf_node"),
                                "msg_para": (_S, "py_msg_more")}},
    "ipy_chain": {"kind": "python_traceback", "after_blank": {"ipy_tb": (_S, "ipy")}, "on": {"ipy_tb": (_S, "ipy")}},
    # PaddlePaddle: "-----" + "C++ Traceback (most recent call last):" + "-----", numbered frames, a
    # blank line, the "Error Message Summary:" section and its error line with indented details
    "paddle": {"kind": "cpp_frames",
               "on": {"rule_dash": (_S, None), "paddle_head": (_S, None), "num_frame": (_S, None),
                      "num_frame1": (_S, None), "paddle_nostack": (_S, None),
                      "text": (_C, "paddle_msg"), "indent": (_C, None)},
               "after_blank": {"rule_dash": (_S, None), "paddle_head": (_S, None)}},
    "paddle_msg": {"kind": "cpp_frames", "on": {"indent": (_C, None), "paddle_info": (_C, None)}},
    # (libbfd's own warnings, "BFD: Dwarf Error: ...", come between the signal line and the backtrace:
    # held until its header confirms them)
    # (ucs_handle_error calls ucs_debug_show_innermost_source_file before the backtrace: where it opens the
    # innermost frame's source, ucs_debug_print_source_file writes "\n" before the quoted lines, so the header
    # or, in a copy that lost it, the first frame comes after an empty line)
    "ucx": {"kind": "cpp_frames", "on": {"ucx_bt": (_S, "ucx_frames"), "num_frame": (_S, "ucx_frames"),
                                         "ucx_frame": (_S, "ucx_frames"), "rule_eq": (_L, None), "text": (_T, None)},
            "after_blank": {"ucx_bt": (_S, "ucx_frames"), "ucx_frame": (_S, "ucx_frames")}},
    # LLVM's crash report: "Stack dump:", the pretty stack's entries, the frames; nothing else is the handler's
    "llvm_crash": {"kind": "cpp_frames", "on": {"llvm_stack_dump": (_S, None), "llvm_pst": (_S, None),
                                                "llvm_frame": (_S, None), "san_frame": (_S, None)}},
    # one thread's backtrace (ucs_debug_print_backtrace): its frames to the closing rule; the next
    # "==== backtrace" header is another thread's handler, its own write
    "ucx_frames": {"kind": "cpp_frames", "on": {"num_frame": (_S, None), "ucx_frame": (_S, None),
                                                "rule_eq": (_L, None)}},
    # OpenNMT's note between the parent's exception line and the child's traceback (TOKENS "onmt_ignored")
    # a frame's source line and its position markers at the head of a cut traceback (MODES "py_src_cut"): CPython
    # 3.11+'s traceback.py (StackSummary.format_frame_summary) writes "~~~^^^" markers under a frame's source
    # line only, so the next frame line or the exception line goes on with them; anything else ends it
    "py_src_marks": {"kind": "python_traceback",
                     "on": {"py_marker": (_S, None), "py_file": (_S, "py_frames"), "fh_file": (_S, "py_frames"),
                            "py_file_bare": (_S, "py_bare_frame"), "exc_bare": (_S, "py_done"),
                            "exc_line": (_S, "py_msg"), "j_exc": (_S, "py_msg")}},
    "onmt_ignored": {"kind": "python_traceback", "on": {"onmt_ignored_end": (_S, "py_chain")}},
    # a MultiError's "Details of embedded exception N:" (TOKENS "py_embedded"): what follows is the embedded
    # exception's report indented under it (blank lines inside it), then the next one's details line or
    # the chain to the exception the group caused or met; a line back at the block's margin ends it
    "py_embedded": {"kind": "python_traceback", "kind_override": True,
                    "on": {"py_embedded": (_S, None), "py_chain": (_S, "py_chain")},
                    "after_blank": {"py_embedded": (_S, None), "py_chain": (_S, "py_chain")},
                    "any": ("deeper!", None)},
    "py_chain": {"kind": "python_traceback", "kind_override": True,
                 "on": {"py_tb": (_S, "py_head"), "py_eg": (_S, "py_eg"), "rich_tb": (_S, "rich_tb"),
                        "ray_tb": (_S, "py_head")},
                 "after_blank": {"py_tb": (_S, "py_head"), "py_eg": (_S, "py_eg"), "rich_tb": (_S, "rich_tb"),
                                 "ray_tb": (_S, "py_head")}},
    # print_stack's frames under logging's "Stack (most recent call last):" (nothing after them) or
    # asyncio's "source_traceback:" (its context's other keys, then the exception's traceback)
    "py_stack": {"kind": "python_traceback",
                 "on": {"py_file": (_S, None), "indent": (_C, None), "asyncio_handle": (_S, None),
                        "py_stack": (_S, None), "py_tb": (_S, "py_head")}},
    # a remote traceback: the exception line, the '"""' that opens its message, the worker's traceback
    # (any line) to the closing '"""', then only the chain to the exception raised again
    "py_remote": {"kind": "python_traceback", "on": {"py_triple": (_S, "py_remote_tb")}},
    "py_remote_tb": {"kind": "python_traceback", "any": (_S, None), "after_blank": "on",
                     "on": {"py_triple": (_S, "py_done")}},
    # unittest's failure header: the case line (and its docstring's line), the '-' rule, the traceback
    "ut_head": {"kind": "python_traceback", "on": {"rule_dash": (_S, "ut_rule"), "text": (_T, None)},
                "max_tent": 1},
    "ut_rule": {"kind": "python_traceback", "on": {"py_tb": (_S, "py_head")}},
    # torchrun's ChildFailedError message: a box from a '=' rule to the next bare '=' rule
    # (torch/distributed/elastic/multiprocessing/errors/__init__.py _MSG_FORMAT_TEMPLATE)
    "py_box": {"kind": "childfailed_box", "kind_override": True,
               "on": {"rule_eq": (_L, None)}, "any": (_C, None)},
    # a bare '=' rule under an exception's message is the box's border only when the box's title follows it
    # (format_msg: the border, then f"{name} FAILED"); else it is another printer's (AddressSanitizer's
    # report opens with a rule of its own) and is read again on its own
    "py_box_open": {"kind": None, "on": {"box_title": (_S, "py_box")}},
    # the same box entered at its root-cause section (its border, title and other failures were cut):
    # the failure's fields are held until the closing '=' rule confirms them
    "py_box_cut": {"kind": "childfailed_box", "kind_override": True,
                   "on": {"rule_eq": (_L, None)}, "any": (_T, None), "max_tent": 200},
    # exception groups: every line of the group is boxed by '|' and '+' under the group's indent
    "py_eg": {"kind": "python_traceback",
              "on": {"eg_line": (_S, None), "py_chain": (_S, "py_chain")},
              "after_blank": {"py_chain": (_S, "py_chain")}},
    # faulthandler / fatal_error: "Fatal Python error: X", blank, per-thread stacks separated by
    # blank lines ("Thread 0x..." / "Current thread 0x..." / "Stack"), then "Extension modules: ..."
    "py_fatal": {"kind": "python_fatal",
                 "on": {"py_state": (_S, None), "py_thread": (_S, "fatal_frames"), "py_tb": (_S, "py_head"),
                        "py_ext_cut": (_S, "py_ext_more"), "text": (_C, None)},
                 "after_blank": {"py_thread": (_S, "fatal_frames"), "py_tb": (_S, "py_head"), "py_ext": (_L, None),
                                 "py_ext_cut": (_S, "py_ext_more"), "py_state": (_S, None)}},
    # faulthandler's watchdog header: every thread's stack follows at once, nothing else
    "py_timeout": {"kind": "python_fatal", "on": {"py_thread": (_S, "fatal_frames")}},
    "fatal_frames": {"kind": "python_fatal",
                     # (faulthandler writes frames and its notes only: an indented line of another shape,
                     # a tqdm bar, is not the dump's)
                     "on": {"fh_file": (_S, None), "py_file": (_S, None), "fh_note": (_S, None),
                            "py_thread": (_S, None), "py_ext": (_L, None), "py_ext_cut": (_S, "py_ext_more")},
                     # (a frame after a blank line: a paste that doubled every line's newline)
                     "after_blank": {"py_thread": (_S, None), "py_ext": (_L, None), "py_ext_cut": (_S, "py_ext_more"),
                                     "fh_file": (_S, None)}},
    "py_ext_more": {"kind": "python_fatal", "on": {"py_ext_total": (_L, None), "text": (_C, None)}},
    # warnings.formatwarning: header, message lines (held), then the source line "  <source>"
    "py_warn": {"kind": "python_warning",
                "on": {"warn_src": (_L, None), "warn_src_bare": (_L, None), "text": (_T, None), "indent": (_T, None),
                       "rule_star": (_T, None), "rule_eq": (_T, None), "rule_dash": (_T, None),
                       # autograd's anomaly mode warns with the forward's traceback in the message
                       # ("Traceback of forward call that caused the error:\n" + traceback.format_list,
                       # torch/csrc/autograd/python_anomaly_mode.cpp), then c10's suffix
                       "py_file": (_T, None), "c10_triggered": (_T, None)},
                "after_blank": "on", "max_tent": 40},

    # -- Java Throwable.printStackTrace --------------------------------------------------------
    # the exception line (toString(): class + ": " + message, the message may span lines and hold
    # blank lines), "\tat frame" lines, "\t... N more", "Caused by: ...", "\tSuppressed: ..."
    "java_head": {"kind": "java_stack",
                  "on": {"j_at": (_S, "java_frames"), "j_more": (_S, "java_frames"), "j_caused": (_S, None),
                         # a Python exception line whose message is torchrun's box (the traceback cut above),
                         # or the remote traceback Ray's RayTaskError carries ("  File ..." frames)
                         "rule_eq": (_S, "py_box"), "py_file": (_S, "py_frames"),
                         # (a dotted Python exception line, "torch.AcceleratorError: CUDA error: ...", and c10's
                         # hint lines: the message goes on as after a traceback's exception line)
                         "cuda_hint": (_C, "py_msg_more"), "cuda_dsa": (_C, "py_cuda_end"),
                         # (and an inner error the message names on its next line: torch's NCCL errors,
                         # C10D_NCCL_CHECK's "NCCL error in: ..." + getNcclErrorDetailStr's
                         # "ncclUnhandledCudaError: ...", "Last error:", NCCL's last error)
                         "exc_named": (_C, "py_msg_more"), "gin_loc": (_C, "py_msg_more"),
                         "text": (_T, None), "indent": (_T, None), "j_exc": (_T, None), "py_chain": (_T, None)},
                  # (an exception line whose traceback was cut above it: traceback.py chains the next
                  # exception after a blank line, "The above exception was the direct cause ...")
                  "after_blank": {"text": (_T, None), "indent": (_T, None), "j_at": (_S, "java_frames"),
                                  "py_chain": (_S, "py_chain")},
                  "max_tent": 12, "ends_at_blank": True, "tent_heads": True},
    # (a frame cannot stand without its exception line: one after a blank line among frames is the
    # same stack, the blank line a copy's)
    # (a stack Hadoop quotes in a container's diagnostics goes on with its exit line: "yarn_exit")
    # (a frame printStackTrace wrote ends with ')': a line that does not, then the rest of one, was wrapped)
    "java_frames": {"kind": "java_stack", "wrap_end": ")",
                    "on": {"j_at": (_S, None), "at_path": (_S, None), "j_more": (_S, None), "j_suppressed": (_S, None),
                           "j_wrap_tail": ("wrap", None), "elided_in": (_S, None), "elided": (_T, None),
                           # (V8's frames as util.inspect prints an error: console.error(err) in Node.js)
                           "node_more": (_S, None), "node_at_open": (_S, "node_props"),
                           "j_circular": (_S, None), "j_caused": (_S, "java_head"), "yarn_exited": (_L, None),
                           "yarn_exited_tail": (_S, "yarn_exit"), "spark_driver": (_S, None),
                           "dotnet_marker": (_S, None)},
                    "after_blank": {"j_at": (_S, None), "j_more": (_S, None), "yarn_exited": (_L, None),
                                    "yarn_exited_tail": (_S, "yarn_exit"), "spark_driver": (_S, None)}},

    # Open MPI's signal report: its fixed lines and frames to "*** End of error message ***"
    "ompi_sig": {"kind": "ompi_backtrace", "on": {"ompi_sig_line": (_S, None), "ompi_sig_end": (_L, None)}},
    # Open MPI's MPI_ERRORS_ARE_FATAL report: its "*** " lines to "and potentially your MPI job)"
    "ompi_fatal": {"kind": "mpi_error", "on": {"ompi_fatal_line": (_S, None), "ompi_fatal_end": (_L, None)}},
    # valgrind's preamble: its fixed lines, to the prefix alone that closes it
    "vg_banner": {"kind": "valgrind", "on": {"vg_banner_line": (_S, None)}},
    # valgrind's stack under an error's line or a description's ("Address 0x.. is ...", "Block was alloc'd at")
    "vg_frames": {"kind": "valgrind", "on": {"vg_frame": (_S, None), "indent": (_S, None)}},
    # -- Node.js's uncaught exception report ------------------------------------------------------
    # the throw's location, its source line (any text: held until the caret confirms it), the caret,
    # after a blank line the error's first line, its message's further lines, its frames; then
    # util.inspect's properties to the '}' at column 0, and after a blank line the version line
    "node_src": {"kind": "node_error", "on": {}, "any": (_T, "node_caret")},
    "node_caret": {"kind": "node_error", "on": {"node_caret": (_S, "node_exc")}},
    "node_exc": {"kind": "node_error", "after_blank": "on",
                 "on": {"exc_named": (_S, "node_msg"), "exc_line": (_S, "node_msg"), "exc_bare": (_S, "node_msg"),
                        "j_exc": (_S, "node_msg"), "text": (_S, "node_msg")}},
    "node_msg": {"kind": "node_error",
                 "on": {"text": (_C, None), "indent": (_C, None), "j_at": (_S, "node_frames"),
                        "at_path": (_S, "node_frames"), "node_at_open": (_S, "node_props"),
                        "node_version": (_L, None)},
                 "after_blank": {"node_version": (_L, None)}},
    "node_frames": {"kind": "node_error",
                    "on": {"j_at": (_S, None), "at_path": (_S, None), "node_more": (_S, None),
                           "node_at_open": (_S, "node_props"), "node_version": (_L, None)},
                    "after_blank": {"node_version": (_L, None)}},
    # util.inspect's members of an error (nested causes and errors indented under them) to its '}'
    "node_props": {"kind": None, "on": {"node_close": (_S, "node_end")}, "any": (_S, None)},
    "node_end": {"kind": None, "on": {"node_version": (_L, None)}, "after_blank": {"node_version": (_L, None)}},

    # -- build output: compilers, ninja, CMake (printers in TOKENS) ------------------------------------
    # the include stack and function context a diagnostic starts with, then its first line
    "cc_head": {"kind": "compiler_diagnostic",
                "on": {"cc_incl": (_S, None), "cc_from": (_S, None), "cc_ctx": (_S, None), "cc_req": (_S, None),
                       "cc_diag": (_S, "cc_body"), "cc_warn": (_S, "cc_body"), "cc_note": (_S, "cc_body")}},
    # a diagnostic's locus (gutter, source and caret lines; a source line at column 0 held until its caret
    # line confirms it; deeper lines: clang's wrapped message, a fix-it under the caret), its notes and
    # instantiation context; an include stack after it is held: a note's confirms it, another diagnostic's
    # (an error, a warning) releases it to start that one; a function context starts the next one
    "cc_body": {"kind": "compiler_diagnostic",
                "on": {"cc_gutter": (_S, None), "cc_caret": (_S, None), "cc_note": (_S, None), "cc_req": (_S, None),
                       "cc_incl": (_T, None), "cc_from": (_T, None), "cc_term": (_L, None), "cc_ctx": (_E, None),
                       "cc_diag": (_E, None), "cc_warn": (_E, None), "indent": ("deeper", None),
                       "text": (_T, "cc_src")},
                "max_tent": 40},
    # (a source line at column 0: only its caret line confirms it)
    "cc_src": {"kind": "compiler_diagnostic", "on": {"cc_caret": (_S, "cc_body")}},
    # a gutter's numbered source line whose diagnostic was cut above: its caret line confirms it
    "cc_cut": {"kind": None, "on": {"cc_caret_gutter": (_S, "cc_body")}},
    # ninja: the failed edge's command, the line after "FAILED:"
    "ninja_failed": {"kind": "ninja_failed", "on": {}, "any": (_S, "ninja_cmd")},
    "ninja_cmd": {"kind": "ninja_failed", "on": {}},
    # CMake: the indented text and its empty lines, the call stack, the author warning's last line
    "cmake_msg": {"kind": "cmake_message",
                  "on": {"indent": ("deeper", None), "cmake_stack": (_S, None), "cmake_dev": (_L, None)},
                  "after_blank": {"indent": ("deeper", None), "cmake_stack": (_S, None), "cmake_dev": (_L, None)}},

    # -- C++ ---------------------------------------------------------------------------------------
    # a glog/c10 E/F record or a what(): free text (c10::Error::compute_what: message, context
    # lines), then "Exception raised from ..." with c10::get_backtrace frames, or absl's stack
    "c10_msg": {"kind": "cpp_frames", "cross": True,
                "on": {"text": (_C, None), "indent": (_C, None), "j_exc": (_C, None),
                       "c10_raised": (_S, "c10_frames"), "frame": (_S, "c10_frames"),
                       "absl_sig": (_S, "sig_head"), "absl_frame": (_S, "sigdump")},
                "after_blank": {"c10_raised": (_S, "c10_frames"), "frame": (_S, "c10_frames")}},
    # frames end with ')' ("(0x.. in lib.so)"); a line after one that does not is its hard wrap
    "c10_frames": {"kind": "cpp_frames", "cross": True, "wrap_end": ")",
                   "on": {"frame": (_S, None), "c10_omit": (_S, None), "text": ("wrap", None), "c10_raised": (_S, None),
                          "elided_in": (_S, None), "elided": (_T, None),
                          # lldb's "bt all": the next thread's header, then its frames
                          "lldb_thread": (_S, "lldb_bt")},
                   "after_blank": {"c10_raised": (_S, None)}},
    # libstdc++: "terminate called after throwing an instance of 'T'" then "  what():  <what()>"
    "terminate": {"kind": "cpp_frames", "cross": True, "on": {"what": (_S, "c10_msg")}},
    # absl failure signal handler / glog: "*** SIGSEGV received ... ***", "PC: @ ...", "    @ ..."
    # (right under such a header, before any frame, another one continues it: glog's LogMessage::Fail writes
    # "*** Check failure stack trace: ***" and then calls g_logging_fail_func, which where glog has no
    # stack unwinder is logging_fail, a bare abort(); its frames then come from the failure signal handler
    # (signalhandler.cc: "*** Aborted at N (unix time) ...", "PC: @ ..", "*** SIGABRT (@0x..) received by
    # PID ..; stack trace: ***" and the frames) -- absl's handler likewise after an empty check trace)
    "sig_head": {"kind": "cpp_frames", "cross": True,
                 "on": {"absl_frame": (_S, "sigdump"), "glog_sig": (_S, "sigdump"), "absl_sig": (_S, None)}},
    "sigdump": {"kind": "cpp_frames", "cross": True,
                "on": {"absl_frame": (_S, None), "glog_sig": (_S, None)}},
    # caffe2's / c10's fatal signal handler: one thread's header and frames; the empty line after them ends
    # it (each thread's dump is its own write, the next one opens with its own header)
    "c2_sigdump": {"kind": "cpp_frames", "on": {"c2_frame": (_S, None), "frame": (_S, "c10_frames")}},
    # (CurrentStackTrace writes a frame whose symbol is unknown as a tab alone: a blank line among frames)
    "begin_bt": {"kind": "cpp_frames",
                 "on": {"indent": (_S, None), "tsl_frame": (_S, None), "text": (_C, None), "bt_end": (_L, None)},
                 "after_blank": {"indent": (_S, None), "tsl_frame": (_S, None), "bt_end": (_L, None)}},
    # TSL's signal handler: the signal line, the mangled frames to their END line, a blank line, and the
    # demangled "Begin stack trace" section ("begin_bt")
    "tsl_signal": {"kind": "cpp_frames", "on": {"tsl_mangled": (_S, "tsl_mangled"), "bt_begin": (_S, "begin_bt")}},
    "tsl_mangled": {"kind": "cpp_frames",
                    "on": {"glibc_frame": (_S, None), "mac_frame": (_S, None),
                           "tsl_mangled_end": (_S, "tsl_demangled")}},
    "tsl_demangled": {"kind": "cpp_frames", "on": {"bt_begin": (_S, "begin_bt")},
                      "after_blank": {"bt_begin": (_S, "begin_bt")}},
    # TSL's frames without their "Begin" line: tab + symbol lines (an unresolved symbol leaves the tab
    # alone, a blank line), to the "End" line
    "tsl_frames": {"kind": "cpp_frames", "on": {"tsl_frame": (_S, None), "bt_end": (_L, None)}, "after_blank": "on"},
    # SerenityOS's kernel backtrace: frames with a symbol, then bare addresses (dbgln may prefix only the
    # first line: "cross")
    "serenity_bt": {"kind": "cpp_frames", "cross": True,
                    "on": {"serenity_frame": (_S, None), "serenity_addr": (_S, None)}},
    # glog's / klog's log file header: fixed lines to "Log line format: ..."
    "glog_file": {"kind": "glog_header", "on": {"glog_file_line": (_S, None), "glog_file_end": (_L, None)}},
    "glibc": {"kind": "glibc_backtrace", "on": {"glibc_frame": (_S, None)}},
    # boost::stacktrace's frames (a stack's lines, from " 0# ", each an index and '#')
    "boost_bt": {"kind": "cpp_frames", "on": {"boost_frame": (_S, None)}},
    "coredump": {"kind": "coredump",
                 "on": {"indent": (_S, None), "sd_dumped": (_S, None), "sd_stack": (_S, None), "sd_frame": (_S, None),
                        "sd_module": (_S, None), "sd_elf": (_L, None)},
                 "after_blank": {"sd_stack": (_S, None), "sd_module": (_S, None), "sd_elf": (_L, None)}},
    # HotSpot's header: "#" lines; the bare "#" that opens it waits for the line that names it
    "hash_open": {"kind": None, "on": {"hs_err": (_S, "hs_err")}},
    "hs_err": {"kind": "jvm_fatal_error",
               "on": {"hash_bare": (_S, None), "hash_line": (_S, None), "hs_err": (_S, None)},
               "after_blank": {"hash_bare": (_S, None), "hash_line": (_S, None)}},
    # glibc malloc_printerr (old): "*** Error in `prog': ...", "======= Backtrace: =========",
    # frames, "======= Memory map: ========", /proc/self/maps lines
    "glibc_report": {"kind": "glibc_backtrace",
                     "on": {"glibc_section": (_S, None), "glibc_frame": (_S, None), "maps_line": (_S, None)}},
    "mac_bt": {"kind": "macos_backtrace", "on": {"mac_frame": (_S, None)}},
    # gdb: frames, their wrapped argument lines, and the source line gdb prints after a stop
    "gdb": {"kind": "gdb_bt", "on": {"gdb_frame": (_S, None), "gdb_src": (_S, None), "indent": (_C, None),
                                     "at_path": (_C, None), "gdb_nolocals": (_S, None),
                                     "elided_in": (_S, None), "elided": (_T, None)}},
    "gdb_thread": {"kind": "gdb_bt", "on": {"gdb_frame0": (_S, "gdb"), "gdb_frame": (_S, "gdb")}},
    # backward-cpp: its frames, inlined calls and snippets, to the psiginfo() line its signal handler ends with
    "backward": {"kind": "cpp_frames", "on": {"bwd_frame": (_S, None), "bwd_inline": (_S, None),
                                              "bwd_snippet": (_S, None), "bwd_siginfo": (_L, None)}},
    # lldb's stop report ends with "Target N: (name) stopped."
    "lldb_stop": {"kind": "lldb_stop", "on": {"lldb_target": (_L, None), "text": (_C, None), "indent": (_C, None),
                                              "lldb_thread": (_S, None), "frame": (_S, None),
                                              "lldb_src": (_S, "lldb_listing"), "lldb_process": (_E, None)}},
    # its source listing: the listing's lines (and the target's line, where written) end the report; a line
    # of anything else after them is not lldb's ("Process N launched: ..." of the run command comes after)
    "lldb_listing": {"kind": "lldb_stop", "on": {"lldb_src": (_S, None), "lldb_target": (_L, None)}},
    "lldb_bt": {"kind": "lldb_bt", "kind_override": True,
                "on": {"frame": (_S, None), "lldb_thread": (_S, None), "indent": (_C, None)}},
    # sanitizer_common reports: header, "    #N 0x.. in" frames, sections, "SUMMARY: XSanitizer: ..."
    # (TSan and Go's race detector also close with the rule they opened with)
    "san_report": {"kind": "llvm_sanitizer",
                   "on": {"san_frame": (_S, None), "indent": (_S, None), "text": (_C, None),
                          "san_head": (_S, None), "go_race": (_S, None), "rule_eq": (_S, None),
                          "san_summary": (_S, "san_done")},
                   "after_blank": {"san_frame": (_S, None), "indent": (_C, None), "text": (_C, None),
                                   "san_summary": (_S, "san_done")}},
    # UBSan (ubsan_diag.cpp Diag::~Diag): the runtime error is one line; its notes, the stack with
    # print_stacktrace=1 and a SUMMARY follow it, nothing else (a line of text after it is the program's)
    "ubsan": {"kind": "llvm_sanitizer",
              "on": {"san_note": (_S, None), "indent": (_S, None), "san_frame": (_S, "ubsan_frames"),
                     "san_summary": (_L, None)}},
    "ubsan_frames": {"kind": "llvm_sanitizer", "on": {"san_frame": (_S, None), "san_summary": (_L, None)},
                     "after_blank": {"san_summary": (_L, None)}},
    "san_done": {"kind": "llvm_sanitizer", "on": {"rule_eq": (_L, None), "san_shadow": (_S, None),
                                                  "san_shadow_row": (_S, None),
                                                  "indent": (_S, None)}},
    # Go's race detector (runtime/race): "WARNING: DATA RACE", sections ("Read at 0x.. by goroutine 8:",
    # "Previous write at ...", "Goroutine 8 (running) created at:") of frames (a function, then its
    # "      file.go:N +0x.." line), between two '=' rules; it writes no SUMMARY line before the closing
    # rule, which ends the report ("Found N data race(s)" at exit is a line of its own)
    "go_race": {"kind": "go_race",
                "on": {"indent": (_S, None), "go_file": (_S, None), "text": (_C, None), "rule_eq": (_L, None)},
                "after_blank": {"indent": (_C, None), "text": (_C, None)}},
    # compute-sanitizer: "========= Report" + "=========     detail" lines + a bare "========="
    "cs_report": {"kind": "sanitizer_report", "on": {"cs_cont": (_S, None), "cs_end": (_L, None)}},
    # dmlc-core's fatal record's stack: "Stack trace:" and its "  [bt] (N) " frames
    "dmlc_bt": {"kind": "cpp_frames", "on": {"dmlc_bt": (_S, None)}},
    # cmd.exe's two-line message for a command it cannot find
    "cmd_not_found": {"kind": "shell_error", "on": {"cmd_not_found_end": (_L, None)}},
    # libmamba's solver error (TOKENS "mamba_solve"): its "Problem: " lines and the lines indented under them
    "mamba_problems": {"kind": "solver_error", "on": {"mamba_problem": (_S, None), "indent": (_C, None)}},

    # -- Spark on YARN ----------------------------------------------------------------------------
    # yarn/Client.scala's application report: one record, fields in a fixed order to "user"; the
    # diagnostics' value is YARN's free text (container diagnostics quote the last 4096 bytes of the
    # container's logs, with their own records' heads), ended by the next field. YARN caps an attempt's
    # diagnostics (yarn.app.attempt.diagnostics.limit.kc, 64 KB): past that the report is taken as cut
    "yarn_report": {"kind": "yarn_report",
                    "on": {"yarn_field": (_S, None), "yarn_diag": (_S, "yarn_diag"), "yarn_user": (_L, None)}},
    "yarn_diag": {"kind": "yarn_report", "any": (_S, None), "any_max_bytes": 80 * 1024, "after_blank": "on",
                  "on": {"yarn_field": (_S, "yarn_report"), "yarn_user": (_L, None)}},
    # Spark standalone's child command header: the command line, then its '=' rule
    "spark_cmd": {"kind": "spark_command", "on": {"rule_eq": (_L, None)}},
    # Hadoop's container diagnostics after the launch failure's stack: the exit line, then each quoted
    # log's "Last N bytes of <file> :" header and its tail (free text: it ends at a record of its own)
    "yarn_exit": {"kind": "java_stack", "on": {"text": (_C, None), "indent": (_C, None)}},

    # -- Go runtime --------------------------------------------------------------------------------
    # "panic: v [recovered]" (nested panics on "\tpanic: " lines), "[signal ...]", a blank line,
    # goroutine sections ("goroutine N [status]:", func line + "\tfile:line +0x.." pairs,
    # "created by F in goroutine N") separated by blank lines. (panic.go printpanics prints the chain oldest
    # first, each later panic behind a tab but none after a Goexit's; a relay or viewer that drops a line's
    # leading tab (journald, Rancher) leaves them all at column 0: a "panic: " line right under the head is
    # the chain's next, since a process prints one chain and then its goroutines)
    "go_head": {"kind": "go_panic",
                "on": {"go_nested": (_S, None), "go_panic": (_S, None), "go_signal": (_S, None),
                       "go_sig_pc": (_S, None),
                       "go_goroutine": (_S, "go_stack"),
                       "go_runtime_stack": (_S, "go_stack"), "text": (_T, None), "indent": (_T, None)},
                # (a function's line right after the blank: winthrow's tracebacktrap, no goroutine header)
                "after_blank": {"go_goroutine": (_S, "go_stack"), "go_runtime_stack": (_S, "go_stack"),
                                "go_func": (_S, "go_stack"), "text": (_T, None), "indent": (_T, None)},
                "max_tent": 12},
    # the runtime's "runtime: ..." lines, then the throw's "fatal error: ..." (alone they are records)
    "go_runtime": {"kind": "go_panic", "on": {"go_runtime_note": (_T, None), "go_panic": (_S, "go_head")}},
    # zap's and pkg/errors' frames (a function's name, then "\tfile:line"): the first pair confirms them;
    # pkg/errors' "%+v" of a wrapped error writes each wrapper's message between the frames of the error
    # it wraps and its own (withMessage.Format, then withStack's frames), so a line of text is held until
    # the next pair confirms it
    "go_pair": {"kind": "go_frames", "on": {"go_file": (_S, "go_frames")}},
    "go_frames": {"kind": "go_frames",
                  "on": {"go_func_bare": (_T, None), "go_file": (_S, None), "text": (_T, None)}, "max_tent": 3},
    "go_stack": {"kind": "go_panic",
                 "on": {"go_func": (_S, None), "go_file": (_S, None), "go_file_bare": (_S, None),
                        "go_created": (_S, None), "go_func_bare": (_T, None),
                        "go_elided": (_S, None), "go_goroutine": (_S, None), "go_runtime_stack": (_S, None),
                        "indent": (_S, None), "go_dump_end": (_L, None), "go_reg": (_S, "go_regs"),
                        "go_bad_pc": (_S, None), "go_hexdump_head": (_S, None), "go_hexwords": (_S, None),
                        "elided_in": (_S, None), "elided": (_T, None)},
                 "after_blank": {"go_goroutine": (_S, None), "go_runtime_stack": (_S, None),
                                 "go_dump_end": (_L, None), "go_reg": (_S, "go_regs")}},
    # the registers a signal's dump ends with (dumpregs), after its goroutines
    "go_regs": {"kind": "go_panic", "on": {"go_reg": (_S, None)}},

    # klog/v2's multi-line value ("key=<" ending the record's line): its lines, each behind a tab (blanks
    # where a copy expanded it), to the " >" that closes it (which may open the next value). The value
    # is free text (a probe's output, a stack): a line there that is a record of its own ends it, as
    # where the closing line never comes (a value cut, lines of a log view in reverse order)
    # Dask's "Compute Failed" record (BODY_SUFFIX_STARTS): its field lines, to the blank line its message ends with
    "dask_compute": {"kind": "dask_compute_failed", "on": {"dask_field": (_S, None)}},
    "klog_value": {"kind": "klog_record", "on": {"klog_reopen": (_S, None), "klog_close": (_L, None)},
                   "any": (_C, None), "any_lead": ("\t", " ")},

    # -- Rust std::panicking default_hook ----------------------------------------------------------
    # "thread 'x' panicked at file:l:c:" + message (free text), "note: run with `RUST_BACKTRACE=1`"
    # (first panic only), or "stack backtrace:" + "  N: sym" / "      at file:l:c" frames + a note
    # (the message has no end of its own: the header's trailing ':' (Rust 1.73+) announces its first
    # line, indented lines ("  left: 1") continue it, and another line of text is taken only after a
    # line that ends with ':'; the note or the backtrace is the printer's own end)
    "rust_panic": {"kind": "rust_panic",
                   "on": {"text": ("after_colon", None), "indent": (_C, None), "rust_note": (_L, None),
                          "rust_bt_head": (_S, "rust_bt")},
                   # (a payload that is an anyhow or eyre error's Debug, as `unwrap()` on an Err prints it: its
                   # message, a blank line, "Caused by:" and the causes indented under it (anyhow's fmt.rs
                   # debug); before Rust 1.73 the quote and the location close the last cause's line)
                   "after_blank": {"rust_caused": (_S, "rust_panic_causes")}},
    "rust_panic_causes": {"kind": "rust_panic",
                          "on": {"indent": (_S, None), "rust_note": (_L, None), "rust_bt_head": (_S, "rust_bt"),
                                 "rust_msg_tail": (_S, "rust_panic")}},
    # tracing-subscriber's Pretty event: its message's further lines (written as they are) held until
    # the "    at file:line" line (or a span's "    in" line, without locations) confirms them
    "tracing_pretty": {"kind": "rust_log", "on": {"at_path": (_S, None), "tracing_in": (_S, None), "text": (_T, None),
                                                  "indent": (_T, None)}, "max_tent": 12},
    # anyhow's and eyre's sections (_RUST_SECTIONS): each one's lines indented under its title
    "rust_causes": {"kind": "rust_error", "on": {**_RUST_SECTIONS, "indent": (_S, None)},
                    "after_blank": _RUST_SECTIONS},
    "rust_loc": {"kind": "rust_error", "on": {**_RUST_SECTIONS, "indent": (_S, None)}, "after_blank": _RUST_SECTIONS},
    # color-eyre's panic report: its header, "Message:  " (the payload, free text) and "Location: ", then
    # its sections after blank lines; its backtrace section (all of it indented), its env hints
    "eyre_panic": {"kind": "rust_panic", "on": {**_RUST_SECTIONS, "eyre_field": (_S, None), "text": (_C, None),
                                                "indent": (_C, None)}, "after_blank": _RUST_SECTIONS},
    "eyre_bt": {"kind": "rust_error", "on": {**_RUST_SECTIONS, "indent": (_S, None), "rust_frame": (_S, None),
                                             "at_path": (_S, None)}, "after_blank": _RUST_SECTIONS},
    "eyre_env": {"kind": "rust_error", "on": {"eyre_env": (_S, None)}},
    "rust_bt": {"kind": "rust_panic",
                "on": {"rust_frame": (_S, None), "indent": (_S, None), "j_at": (_S, None), "at_path": (_S, None),
                       "rust_note": (_L, None)}},

    # -- Linux kernel reports (each printk line is a record; the report is one event) --------------
    # other subsystems' printk lines can land inside a report: they are emitted on their own
    "kernel": {"kind": "kernel_report", "max_side": 24,
               "on": {"kern_line": (_S, None), "kern_task": (_S, None), "kern_frame": (_S, None), "indent": (_S, None),
                      "kern_word": (_S, None),
                      "kern_end": (_L, None),
                      "rule_eq": (_L, None),
                      "kern_start": (_S, None), "text": ("side", None)},
               "after_blank": "on"},

    # transformers' loading report (its tokens): the table's rows and rule, then after the blank line its notes
    # ("rows": its padded first column and " | " read as docker compose's "name  | " prefix; see merger)
    "hf_report": {"kind": None, "rows": True,
                  "on": {"hf_row": (_S, None), "hf_rule": (_S, None), "rule_dash_t": (_S, None),
                         "hf_notes": (_S, "hf_notes")},
                  "after_blank": {"hf_notes": (_S, "hf_notes")}},
    "hf_notes": {"kind": None, "on": {"hf_note": (_S, None)}},
    # -- command-line parsers' usage errors (their tokens): the usage's lines, then the error's line; fire's
    # error line before its usage, its help pointer after a blank line
    "usage": {"kind": "usage_error",
              "on": {"indent": (_S, None), "argparse_error": (_L, None), "click_try": (_S, None),
                     "click_error": (_L, None), "fire_detail": (_S, "usage_help")},
              "after_blank": {"click_error": (_L, None), "fire_detail": (_S, "usage_help")}},
    "usage_help": {"kind": "usage_error", "on": {"indent": (_L, None)}},
    # pytest's: the usage's lines, the parser's error line, then the indented config hints under it
    "pytest_usage": {"kind": "usage_error", "on": {"indent": (_S, None), "argparse_error": (_S, "pytest_hints")}},
    "pytest_hints": {"kind": "usage_error", "on": {"indent": (_S, None)}},
    "fire_error": {"kind": None, "on": {"usage_head": (_S, "usage")}},
    # Hydra's compact error: its message's lines held until its hint ends the report
    # (the hint is a write of its own after it: a line of its own, as after a traceback)
    "hydra_compact": {"kind": "hydra_error", "on": {"hydra_hint": ("confirm", None)}, "any": (_T, None),
                      "after_blank": "on", "max_tent": 40},
    # MPICH's exit-string message (TOKENS "mpich_exit"): its two fixed lines
    "mpich_exit": {"kind": None, "on": {"mpich_exit_more": (_S, None)}},
    # Lightning's model summaries (their tokens)
    "pl_summary": {"kind": "model_summary", "rows": True,
                   "on": {"rule_dash": (_S, None), "pl_row": (_S, None), "pl_total": (_S, None)}},
    "pl_grid": {"kind": "model_summary", "on": {"pl_grid_row": (_S, None)}},
    # wandb's calls of more than one line (their tokens); the panel's grids run to the empty line each ends with
    "wandb_header": {"kind": None, "on": {"wandb_sync_more": (_S, None)}},
    "wandb_panel": {"kind": "wandb_summary",
                    "on": {"wandb_panel": (_S, None), "text": (_S, None), "indent": (_S, None)},
                    "after_blank": {"wandb_panel": (_S, None)}},
    "wandb_sync": {"kind": None, "on": {"wandb_sync_cmd": (_L, None)}},
    # Unsloth's banner: the drawing's lines, to its last
    "unsloth": {"kind": None, "on": {"unsloth_art": (_S, None), "unsloth_end": (_L, None)}},
    # -- framed tables: a rule line, rows, the closing rule (held until it comes) ----------------
    # ("one_write": a table is printed by one call; a line of another writer among its rows ends it,
    # and the rows held so far are read again on their own: separators a script prints around its
    # own lines are not a table. "same_rule": a bare rule closes it only when it is the rule it opened
    # with: compiler-rt's sanitizers open their report with a rule of 65 '=' (Report's separator in
    # sanitizer_common), which under a program's own banner is the report's, not the banner's end)
    "table_eq": {"kind": "table", "one_write": True, "writer_alone": "rule_eq_alone", "same_rule": True,
                 "on": {"rule_eq": (_L, None), "text": (_T, None), "indent": (_T, None),
                        **_RULE_EQ_REPORTS, "rule_dash": (_T, None),
                        "rule_star": (_T, None), "rule_dash_t": (_T, None)},
                 "after_blank": "on", "max_tent": 200},
    # an '=' rule another writer's line came after before any row: not a table written by one call, but
    # the reports that open with such a rule write it apart from their header (compiler-rt's ASan and LSan
    # reports print the rule, then Report() the "==PID==ERROR: ..." line; a launcher that interleaves
    # ranks by line can put another rank's lines between them), so only their header goes on with it
    "rule_eq_alone": {"kind": "table", "on": _RULE_EQ_REPORTS},
    "table_dash": {"kind": "table", "one_write": True,
                   "on": {"rule_dash": (_L, None), "text": (_T, None), "indent": (_T, None),
                          "ipy_tb": (_S, "ipy"), "paddle_head": (_S, "paddle"), "jax_note": (_S, "py_msg_more"),
                          # (the section rule of torchrun's box whose '=' border and title were cut)
                          "box_root": (_S, "py_box_cut"),
                          # (the rule's other section: the failures other than the root cause, then the rule
                          # above "Root Cause" and the closing '=' rule)
                          "box_failures": (_S, "py_box"),
                          # (traceback.py writes a chain marker only after an exception's message: the
                          # rule held before it is the message's; JAX's UnfilteredStackTrace ends so)
                          "py_chain": (_S, "py_chain"),
                          "rule_eq": (_T, None), "rule_star": (_T, None)},
                   "after_blank": "on", "max_tent": 200},
    "table_star": {"kind": "table", "one_write": True,
                   "on": {"rule_star": (_L, None), "text": (_T, None), "indent": (_T, None),
                          "rule_eq": (_T, None), "rule_dash": (_T, None)},
                   "after_blank": "on", "max_tent": 200},
    # ASCII tables: rows are held until a rule confirms them (a grid repeats the rule between rows)
    "table_plus": {"kind": "table", "one_write": True,
                   "on": {"rule_plus": (_S, None), "pipe_row": (_T, None)}, "max_tent": 200},
    # the tail of a pretty-printed JSON dump whose opening line was cut: members and closing brackets
    # until the brackets close what was open before the first line
    "json_tail": {"kind": "json_dump", "depth": True, "depth0": 1,
                  "on": {"json_member": (_S, None), "json_close": (_S, None), "indent": (_C, None)}},
    # a line ending with '{' or '[' (DeepSpeed's config dump): until the brackets balance
    # (json.dumps, pprint and repr indent every inner line and the closing bracket's line starts with
    # it; a line of text at column 0 is not part of the dump: the dump was cut, or its brackets are
    # miscounted, and the line is the next record)
    "json": {"kind": "json_dump", "depth": True,
             "on": {"json_str_open": (_C, "json_str"), "json_line": (_C, None), "json_close": (_C, None),
                    "indent": (_C, None)}, "after_blank": "on"},
    # a string value over lines (TOKENS "json_str_open"): whatever its lines hold (brackets in it are text, not the
    # dump's) to the one that closes it; a line that is a record of its own ends it where that line was cut. The
    # dump goes on inside the object that holds the member (the merger counts a depth mode's brackets from its
    # entry: "json_in" starts one deep, as the flat object VS Code writes is)
    "json_str": {"kind": "json_dump", "on": {"json_str_close": (_C, "json_in")}, "any": (_C, None),
                 "after_blank": "on"},
    "json_in": {"kind": "json_dump", "depth": True, "depth0": 1,
                "on": {"json_str_open": (_C, "json_str"), "json_line": (_C, None), "json_close": (_C, None),
                       "indent": (_C, None)}, "after_blank": "on"},
}
# PowerShell's error record (TOKENS "ps_msg"): a line "<command> : <message>" is read as any line without a head,
# but the lines of text under it are held as its message's until the position message or a field confirms them
# (else they are read again on their own); then the "+ " source and caret lines, and the "    + Name : value" fields
MODES["ps_msg"] = {"kind": None, "on": {**MODES["plain"]["on"], "text": (_T, None), "ps_pos": (_S, "ps_pos"),
                                        "ps_field": (_S, "ps_fields")},
                   "after_blank": MODES["plain"]["after_blank"], "max_tent": 8}
MODES["ps_pos"] = {"kind": "shell_error", "kind_override": True,
                   "on": {"ps_src": (_S, None), "ps_field": (_S, "ps_fields")}}
MODES["ps_fields"] = {"kind": "shell_error", "kind_override": True, "on": {"ps_field": (_S, None)}}


# a dashed rule inside an exception's message (a table the message holds, JAX's note under its
# UnfilteredStackTrace): held as a table's rule is, but the message is written by traceback.py line by
# line, so another process's lines between them do not end it (a table printed alone is one write)
MODES["py_msg_rule"] = {**MODES["table_dash"], "one_write": False}

# a record of a JVM's logger and one C++ code wrote (RECORD_MODES): as "record" and "record_native", but a
# Python traceback after it is the Python side's own (PySpark's driver after the JVM's records, TensorFlow's
# caller after its C++ status record)
_NO_PY_TB = {"py_tb": (_E, None), "py_file": (_E, None)}
MODES["record_jvm"] = {**MODES["record"], "on": {**MODES["record"]["on"], **_NO_PY_TB}}
MODES["record_cpp"] = {**MODES["record_native"], "on": {**MODES["record_native"]["on"], **_NO_PY_TB}}

# Rich's exception line is followed by the message as after traceback.py's (py_msg); then, after a blank
# line (or none, where an agent drops empty lines), an exception group's "Sub-exception #N" panels or the
# chain marker, which Rich wraps to the console's width (rich/traceback.py __rich_console__)
MODES["rich_msg"] = {"kind": "python_traceback",
                     "on": {**MODES["py_msg"]["on"], "rich_panel": (_S, "rich_tb"), "rich_chain": (_S, "rich_chain")},
                     "after_blank": {**MODES["py_msg"]["after_blank"], "rich_panel": (_S, "rich_tb"),
                                     "rich_chain": (_S, "rich_chain")}}

# -- derived lookups (the merger compiles the patterns itself) -------------------------------------
# A build tool's lines that an exception's message quotes (XLA's MLIR diagnostics "-:0:0: error: ...", the
# compiler's output torch.utils.cpp_extension puts after "Error building extension 'x': ") are the message's:
# wherever a Python message takes a line of text, it takes these as text
for _spec in MODES.values():
    _on = _spec["on"]
    if _spec.get("kind") == "python_traceback" and _on.get("text", (None,))[0] == _C:
        for _tok in ("cc_incl", "cc_ctx", "cc_diag", "cc_warn", "cc_note", "cc_req", "ninja_failed", "cmake_msg"):
            _on.setdefault(_tok, _on["text"])
PREFIX_KEY = {f"p_{name}": key for name, _p, key, _g in STREAM_PREFIXES}
HEAD_REPEATS = {f"h_{name}": repeats for name, _p, repeats in HEADS}
TOKEN_GATES = {t[0]: t[2] for t in TOKENS if len(t) > 2}
# traceback.py's exception line ("Type" or "Type: message"), for the action "under_exc": a line that a printer
# writes only under an exception line goes with the line above only when that line has this shape
EXC_LINE_RE = re.compile(next(t[1] for t in TOKENS if t[0] == "exc_line"))
RECORD_GATED = tuple((lit, re.compile(pattern)) for _n, pattern, lit in RECORDS if lit is not None)
RANK_RE = re.compile(r"(?:rank|default)=?(\d+)")

# a statement at the start of an excerpt (TOKENS "py_stmt"): the source line of the last frame when the exception
# line follows it (traceback.py writes nothing else between them); else a line as "plain" reads it
MODES["py_src_cut"] = {"kind": "python_traceback",
                       "on": {**MODES["plain"]["on"], "exc_line": (_S, "py_msg"), "j_exc": (_S, "py_msg"),
                              # (its position markers, deeper than the statement: more frames may follow)
                              "py_marker": ("deeper!", "py_src_marks")},
                       "after_blank": MODES["plain"]["after_blank"]}


# Tokens read on every line: those that start blocks and those the single-line modes use. The other
# tokens are shapes that matter only inside some modes (an exception line after frames, a Go func
# line in a goroutine section): a line is matched against them only while such a block is open, and
# the first token in TOKENS order among the two reads wins.
_SINGLE_MODES = ("plain", "record", "record_native", "record_exc", "record_tent", "body", "await", "lead")
COMMON_TOKENS = frozenset(STARTS) | {tok for m in _SINGLE_MODES for tok in MODES[m]["on"]}
MODE_SHAPES: dict[str, tuple[str, ...]] = {}
for _mode, _spec in MODES.items():
    _named = set(_spec["on"]) | (set(_spec["after_blank"]) if isinstance(_spec.get("after_blank"), dict) else set())
    _shapes = tuple(t[0] for t in TOKENS if t[0] in _named and t[0] not in COMMON_TOKENS)
    if _shapes:
        MODE_SHAPES[_mode] = _shapes
TOKEN_ORDER = {t[0]: i for i, t in enumerate(TOKENS)}


def _check() -> None:
    """The tables refer only to modes and tokens that exist (run at import: a typo fails loudly)."""
    tokens = {t[0] for t in TOKENS} | {"text", "indent", "empty_head", "empty_prefix"}
    for mode, spec in MODES.items():
        tables = [spec["on"]] + ([spec["after_blank"]] if isinstance(spec.get("after_blank"), dict) else [])
        for table in tables:
            for tok, (_act, nxt) in table.items():
                if tok not in tokens:
                    raise ValueError(f"mode {mode}: unknown token {tok}")
                if nxt is not None and nxt not in MODES:
                    raise ValueError(f"mode {mode}: unknown next mode {nxt}")
    for tok, (mode, _kind) in STARTS.items():
        if tok not in tokens or mode not in MODES:
            raise ValueError(f"start {tok} -> {mode}")


_check()
