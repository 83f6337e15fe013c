"""Step lines that are not records: the ``key: value`` lines training frameworks print, as rules.

Each rule names the printer it follows, a cheap needle, the regex of its head (what the line is) and
the regex of its pairs; the pairs go through the key families like a record's keys. Rules, first match
wins (then the generic pairs do not run):

- Megatron-LM / Megatron-DeepSpeed ``training_log``: ``iteration N/ M | key: value | ...`` (values
  printed with ``{:.6E}``, so a NaN loss reads ``NAN``), ``validation loss at iteration N | lm loss
  value: ... |`` and ``report_memory``'s ``memory (MB) | allocated: ... | max reserved: ...``;
- DeepSpeed ``see_memory_usage``: ``MA 0.5 GB Max_MA 0.6 GB CA 0.7 GB Max_CA 1 GB``;
- vLLM's stat logger: ``Avg prompt throughput: 0.0 tokens/s, ..., GPU KV cache usage: 0.1%``;
- generic pairs, for the rest: DeepSpeed ``step=10, skipped=0, lr=[...]`` and its ThroughputTimer
  ``epoch=0/micro_step=10/global_step=10, ..., MaxMemAllocated=1.2GB``, DeepSpeed-Chat
  ``epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.1|...``, torchtune ``Step 12 | loss:1.23 lr:2e-05 ...``,
  Lightning's progress bar ``Epoch 0: 45%|...| 45/100 [..., loss=0.52, v_num=0]``. On a free-text line
  only keys that name a training quantity are taken (``localhost:8080`` is not a metric);
- whole lines one rule reads: nvidia-smi's default table row (``| N/A 61C P0 175W / 400W | 33717MiB / 81252MiB
  | 84% Default |``: the GPU's memory in use and utilisation) and gpustat's (``[0] NVIDIA A100-SXM4-80GB | 45°C, 100 % |
  30123 / 81920 MB | ...``), and a line of one learning rate or step budget
  alone (``learning_rate=2e-05,`` of ``TrainingArguments.__str__``, ``  max_steps: 300000`` of OmegaConf's
  YAML), which is configuration: kept as text in ``attributes``;
- the layouts of :mod:`streams.assemble.stepruns`: progress heads (mmengine, timm, CLU, Composer), runs
  of ``key value`` pairs (fairseq, llm.c, nanoGPT), one-pair table rows (HF ``log_metrics``,
  stable-baselines3, wandb's summary); nothing after a configuration repr (``Namespace(lr=...)``);
- the sentences and evaluation heads of :mod:`streams.assemble.phrases` (Keras and torch learning-rate
  schedulers, Keras' ModelCheckpoint, TensorFlow's NanTensorHook, ``Test set:``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from streams.assemble.keys import (
    EPOCH_KEYS,
    MAX_STEP_KEYS,
    STEP_KEYS,
    STEP_METRICS,
    TASK_KEYS,
    canonical,
    claimed,
    family,
    norm,
)
from streams.assemble.lift import MAX_TASK_CHARS, Parsed, lift_value
from streams.assemble.phrases import evaluation_losses, lift_phrases
from streams.assemble.stepruns import (
    METRICISH,
    NUMBER,
    SLASHED_PAIRS,
    STEP_TAG,
    progress_heads,
    spaced_run,
    table_row,
    without_config,
)

_NUMBER = rf"(?:tensor\()?{NUMBER}"
# "| name: value |"; Megatron-LM's first train loop wrote "| lm loss {:.6E} |" with a blank for the colon, so a
# segment that ends in a number after a blank is a pair too.
_BAR_PAIRS = re.compile(rf"\|\s*([^|:]+?)(?:\s*:\s*|\s+(?={NUMBER}\s*(?:\||\Z)))([^|]*?)\s*(?=\||\Z)")


@dataclass(frozen=True)
class StepRule:
    printer: str
    needle: str  # a literal the line must hold (case-sensitive)
    head: re.Pattern  # search()ed; its groups are (step, max_steps) where the printer has them
    pairs: re.Pattern  # findall() -> (key, value), from where the head starts
    names: dict  # printer key -> metric name, before the families


RULES: tuple[StepRule, ...] = (
    # Trax's training Loop: _log_step prints "Step %6d: %s", its summaries "%s %s | % .8f" % (stream_name.ljust(5),
    # name.rjust(width), value): "Step    100: eval  WeightedCategoryCrossEntropy |  2.29" (the stream names the split)
    StepRule("trax", "Step ", re.compile(r"^\s*Step\s+(\d+): (?=(?:train|eval)\s+\w+ \|\s)"),
             re.compile(rf"^\s*Step\s+\d+: ((?:train|eval)\s+\w+) \|\s+({NUMBER})\s*$"), {}),
    # (a run with no total, as ChatLearn's Megatron trainer prints it, writes "iteration 5/infinity |")
    StepRule("megatron", "iteration", re.compile(r"\biteration\s+(\d+)\s*/\s*(?:(\d+)|infinity)\s*\|"),
             _BAR_PAIRS, {}),
    StepRule("megatron_eval", "validation loss at", re.compile(r"validation loss at (?:iteration (\d+)|[^|]*)\s*\|"),
             _BAR_PAIRS, {"lm loss PPL": "eval_lm_loss_ppl"}),
    StepRule("megatron_memory", "memory (MB)", re.compile(r"memory \(MB\)\s*(?=\|)"), _BAR_PAIRS,
             {"allocated": "memory_allocated_mb", "max allocated": "memory_max_allocated_mb",
              "reserved": "memory_reserved_mb"}),
    StepRule("deepspeed_memory", "Max_CA", re.compile(r"\bMA \S+ GB"),
             re.compile(r"\b(MA|Max_MA|CA|Max_CA) ([\d.]+) GB"),
             {"MA": "memory_allocated_gb", "Max_MA": "memory_max_allocated_gb", "CA": "memory_reserved_gb"}),
    # prime-rl's trainer and orchestrator (trainer/rl/train.py, trainer/sft/train.py, orchestrator/orchestrator.py):
    # f"Step {progress.step} | Time: {step_time:.2f}s | Loss: {...:.4f} | Grad. Norm: {...:.4f} | LR: {...:.2e} |
    # Throughput: {...:.0f} tokens/s | MFU: {mfu:.1f}% | Peak Mem.: {peak:.1f}/{max_memory:.1f} GiB ({pct:.1f}%)"
    # (the peak of torch.cuda.max_memory_allocated() of the device's memory), the orchestrator's "| Reward: ... |
    # Seq. Length: ... tokens/sample | ...": keys of words with dots, a figure and its unit after each.
    StepRule("prime_rl", "Step ", re.compile(r"^Step (\d+) \| Time: [\d.]+s \|"),
             re.compile(r"\|\s*([A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,3}):?\s+(-?[\d.]+(?:e[+-]?\d+)?)"),
             {"Peak Mem.": "gpu_memory_gib", "Time": "step_time_s"}),
    StepRule("vllm_stats", "throughput: ", re.compile(r"Avg prompt throughput: "),
             re.compile(r"(Avg prompt throughput|Avg generation throughput|Running|Waiting|Swapped|Pending|"
                        r"GPU KV cache usage|CPU KV cache usage|Prefix cache hit rate): ([\d.]+)"),
             {"Avg prompt throughput": "prompt_throughput_tokens_s",
              "Avg generation throughput": "generation_throughput_tokens_s", "Running": "running_reqs",
              "Waiting": "waiting_reqs", "Swapped": "swapped_reqs", "Pending": "waiting_reqs",
              "GPU KV cache usage": "gpu_kv_cache_usage_pct", "CPU KV cache usage": "cpu_kv_cache_usage_pct",
              "Prefix cache hit rate": "prefix_cache_hit_rate_pct"}),
)

_BY_NEEDLE = tuple((r.needle, r) for r in RULES)
# Every name a rule's own table emits (with the families': what dashboards may use).
RULE_METRICS = frozenset(n for r in RULES for n in r.names.values())

# A generic pair is found from its separator (a pattern that starts with a character class is scanned
# fast; one that starts with the key is tried at every position): ":" or "=" right after a letter, ")"
# or a letter and a digit ("f1:"; "22:39" is a clock, "host:8080" a port), then a number; the key is read
# backwards. A pair is tight: no blank before its separator ("steps = 8" in a banner is configuration,
# not a step), and no thousands separator after its number ("1,000"); a byte or time unit may follow one
# blank ("avail mem=38.11 GB").
# A byte unit may be spelt with a small b: YOLOX prints its MiB as "mem: 34235Mb".
# A figure with its kind in brackets right after it is qualified, not a count of the key's name: nccl-tests' header
# prints "step: %ld(%s)" with "factor" or "bytes" (the message size's increment, "step: 2(factor)").
# BasicSR's MessageLogger prints each optimizer's rate in a tuple's repr, "lr:(2.000e-04,)": the first is read.
_SEP_VALUE = re.compile(rf"[:=](?:(?<=[A-Za-z_)][:=])|(?<=[A-Za-z_]\d[:=]))\s*(?:\[|\((?=[^()]{{1,64}},\)))?"
                        rf"({_NUMBER}(?:\s*/\s*\d+)?)\]?"
                        r"(%|[KMGT]\b| ?(?:[KMGTkmgt]i?[Bb]\b|ms\b|s\b))?(?![\w.]|,\d{3}|\([A-Za-z])")
# A pair printed with blanks around its separator: TensorFlow's LoggingTensorHook "loss = 4.26, step = 100",
# Caffe's "Iteration 100, lr = 0.001", DLLogger's "step_loss : 0.69  learning_rate : 1.6e-05". Its key is
# one word that starts a segment (the body's start, or after "," ";" "|" ":" or two blanks), so a banner's
# "Num Epochs = 3" or a logger's "params - trainer.optimizer.lr = 0.05" is not one.
# A key of two or three words or a hyphenated one is taken only when a family claims it and it is no counter or
# budget: OpenNMT-tf's "Step = 100 ; ... ; Learning rate = 0.000013 ; Loss = 9.45", Marian's validation "cross-entropy
# : 52.4183" ("Num Epochs = 3", "Total steps = 60" stay a banner's). A head's closing bracket starts a segment too
# (absl's "I0501 ... runner.py:310] Step = 100 ; ..."). A colon may end a pair: TF-Agents' tutorials print
# "step = {0}: loss = {1}".
_LOOSE = re.compile(rf"(?:^|(?<=[,;|:])|(?<=\s\s)|(?<=\] ))\s*([A-Za-z_][\w./-]*(?: [A-Za-z][a-z]*){{0,2}}) +[:=] +"
                    rf"\[?({_NUMBER})\]?(?:\s?(%|[KMGTkmgt]i?[Bb]\b|ms\b|s\b))?(?=[\s,;|)\]]|:\s|\Z)")
# A whole line that is one setting, as configuration printers write them one per line: OmegaConf.to_yaml
# ("  max_steps: 300000", "  learning_rate: 3.0e-04"), TrainingArguments.__str__ (f"{k}={v},\n" per field:
# "learning_rate=2e-05,"). A learning rate or a step budget alone on a line is configuration (a tracker's row names
# its namespace, "optim/learning_rate_group0=0.0003", and stays a figure); a loss alone is not (a setting is never
# named loss).
_LONE_PAIR = re.compile(rf"\s*([A-Za-z_][\w.]*)\s*[:=]\s*({NUMBER})\s*,?\s*")
# A script's echo of its arguments behind a "#", one per line: Chainer's examples print('# epoch: {}'.format(
# args.epoch)), '# Minibatch-size: {}', '# unit: {}' before training. A setting, whatever its key counts (a figure
# that is measured, a loss, is no argument and stays one).
_ARGUMENT_ECHO = re.compile(rf"\s*#\s*([A-Za-z_][\w.-]*)\s*:\s*({NUMBER})\s*")
# nvidia-smi's default table: per GPU a row of three cells under "| Fan  Temp  Perf  Pwr:Usage/Cap|  Memory-Usage |
# GPU-Util  Compute M. |", "| N/A   61C    P0   175W / 400W |  33717MiB / 81252MiB |     84%      Default |" (fan,
# perf and power may read N/A): the memory in use (MiB) of the total, and the GPU's utilisation.
_SMI_ROW = re.compile(r"\|\s*(?:N/A|\d+%)\s+(?:N/A|\d+C)\s+(?:N/A|P\d+)\s+(?:N/A|[\d.]+W)\s*/\s*(?:N/A|[\d.]+W)\s*\|"
                      r"\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(?:N/A|(\d+)%)")
# gpustat's console view (GPUStat.print_to): per GPU "[{index}] {name} |{temperature:>3}°C, {utilization:>3} %" (older
# releases "'C"; --show-fan / --show-power add figures in that cell) " | {memory.used:>5} / {memory.total:>5} MB |" and
# its processes: the memory in use (MiB) and the utilisation. The GPU's name is the device, not a model.
_GPUSTAT_ROW = re.compile(r"\s*\[\d+\] [^|]+\|\s*(?:\?\?|-?\d+)(?:°C|'C), *(?:\?\?|(\d+)) %[^|]*"
                          r"\|\s*(\d+) / +(\d+) MB \|")
# The split words a printer may name after its metric: litgpt's "loss train: 1.062, val: 1.057"; or before it:
# SpeechBrain's FileTrainLogger prefixes each stat with its split, "train loss: 9.45e-01 - valid loss: 1.23"; the
# Time-Series-Library spells its validation split "Vali" ("Train Loss: 0.138 Vali Loss: 0.123 Test Loss: 0.144").
_SPLITS = frozenset(("train", "val", "vali", "valid", "validation", "eval", "test"))
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z_]*) \Z")
# Words that make the counter after them a setting: build-nanogpt's "=> calculated gradient accumulation steps: 16"
# (how many micro-batches one optimizer step sums), as HF's banner "Gradient Accumulation steps = 8". And the words that
# name one term of PPO's objective, not the loss: rsl_rl's OnPolicyRunner.log prints f"{'Value function loss:':>35}
# {mean_value_loss:.4f}", "Surrogate loss:" (later "Mean value_function loss:", "Mean surrogate loss:", "Mean entropy
# loss:").
_WORDS_BEFORE_KEY = _SPLITS | frozenset(("accumulation", "function", "value_function", "surrogate", "entropy"))
# A hyphenated metric name, read back from its last part: MXNet's metrics print "cross-entropy=2.35"
# (Speedometer's "\t%s=%f", fit's "Train-cross-entropy=..."). Only a name a family claims is taken whole;
# other hyphenated keys are timer names ("optimizer-inner-step: 46.00") or run names ("epoch=2-step=1000").
_HYPHENATED = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*-\Z")
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.()/")
# "Epoch 1/3", "Step 12 |", "iteration 5", llm.c's "step    1/74": tried only where the lowered line holds the
# word. A total after a step is max_steps; after an epoch it is the number of epochs, not kept.
# Tianshou's bar counts "Epoch #1:"; nanoT5's logger writes the total in words, "Step 100 out of 65536".
# ("STEP 6053.0" is an id, and so is "step 0xdeadbeef"; "step: 2(factor)" is qualified, as for _SEP_VALUE)
# A count may be grouped by thousands, as str.format's "{:,d}" writes it: MMSR's (BasicSR's ancestor) logger
# "<epoch:{:3d}, iter:{:8,d}, lr:{:.3e}>" prints "iter: 107,200" (groups of three only; "1,2" is a list).
_GROUPED = r"\d{1,3}(?:,\d{3})+(?!\d|,\d)"
_COUNTER_AT = re.compile(rf"(epoch|step|iteration|iter)\b\s*:?\s*[\[#]?({_GROUPED}|\d++)(?!\.\d|[A-Za-z_]|\([A-Za-z])"
                         rf"(?:\s*(?:/|out of)\s*({_GROUPED}|\d+))?", re.I)
_COUNTER_WORDS = ("epoch", "step", "iter")
MAX_STEP_LINE = 4096  # a longer line is a dump, not a step line: its head is all that is looked at
MAX_SETTING_LINE = 160  # a line of one setting is short
MAX_HEAD_CHARS = 64  # a counter that heads a line's figures stands near its start
_TASK = re.compile(r"(?<![\w.])(task_id|task_type|model_name|phase)\s*[:=]\s*[\"']?([\w./:@+-]+)")
# The cheap gate: most lines name no training quantity. Every rule's needle holds one of these.
_GATE = ("step", "epoch", "iter", "loss", "mem", "util", "throughput", "max_ca", "task_", "model_name",
         "learning_rate", "learning rate", "train:", "[batch=", "_norm", "gpu use", "cost ", "ep. ", "gr3d_freq",
         "optim/lr")  # OLMo-core's console logger: "    optim/LR (group 0)=3.00E-04"
# A learning rate alone is configuration (config dumps print "lr: 0.001"), but not beside a speed that the
# step measured: XLM's Trainer.print_stats (and its forks UnsupervisedMT, SymbolicMathematics) logs
# "%7i - " iterations, "{:7.2f} sent/s - {:8.2f} words/s - ", its losses and " - %s LR: {:.4e}" per optimizer.
_GATE_BESIDE = (("lr", "/s - "),)


def _pairs(body: str, counted: bool = False) -> list[tuple[str, str, str]]:
    """(key, number, unit) of every tight ``key: number`` / ``key=number`` pair. A key that is only a
    split word takes the metric word written before it, or else the one the last such key took:
    ``loss train: 1.06, val: 1.05`` -> ``train loss``, ``val loss``. On a line that names a counter
    (``counted``), a key of two words a family claims is read whole (:func:`_named_by_two`)."""
    out = []
    metric_word = None
    for m in _SEP_VALUE.finditer(body):
        end = m.start()
        start = end
        paren = body.rfind("(", max(0, end - 16), end) if body[end - 1:end] == ")" else -1
        if paren > 0 and body[paren - 1] == " ":
            # a unit in brackets after the key's words: rocm-smi's "GPU use (%): 98", "VRAM Total Used Memory (B): N"
            start = _named_unit(body, paren)
        while start > 0 and body[start - 1] in _KEY_CHARS:
            start -= 1
        while start < end and not (body[start].isalpha() or body[start] == "_"):
            start += 1  # a key starts with a letter: "(loss" -> "loss", "0/micro_step" -> "micro_step"
        if start >= 2 and body[start - 1] == "-" and body[start - 2].isalnum():
            # Megatron's timer "optimizer-inner-step: 46.00": the key is the whole hyphenated name; and
            # "epoch=2-step=1000" is a file or run name (Lightning's checkpoint names), no pair a logger wrote
            h = _HYPHENATED.search(body, max(0, start - 48), start)
            if h is None or family(canonical(norm(body[h.start():end]))) is None:
                continue
            start = h.start()
        if start < end and body[start - 1:start] == "(" and body[end - 1] == ")":
            start = _named_unit(body, start - 1)  # SGLang's "gen throughput (token/s): 186.64"
        if start < end and end - start <= 64:
            key, metric_word = _with_word_before(body, start, _unqualified(body[start:end]), metric_word, counted)
            out.append((key, m.group(1), (m.group(2) or "").lstrip()))
    return out


def _with_word_before(body: str, start: int, key: str, metric_word: str | None,
                      counted: bool) -> tuple[str, str | None]:
    """The key a pair's key and the word written before it make, and the metric word later split keys take."""
    w = _WORD_BEFORE.search(body, max(0, start - 40), start) if body[start - 1:start] == " " else None
    if key.lower() in _SPLITS:
        if w is not None and w.group(1).lower() not in _SPLITS:
            metric_word = w.group(1)
        if metric_word is not None:
            key = f"{key} {metric_word}"
    elif w is not None and w.group(1).lower() in _WORDS_BEFORE_KEY:
        key = f"{w.group(1)} {key}"  # "train loss", and "accumulation steps" (a setting, no step)
    elif counted and w is not None and _named_by_two(w.group(1), key):
        key = f"{w.group(1)} {key}"  # PaddleNLP's "..., learning rate: 4.00000e-07, ..."
    return key, metric_word


