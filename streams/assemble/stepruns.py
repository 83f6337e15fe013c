"""Step-line layouts beyond tight ``key: value`` pairs, as rules: progress heads, runs of ``key value``
pairs, one-pair table rows, and configuration reprs that are not training state.

- **Progress heads** (:data:`PROGRESS_HEADS`): the counters a printer writes in front of its pairs in a
  shape of its own, each rule naming the printer it follows.
- **Spaced runs**: ``key value`` with no separator character between key and number, the pairs
  themselves separated by ``|``, ``,``, a tab, `` - `` or two blanks before a word: fairseq's epoch
  summary ``| loss 6.326 | gnorm 1.201 |``, llm.c ``step 1/74 | train loss 11.01 | norm 15.41 | lr 6e-06``,
  nanoGPT ``iter 100: loss 4.1234, time 123.45ms``, the PyTorch ImageNet example's ``Loss 6.9e+00
  (6.9e+00)`` (value, then its running average in brackets), NeMo Automodel ``mem 24.06 GiB``. A key is
  one to four words; a run needs two pairs, so a sentence with one number in it is not one. Pairs one blank
  apart (WeNet's ``loss 12.3 loss_att 11.2 loss_ctc 14.5 lr 0.000008 rank 0``) make a run of three or more
  one-word keys, one of them a loss or a gradient norm.
- **Table rows**: a whole line that is one key and one number, the key a single word: HF
  ``log_metrics`` ``  train_loss   =   1.9876``, stable-baselines3 ``|    loss    | 0.0123  |``, wandb's run
  summary ``wandb:   train/loss 1.2345``, Ray Train's result table ``│ loss     0.4123 │``. A banner's key
  has blanks in it (``Num Epochs = 3``) and is not a row; a tracker's path with blanks and a tight ``=`` is
  (OLMo's ``System/Peak GPU Memory (MB)=46,911``, thousands separators and all).
- **Configuration reprs**: ``Namespace(lr=0.001, epochs=10)``, ``TrainingArguments(...)``,
  ``LlamaConfig(...)``: the pairs inside one are settings, kept as text in attributes, never fields.

Only keys a family claims, counters, or keys that name a training quantity are lifted from these.
"""

from __future__ import annotations

import re

from streams.assemble.keys import SPELLED_KEYS, STEP_METRICS, canonical, claimed, family, norm
from streams.assemble.lift import Parsed, lift_value

# NaN and Inf as the frameworks print them; MSVC's printf writes "nan(ind)", "-nan(ind)", "nan(snan)".
NON_FINITE = r"nan(?:\(ind\)|\(snan\))?|NaN|NAN|inf(?:inity)?|Inf(?:inity)?|INF"
NUMBER = rf"[-+]?(?:{NON_FINITE}|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
UNIT = r"%|[KMGTkmgt]i?B|[KMGT](?![a-z])|ms|s(?![a-z])"
# An unknown key is lifted only when it names a training quantity. BasicSR's losses (and MMSR's before it) are named
# "l_" and the term: "l_pix", "l_percep", "l_g_gan", "l_d_real"; image restoration is measured in PSNR and SSIM.
METRICISH = re.compile(r"loss|acc|norm|lr|rate|mem|util|throughput|token|sample|speed|ppl|perplexity|reward|"
                       r"score|kl|entropy|tflop|mfu|time|seconds|psnr|ssim|^l_[a-z]")