def _named_by_two(word: str, key: str) -> bool:
    """Whether ``word key`` is a name a family claims while ``key`` alone is none: ERNIE's pretraining scripts in
    PaddleNLP print "global step %d, loss: %f, ..., learning rate: %.5e, loss_scaling: %.2f" (a tight pair whose
    key is two words; "rate" alone names nothing). Only beside a counter: Darknet's banner "Learning Rate: 0.001,
    Momentum: 0.9, Decay: 0.0005" is its configuration."""
    return not claimed(canonical(norm(key))) and claimed(canonical(norm(f"{word} {key}")))


def _unqualified(key: str) -> str:
    """A key with a qualifier glued on in brackets that names no unit, read as the key it qualifies: PaddleClas
    prints its learning rate as "lr({scheduler class}): 0.1" ("lr(PiecewiseDecay)"). ``memory(GiB)`` is a key
    of its own (a family claims it whole) and stays."""
    if key[-1] != ")" or "(" not in key or key[key.index("(") - 1:key.index("(")] == " ":
        return key
    bare = key[:key.index("(")]
    if bare and not claimed(canonical(norm(key))) and claimed(canonical(norm(bare))):
        return bare
    return key


# The words in front of a unit in brackets: "gen throughput (token/s)", "elapsed time per iteration (ms)".
_WORDS_BEFORE_UNIT = re.compile(r"(?:[A-Za-z][\w-]* ){1,4}\Z")


def _named_unit(body: str, paren: int) -> int:
    """Where the key of a ``name (unit):`` pair starts: the one to four words before the bracket."""
    m = _WORDS_BEFORE_UNIT.search(body, max(0, paren - 48), paren)
    return m.start() if m is not None else paren + 1


def lift_step_line(body: str, p: Parsed) -> bool:
    """Lift the step fields a line prints; True when a printer's rule or any pair matched."""
    body = body[:MAX_STEP_LINE]  # (a shorter line is not copied)
    low = body.lower()
    counters = "step" in low or "epoch" in low or "iter" in low
    if not (counters or any(w in low for w in _GATE) or any(a in low and b in low for a, b in _GATE_BESIDE)
            or ("] " in body and STEP_TAG.match(body) is not None)):
        # (nvidia-smi's, gpustat's and radeontop's rows name no training word, nor do Darknet's before AlexeyAB's "avg
        # loss")
        return (("MiB /" in body and _smi_row(body, p)) or (" MB |" in body and _gpustat_row(body, p))
                or (" rate, " in body and _darknet_line(body, p)) or (", ee " in body and _radeontop_row(body, p)))
    if (" rate, " in body and _darknet_line(body, p)) or (len(body) <= MAX_SETTING_LINE and _one_setting(body, p)):
        return True
    if "(" in body:
        settings: list[str] = []
        kept = without_config(body, settings)  # a repr of the script's settings is not its state
        if kept is not body:
            body, low = kept, kept.lower()
            _keep_settings(settings, p)
    for needle, rule in _BY_NEEDLE:
        if needle in body and _printer_line(rule, body, p):
            if counters:
                _counter_words(body, low, p)  # NeMo: "Training epoch 0, iteration 120/149 | ..."
            return True
    found = progress_heads(body, p)
    found = (_generic_pairs(body, p, counters) if ":" in body or "=" in body else False) or found
    found = spaced_run(_run_text(body), p, counters and _COUNTER_AT.search(body) is not None) or found
    if not found:
        found = table_row(body, p)
    if counters:
        found = _counter_words(body, low, p) or found
    if " = " in body or " : " in body:
        found = _loose_pairs(body, p) or found
    if "task_" in body or "model_name" in body or "phase" in body:
        found = _task_fields(body, p) or found
    found = lift_phrases(body, low, p) or found
    if found:
        _settle_line(body, p)
    return found