# A step in brackets, then a figure's name and "=", " = " or a blank and its number: CLU's, Scenic's, big_vision's and
# Dreamer's writers (below). Such a line may name no training word ("[1000] l2_grads = 1.23").
STEP_TAG = re.compile(rf"^\s*\[(?P<step>\d+)\] [A-Za-z_][\w/.]*(?:=| = | {NUMBER}(?= / |\s*\Z))")
# (printer, regex with named groups epoch / step / max_steps), tried where the line holds the needle.
PROGRESS_HEADS: tuple[tuple[str, str, re.Pattern], ...] = (
    # mmengine LogProcessor: "Epoch(train) [1][10/90]" (epoch, then the iteration within it)
    ("mmengine", "Epoch(", re.compile(r"\bEpoch\((?:train|val|test)\)\s*\[\s*(?P<epoch>\d+)\]")),
    # mmengine, iteration-based loops: "Iter(train) [  50/80000]"
    ("mmengine", "Iter(", re.compile(r"\bIter\((?:train|val|test)\)\s*\[\s*(?P<step>\d+)\s*/\s*(?P<max_steps>\d+)\]")),
    # timm train.py: "Train: 3 [ 100/1251 (  8%)]"; OpenPCDet's timm style "Train:    1/3 ( 33%) [  49/323 ..."
    ("timm", "Train:", re.compile(r"\bTrain:\s+(?P<epoch>\d+)(?:/\d+)?\s+(?:\(\s*\d+%\)\s+)?\[")),
    # CommonLoopUtils LoggingWriter.write_scalars: "[100] learning_rate=0.001, train_loss=2.3"; Scenic's
    # log_train_summary one figure a line, f"\u001b[35m[{step}]\u001b[0m {name} = {value:.4f}" (the colour gone), as
    # big_vision's BigVisionMetricWriter.measure; Dreamer's TerminalOutput print(f"[{step}]", " / ".join(f"{k} {v}"))
    ("clu", "] ", STEP_TAG),
    # Catalyst's ConsoleLogger: f"{loader_key} ({epoch_step}/{num_epochs}) " then "key: value | ..." sorted by key, and
    # f"* Epoch ({epoch_step}/{num_epochs}) " for the epoch's own; its TqdmCallback names the bar
    # f"{epoch_step}/{num_epochs} * Epoch ({loader_key})"
    ("catalyst", ") ",
     re.compile(r"^\s*(?:\*\s)?[A-Za-z_]\w* \((?P<epoch>\d+)/\d+\) (?:[A-Za-z_][\w/]*: [^|]*\| |\Z)")),
    ("catalyst bar", " * Epoch (", re.compile(r"^\s*(?P<epoch>\d+)/\d+ \* Epoch \(\w+\): ")),
    # Composer ConsoleLogger: "[epoch=1][batch=10/4800]:" (batch counts optimizer steps over the run)
    ("composer", "[batch=", re.compile(r"\[batch=(?P<step>\d+)/(?P<max_steps>\d+)\]")),
    # ESPnet2 Reporter.log_message: f"{epoch}epoch:train:{start}-{end}batch: ..."; its trainer "2/200epoch started"
    ("espnet2", "epoch", re.compile(r"(?<![\w.])(?P<epoch>\d+)(?:/\d+)?epoch\b")),
    # keras-rl TrainEpisodeLogger: "{step: Nd}/{nb_steps}: episode: {episode}, duration: ..." (the run's step, then
    # the episode's own figures)
    ("keras-rl", ": episode: ", re.compile(r"^\s*(?P<step>\d+)/(?P<max_steps>\d+): episode: \d+,")),
    # torchtune recipes' bar: f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}" (the epoch as printed)
    ("torchtune", "|Loss: ", re.compile(r"^\s*(?P<epoch>\d+)\|(?P<step>\d+)\|Loss: ")),
    # The epoch and its total in brackets after "Epoch:": DCGAN-tensorflow "Epoch: [%2d/%2d] [%4d/%4d] time: ...",
    # MindFormers' MFLossMonitor "{ Epoch:[%3d/%3d], step:[%5d/%5d], loss: ..." (its step counts within the epoch)
    ("epoch in brackets", "Epoch:", re.compile(r"\bEpoch:\s*\[\s*(?P<epoch>\d+)\s*/\s*\d+\s*\]")),
    # Two bracketed counters and their totals with no key, at the start: the epoch, then the batch within it. PyTorch's
    # DCGAN example print('[%d/%d][%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f ...' % (epoch, opt.niter, i, len(dataloader),
    # ...)), and the GAN scripts copied from it
    ("epoch and batch in brackets", "][", re.compile(r"^\s*\[(?P<epoch>\d+)/\d+\]\s*\[\d+/\d+\]\s*[A-Za-z]")),
    # Swin Transformer's train_one_epoch: f"Train: [{epoch}/{EPOCHS}][{idx}/{num_steps}]" (the batch within the epoch)
    ("swin", "Train: [", re.compile(r"\bTrain: \[(?P<epoch>\d+)/\d+\]\[\d+/\d+\]")),
    # char-rnn's train.lua "%d/%d (epoch %.3f), train_loss = ..." and char-rnn-tensorflow's "{}/{} (epoch {}), ...":
    # the iteration over all of them, then the epochs done
    ("char-rnn", " (epoch ", re.compile(r"^\s*(?P<step>\d+)/(?P<max_steps>\d+) \(epoch (?P<epoch>\d+(?:\.\d+)?)\), ")),
    # nshepperd's gpt-2 train.py (and gpt-2-simple): "[{counter} | {time:2.2f}] loss={loss:2.2f} avg={avg:2.2f}"
    ("gpt-2", "] loss=", re.compile(r"^\s*\[(?P<step>\d+) \| [\d.]+\] loss=")),
    # llama2.c train.py: f"{iter_num} | loss {lossf:.4f} | lr {lr:e} | {dt*1000:.2f}ms | mfu ..."
    ("llama2.c", " | loss ", re.compile(r"^\s*(?P<step>\d+) \| loss ")),
    # DLRM's dlrm_s_pytorch.py: "Finished {training|inference} it {j + 1}/{nbatches} of epoch {k}, {gT:.2f} ms/it, loss
    # ..." and its test "Testing at - {j + 1}/{nbatches} of epoch {k}, loss ..." (the batch, of the epoch's batches)
    ("dlrm", " of epoch ", re.compile(r"\b(?:Finished (?:training|inference) it|Testing at -) (?P<step>\d+)/"
                                     r"(?P<max_steps>\d+) of epoch (?P<epoch>\d+),")),
)
# Dreamer's TerminalOutput joins its "{key} {value}" pairs with " / " (a slash no separator elsewhere: "33717MiB /
# 81252MiB" is one figure of a total); after its step tag they are read as if "|" stood there.
SLASHED_PAIRS = re.compile(rf"\s*\[\d+\] [A-Za-z_][\w/.]* {NUMBER} / [A-Za-z_]")
# The words a counter is printed after ("iter 77 step 39 | loss ..."): steplines reads them, with "step"
# before "iter"; a run counts them as pairs but leaves them to it.
COUNTER_KEYS = frozenset(("epoch", "step", "iteration", "iter"))