def _run_text(body: str) -> str:
    """The line as :func:`spaced_run` reads it: nanoT5's "Loss --> 5.234 | Lr --> 0.010 | " without its arrows,
    Dreamer's "[55000] kl_loss 1.02 / image_loss 8.1e3 / ..." with its slashes as bars."""
    run = body.replace(" --> ", " ") if " --> " in body else body
    if " / " in run and SLASHED_PAIRS.match(run) is not None:
        run = run.replace(" / ", " | ")
    return run


# Darknet's training loop (pjreddie's examples/detector.c and classifier.c, AlexeyAB's src/detector.c): printf("%ld:
# %f, %f avg, %f rate, %lf seconds, %d images\n", batch, loss, avg_loss, get_current_rate(net), ...), the classifier's
# "%ld, %.3f: ..." with the epochs' fraction after the batch, AlexeyAB's "avg loss" and ", %f hours left". The batch
# is the step; the figures name their kind after them.
_DARKNET = re.compile(rf"\s*(\d+)(?:, [\d.]+)?: ({NUMBER}), ({NUMBER}) avg(?: loss)?, ({NUMBER}) rate, "
                      r"[\d.]+ seconds, \d+ images\b")


def _darknet_line(body: str, p: Parsed) -> bool:
    m = _DARKNET.match(body)
    if m is None:
        return False
    step, loss, avg, rate = m.groups()
    lift_value(p, "batch", "step", step)
    lift_value(p, "loss", "loss", loss)
    lift_value(p, "avg", "avg_loss", avg)
    lift_value(p, "rate", "lr", rate)
    return True


def _settle_line(body: str, p: Parsed) -> None:
    """What the line's figures mean together: under an evaluation head its loss is the evaluation's; a step budget
    with no step, epoch or figure beside it is a setting, as a record's is (Lightning's fit loop: "`Trainer.fit`
    stopped: `max_steps=5000` reached."), kept as text in ``attributes``."""
    evaluation_losses(body, p)
    if p.max_steps is not None and p.step is None and p.epoch is None and not p.metrics:
        p.attributes.setdefault("max_steps", str(p.max_steps))
        p.max_steps = None
        p.wide = True


def _setting(m: re.Match, p: Parsed) -> bool:
    """A lone learning rate or step budget (:data:`_LONE_PAIR`): kept as text in ``attributes``, never a field."""
    key, value = m.group(1), m.group(2)
    nk = canonical(norm(key))
    fam = family(nk)
    if nk not in MAX_STEP_KEYS and (fam is None or fam[0] != "learning_rate"):
        return False
    p.attributes.setdefault(key, value)
    p.wide = True
    return True


def _one_setting(body: str, p: Parsed) -> bool:
    """A line of one setting: a lone learning rate or step budget, or an argument a script echoed."""
    if (m := _LONE_PAIR.fullmatch(body)) is not None:
        return _setting(m, p)
    return "#" in body[:8] and (m := _ARGUMENT_ECHO.fullmatch(body)) is not None and _argument(m, p)