# The constructors whose reprs training scripts print as their settings; ``dict(`` is how mmengine and
# mmcv configuration files (printed whole at the start of a run) write theirs.
_CONFIG_REPR = re.compile(r"\b(?:Namespace|dict|\w*(?:Arguments|Args|Config|Configuration|Params|Options))\(")

_SEPARATORS = r"\||,|;|\t| - |:\s|\s{2,}(?=[A-Za-z])"
_SEGMENTS = re.compile(rf"\s*(?:{_SEPARATORS})\s*")
# ... and also a tag's closing bracket, Marian's "[valid] Ep. 2 : ...", and a full stop after a number, minGPT's bar
# "train loss 0.53412. lr 5.999881e-04": tried only where the line has "] " or ". " (twice the cost per character)
_MORE_SEGMENTS = re.compile(rf"\s*(?:{_SEPARATORS}|(?<=\])\s+|(?<=\d)\.\s+(?=[A-Za-z]))\s*")
# Runs of blanks are cut to two before splitting: two or more mean the same to _SEGMENTS, and a long run
# not followed by a word would make its optional blanks backtrack over the run at every position.
_LONG_BLANKS = re.compile(r" {3,}")
# After the value: its running average in brackets, or Marian's "Cost 9.18 * 1,621,472 after 1,621,472" (the
# labels the cost is averaged over, then the labels seen so far; the comma split, a segment keeps "* 1").
_SPACED = re.compile(rf"([A-Za-z][\w./@-]*(?: [A-Za-z][\w./@-]*){{0,3}}) +({NUMBER})(?: ?({UNIT}))?"
                     r"(?:\s*\([^)]*\)|\s+\*\s+\d[\d,]*(?:\s+after\s+\d[\d,]*)?)?")