def _argument(m: re.Match, p: Parsed) -> bool:
    """An argument a script echoed (:data:`_ARGUMENT_ECHO`): kept as text in ``attributes``, never a field; a
    measured figure (a loss, a norm) is read as a pair."""
    key, value = m.group(1), m.group(2)
    fam = family(canonical(norm(key)))
    if fam is not None and (fam[0] in STEP_METRICS or fam[0].endswith("loss")):
        return _lift_pairs([(key, value, "")], p)
    p.attributes.setdefault(key, value)
    p.wide = True
    return True


def _smi_row(body: str, p: Parsed) -> bool:
    m = _SMI_ROW.search(body)
    if m is None:
        return False
    used, total, util = m.groups()
    return _gpu_row(p, "nvidia_smi", ("Memory-Usage", used), total, ("GPU-Util", util))


def _gpustat_row(body: str, p: Parsed) -> bool:
    m = _GPUSTAT_ROW.match(body)
    if m is None:
        return False
    util, used, total = m.groups()
    return _gpu_row(p, "gpustat", ("memory.used", used), total, ("utilization.gpu", util))


# radeontop's dump (dump.c dumpdata): "bus %02x, " then "gpu %.2f%%, " (the graphics pipe busy: the GPU's
# utilisation), "ee", "vgt", "ta", ... the blocks' busy shares, and ", vram %.2f%% %.2fmb" (the share and the MiB of
# VRAM in use; later releases add the total, "%.2fmb"), ", gtt ...", ", mclk %.2f%% %.3fghz" (a clock's share of its
# maximum).
_RADEONTOP_ROW = re.compile(r"(?:bus [0-9a-f]{2}, )?gpu (\d+(?:\.\d+)?)%, ee [\d.]+%, vgt [\d.]+%")
_RADEONTOP_VRAM = re.compile(r", vram [\d.]+% (\d+(?:\.\d+)?)mb(?: (\d+(?:\.\d+)?)mb)?")


def _radeontop_row(body: str, p: Parsed) -> bool:
    m = _RADEONTOP_ROW.match(body)
    if m is None:
        return False
    lift_value(p, "gpu", "gpu_util", m.group(1))
    vram = _RADEONTOP_VRAM.search(body, m.end())
    if vram is not None:
        lift_value(p, "vram", "gpu_memory_used_mib", vram.group(1))
        if vram.group(2) is not None:
            p.attributes["memory_total_mib"] = vram.group(2)
    p.fmt = p.fmt or "radeontop"
    p.wide = True
    return True