# A segment that is no pair may end in one a family claims: Swin Transformer's train line puts its rate behind the
# eta in one tab-separated segment, f"Train: [...][...]\teta {eta} lr {lr:.6f}\t wd {wd:.4f}\ttime ...".
_TAIL_PAIR = re.compile(rf"(?<=\S )([A-Za-z_]\w*) ({NUMBER})\Z")
# "|" or a box-drawing "│" (rich tables, Ray Train's result table) around a row.
_ROW = re.compile(rf"\s*(?:[|│]\s*|[A-Za-z]\w*:\s+)?([A-Za-z][\w./@()-]*)(?:\s*[=|│]\s*|\s+)({NUMBER})\s*({UNIT})?"
                  r"\s*[|│]?\s*")
MAX_ROW = 160
# A row whose key has blanks in it is one only when the key is a tracker's path ("group/name") and its "=" is
# tight (a banner writes "Num Epochs = 3", a setting "Num train epochs=3"); its number may have thousands
# separators, the whole line being one pair: OLMo's console logger ("    System/Peak GPU Memory (MB)=46,911",
# format_float printing f"{int(value):,d}" above 1000).
_TIGHT_ROW = re.compile(r"\s*([A-Za-z][\w.@()-]*/[\w./@()-]*(?: [\w./@()-]+){1,5})=(\d{1,3}(?:,\d{3})+|"
                        + NUMBER + r")\s*")


def without_config(body: str, removed: list[str] | None = None) -> str:
    """``body`` without the configuration reprs in it (their pairs are settings; their text is appended to
    ``removed``); an unclosed one runs to the end of the line. One pass: a line of many reprs costs what
    its length does."""
    if "(" not in body:
        return body
    parts: list[str] = []
    pos = 0
    while (m := _CONFIG_REPR.search(body, pos)) is not None:
        depth, end = 0, len(body)
        for i in range(m.end() - 1, len(body)):
            ch = body[i]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        if removed is not None:
            removed.append(body[m.end():end])
        parts.append(body[pos:m.start()])
        pos = end
    if not parts:
        return body
    parts.append(body[pos:])
    return " ".join(parts)


def progress_heads(body: str, p: Parsed) -> bool:
    found = False
    for _printer, needle, rx in PROGRESS_HEADS:
        if needle in body:
            m = rx.search(body)
            if m is not None:
                for name, value in m.groupdict().items():
                    if value is not None:
                        lift_value(p, name, name, value)
                found = True
    return found


# Pairs one blank apart, as printers write them with a format of "{key} {value} " pieces and no separator: WeNet's
# executor ("TRAIN Batch {}/{} loss {:.6f} " then "loss_att {:.6f} ", "loss_ctc {:.6f} ", "lr {:.8f} rank {}"),
# TensorFlow NMT's print_step_info ("%sstep %d lr %g step-time %.2fs wps %.2fK ppl %.2f gN %.2f"). A key is one
# word; a run is three or more pairs in a row, one of them a loss or a gradient norm (a settings echo, "lr 0.001
# batch 32 epochs 10", measures nothing).
_BLANK_PAIR = re.compile(rf"([A-Za-z][\w./-]*) ({NUMBER})({UNIT})?(?= |\Z)")
_BLANK_RUN = 3


def blank_runs(seg: str) -> list[tuple[str, str, str | None]]:
    """The pairs of the runs of three or more one-blank ``key value`` pairs in ``seg``."""
    out: list[tuple[str, str, str | None]] = []
    run: list[tuple[str, str, str | None]] = []
    end = -1
    for m in _BLANK_PAIR.finditer(seg):
        if m.start() != end + 1 or (m.start() and seg[m.start() - 1] != " "):
            if len(run) >= _BLANK_RUN:
                out += run
            run = []
        run.append((m.group(1), m.group(2), m.group(3)))
        end = m.end()
    if len(run) >= _BLANK_RUN:
        out += run
    if not any(_measured(key) for key, _value, _unit in out):
        return []
    return out