def _gpu_row(p: Parsed, fmt: str, used: tuple[str, str], total: str, util: tuple[str, str | None]) -> bool:
    """A GPU's row of a console table: (the column's name as printed, its value) for memory and utilisation."""
    lift_value(p, used[0], "gpu_memory_used_mib", used[1])
    p.attributes["memory_total_mib"] = total
    if util[1] is not None:
        lift_value(p, util[0], "gpu_util", util[1])
    p.fmt = p.fmt or fmt
    p.wide = True
    return True


def _task_fields(body: str, p: Parsed) -> bool:
    found = False
    for key, value in _TASK.findall(body):
        if len(value) <= MAX_TASK_CHARS:
            p.task = p.task or {}
            p.task.setdefault(TASK_KEYS[key], value)
            found = True
    return found


def _keep_settings(settings: list[str], p: Parsed) -> None:
    """The training quantities a configuration repr names, as text in ``attributes`` (searchable, not fields)."""
    for text in settings:
        for key, value, unit in _pairs(text):
            nk = canonical(norm(key))
            if METRICISH.search(nk) or nk in STEP_KEYS or nk in EPOCH_KEYS or family(nk) is not None:
                p.attributes.setdefault(key, value + unit)
                p.wide = True


def _printer_line(rule: StepRule, body: str, p: Parsed) -> bool:
    m = rule.head.search(body)
    if m is None:
        return False
    groups = [g for g in m.groups() if g is not None]
    if groups:
        lift_value(p, "step", "step", groups[0])
        if len(groups) > 1:
            lift_value(p, "max_steps", "max_steps", groups[1])
    for key, value in rule.pairs.findall(body, m.start()):
        name = rule.names.get(key)
        if name is not None:
            lift_value(p, name, name, value)
        elif not lift_value(p, key, norm(key), value, keep_unknown=True):
            p.attributes.setdefault(key.strip(), value)
    p.fmt = p.fmt or rule.printer
    p.wide = True
    return True


# Mozilla DeepSpeech's run-set bar ("Epoch   0 |   Training | ... | Steps: 120 | Loss: ...") and the
# Time-Series-Library's epoch line ("Epoch: 9, Steps: 569 | Train Loss: ...") count in a title-case "Steps" after the
# epoch the batches of that epoch, no step of the run (SpeechBrain's "epoch: 3, lr: ..., steps: 5391" is one).
_EPOCH_BATCHES_KEY = "Steps"


def _epoch_batches(body: str, pairs: list[tuple[str, str, str]], p: Parsed) -> list[tuple[str, str, str]]:
    """The pairs without an epoch's count of batches (:data:`_EPOCH_BATCHES_KEY`), which is kept as text."""
    at = body.find(_EPOCH_BATCHES_KEY + ":")
    if at < 0 or "Epoch" not in body[:at]:
        return pairs
    kept = []
    for key, value, unit in pairs:
        if key == _EPOCH_BATCHES_KEY:
            p.attributes.setdefault(key, value)
            p.wide = True
        else:
            kept.append((key, value, unit))
    return kept


def _generic_pairs(body: str, p: Parsed, counted: bool = False) -> bool:
    pairs = _pairs(body, counted)
    if counted and _EPOCH_BATCHES_KEY in body:
        pairs = _epoch_batches(body, pairs, p)
    if "lobal_step" in body or "LOBAL_STEP" in body:
        pairs = _run_step_first(pairs, p)
    if "eward" in body:
        pairs = _episode_steps(pairs, p)
    return _lift_pairs(pairs, p)


def _episode_steps(pairs: list[tuple[str, str, str]], p: Parsed) -> list[tuple[str, str, str]]:
    """``pairs`` without the "steps" an episode's reward is reported with: rl_games' player prints print("reward:",
    cur_rewards / done_count, "steps:", cur_steps / done_count) (and "av reward: ... av steps: ..."), the episodes'
    mean length, no step of the training (its text kept). A singular "Step:" before a reward stays the run's step
    (ML-Agents' "Step: 40000. ... Mean Reward: 0.993")."""
    kept, rewarded = [], False
    for pair in pairs:
        nk = norm(pair[0])
        if rewarded and nk == "steps":
            p.attributes.setdefault(pair[0], pair[1])
            p.wide = True
            continue
        rewarded = rewarded or "reward" in nk
        kept.append(pair)
    return kept


def _lift_pairs(pairs: list[tuple[str, str, str]], p: Parsed) -> bool:
    """Lift ``(key, value, unit)`` pairs: counters and known metrics typed, other metric-like keys kept
    as attributes too (a wide line); True when any metric or counter was lifted."""
    found = False
    for key, value, unit in pairs:
        nk = canonical(norm(key))
        if nk in STEP_KEYS or nk in EPOCH_KEYS:
            found = lift_value(p, key, nk, _count(value, unit)) or found
        elif lift_value(p, key, nk, value + unit, keep_unknown=False):
            found = True
        elif METRICISH.search(nk):
            lift_value(p, key, nk, value + unit)
            p.attributes.setdefault(key, value + unit)
            p.wide = found = True
    return found


# A count written with a letter for its thousands: LeRobot's MetricsTracker prints its step by format_big_number
# (divided by 1000 per suffix, "", "K", "M", no decimals: "step:20K" is the 20,000th step).
_COUNT_SUFFIX = {"K": 1000, "M": 1_000_000}


def _count(value: str, unit: str) -> str:
    """A counter's value with its thousands' letter applied (:data:`_COUNT_SUFFIX`)."""
    scale = _COUNT_SUFFIX.get(unit)
    return str(int(value) * scale) if scale is not None and value.isdigit() else value


# The run's step, where a line also counts the step within its epoch: Coqui TTS's console logger prints
# "--> STEP: 24/406 -- GLOBAL_STEP: 25" (the 406 is the epoch's batches, no budget of the run).
_RUN_STEP_KEYS = frozenset(("global_step", "global_steps", "trainer_global_step"))


def _run_step_first(pairs: list[tuple[str, str, str]], p: Parsed) -> list[tuple[str, str, str]]:
    """``pairs`` without the step counted within the epoch when the run's step is among them (its text kept)."""
    keys = [canonical(norm(key)) for key, _value, _unit in pairs]
    if _RUN_STEP_KEYS.isdisjoint(keys):
        return pairs
    kept = []
    for nk, pair in zip(keys, pairs, strict=True):
        if nk in STEP_KEYS and nk not in _RUN_STEP_KEYS:
            p.attributes.setdefault(pair[0], pair[1])
            p.wide = True
        else:
            kept.append(pair)
    return kept


def _loose_pairs(body: str, p: Parsed) -> bool:
    """``key = number`` pairs: two or more in the line, or one beside the line's step or epoch, or one
    that is a loss (a setting is never named loss); a lone ``lr = 0.01`` is a configuration line."""
    found = list(_LOOSE.finditer(body))
    pairs = [(m.group(1), m.group(2), m.group(3) or "") for m in found if _loose_key(m.group(1))]
    if not pairs:
        return False
    if len(pairs) == 1 and p.step is None and p.epoch is None:
        nk = canonical(norm(pairs[0][0]))
        fam = family(nk)
        if (fam is None or not fam[0].endswith("loss")) and not _counter_heads(found, nk, body):
            return False
    return _lift_pairs(pairs, p)


def _counter_heads(found: list[re.Match], nk: str, body: str) -> bool:
    """Whether a lone ``counter = N`` heads the line's figures: a colon after it, then a pair of any name. TF-Agents'
    tutorials print "step = {0}: Average Return = {1}" (as they print "step = {0}: loss = {1}")."""
    return ((nk in STEP_KEYS or nk in EPOCH_KEYS) and len(found) >= 2 and found[0].start(1) < MAX_HEAD_CHARS
            and body.startswith(":", found[0].end()))


def _loose_key(key: str) -> bool:
    if " " not in key and "-" not in key:
        return True
    nk = canonical(norm(key))
    return family(nk) is not None and nk not in STEP_KEYS and nk not in EPOCH_KEYS and nk not in MAX_STEP_KEYS


# A step the line names the run's beside the step within its epoch: AReaL's StatsLogger.commit logs f"Epoch {e}/{n} "
# f"Step {s}/{steps_per_epoch} " f"Train step {global_step}/{total_train_steps} done." (the global step goes first).
_RUN_STEP_WORD = re.compile(r"\b(?:train|global) (?=step\b)", re.I)


def _counter_words(body: str, low: str, p: Parsed) -> bool:
    found = False
    if p.step is None and "step" in low and (run := _RUN_STEP_WORD.search(body)) is not None:
        m = _COUNTER_AT.match(body, run.end())
        if m is not None:
            total = m.group(3) and m.group(3).replace(",", "")
            count = m.group(2).replace(",", "")
            lift_value(p, m.group(1), "step", count if total is None else f"{count}/{total}")
            found = True
    for word in _COUNTER_WORDS:
        i = low.find(word)
        while i >= 0:
            before = low[i - 1] if i else " "
            if before == "_" and word == "step" and low.endswith("global_", 0, i) and (
                    i == 7 or not (low[i - 8].isalnum() or low[i - 8] == "_")):
                before = " "  # tensorpack's "Epoch {} (global_step {}) finished, time:{}.": the run's step, in words
            m = None if before.isalnum() or before == "_" else _COUNTER_AT.match(body, i)
            if m is not None:
                count = m.group(2).replace(",", "")
                if word == "epoch":
                    lift_value(p, m.group(1), "epoch", count)
                else:
                    total = m.group(3) and m.group(3).replace(",", "")
                    if total is not None and p.step is not None and p.step != int(count):
                        total = None  # the total of another count: Coqui's "STEP: 24/406 -- GLOBAL_STEP: 25"
                    lift_value(p, m.group(1), "step", count if total is None else f"{count}/{total}")
                found = True
            i = low.find(word, i + 1)
    return found


def lift_counters(text: str, p: Parsed) -> None:
    """The step and epoch words of a record's prefix (``epoch 0: {...}``)."""
    _counter_words(text, text.lower(), p)