def _measured(key: str) -> bool:
    fam = family(canonical(norm(key)))
    return fam is not None and (fam[0] in STEP_METRICS or fam[0].endswith("loss"))


def _lift_pair(p: Parsed, key: str, value: str, unit: str | None) -> bool:
    nk = canonical(norm(SPELLED_KEYS.get(key.lower(), key)))
    known = claimed(nk)
    if known and lift_value(p, key, nk, value + (unit or ""), keep_unknown=False):
        return True
    if METRICISH.search(nk):
        lift_value(p, key, nk, value + (unit or ""))
        p.attributes.setdefault(key, value + (unit or ""))
        p.wide = True
        return True
    return False


def spaced_run(body: str, p: Parsed, counted: bool = False) -> bool:
    """Lift a run of ``key value`` pairs: two or more in the line, or one beside a counter (``counted``:
    litgpt's "iter 77 step 39: loss 10.8259, iter time: ..."). Counter words are left to the caller."""
    pairs = []
    splitter = _MORE_SEGMENTS if "] " in body or ". " in body else _SEGMENTS
    for seg in splitter.split(_LONG_BLANKS.sub("  ", body)):
        m = _SPACED.fullmatch(seg)
        if m is not None:
            pairs.append(m.groups())
        elif seg.count(" ") >= 2 * _BLANK_RUN - 1 and (run := blank_runs(seg)):
            pairs += run
        elif " " in seg and (m := _TAIL_PAIR.search(seg)) is not None and claimed(canonical(norm(m.group(1)))):
            pairs.append((m.group(1), m.group(2), None))
    if len(pairs) < (1 if counted else 2):
        return False
    found = False
    for key, value, unit in pairs:
        if key.lower() not in COUNTER_KEYS:
            found = _lift_pair(p, key, value, unit) or found
    return found


def table_row(body: str, p: Parsed) -> bool:
    """Lift a line that is one ``key = value`` / ``| key | value |`` / ``key value`` row."""
    if len(body) > MAX_ROW:
        return False
    m = _ROW.fullmatch(body)
    if m is not None:
        return _lift_pair(p, m.group(1), m.group(2), m.group(3))
    m = _TIGHT_ROW.fullmatch(body) if "=" in body else None
    return m is not None and _lift_pair(p, m.group(1), m.group(2).replace(",", ""), None)


# transformers' Trainer.log_metrics (trainer_pt_utils.py) prints f"***** {split} metrics *****", then one
# f"  {key: <{k_width}} = {value:>{v_width}}" row per metric, sorted; the merger keeps the rows with the banner
# (they are deeper), so the event is read row by row. A stream prefix the banner has is taken off each row.
_REPORT_HEAD = re.compile(r"\*{5} [\w -]{1,64} metrics \*{5}\s*$")
MAX_REPORT_ROWS = 256


# OLMo-core's ConsoleLoggerCallback logs f"[step={step}/{max_steps},epoch={epoch},eta={eta}]" and one
# f"    {name}={format_float(value)}" row per metric in one message ("    train/CE loss=3.213", "    optim/LR (group
# 0)=3.00E-04"), the rows deeper than the marker.
_STEP_MARKER = re.compile(r"\[step=\d+/(?:\d+|\?\?\?),epoch=\d+(?:,eta=[^\]]{0,64})?\]\s*$")


def metrics_report(texts: list[str], p: Parsed) -> bool:
    """Lift the rows of a metrics report (``texts``: the banner line, then its rows); True when any was read."""
    head = texts[0]
    if "metrics *****" in head and (m := _REPORT_HEAD.search(head)) is not None:
        prefix = head[:m.start()]
    elif "[step=" in head and _STEP_MARKER.search(head) is not None:
        prefix = ""
    else:
        return False
    found = False
    for text in texts[1:MAX_REPORT_ROWS]:
        row = text[len(prefix):] if prefix and text.startswith(prefix) else text
        found = table_row(row, p) or found
    return found
