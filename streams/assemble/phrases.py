"""Sentences that report a training quantity, and lines that head an evaluation's results, as rules.

Some printers do not write ``key: value`` pairs but a sentence with one figure in it; each rule below
names the printer whose format string it follows, a needle the lowered line must hold, and the regex of
the figure (its key named by the rule, or by the sentence itself):

- Keras' ``ReduceLROnPlateau`` ("Epoch 5: ReduceLROnPlateau reducing learning rate to 1e-04."), torch's
  ``ReduceLROnPlateau`` ("reducing learning rate of group 0 to 1.0000e-04.") and ``LRScheduler`` verbose
  ("Adjusting learning rate of group 0 to 1.0000e-03."), the Time-Series-Library's ``adjust_learning_rate``
  ("Updating learning rate to 0.0005"): the new learning rate;
- Keras' ``ModelCheckpoint`` ("val_loss improved from 0.14000 to 0.12345, saving model to ..."): the
  monitored key's new value;
- sentence-transformers' evaluators ("Evaluating the model on sts-dev dataset in epoch 0 after 1000
  steps:"): the step, after its epoch;
- TensorFlow's ``NanTensorHook`` ("Model diverged with loss = NaN."): the loss;
- Lightning's ``ModelCheckpoint`` ("Epoch 9, global step 7820: 'val_loss' reached 0.45678 (best ...), saving
  model to ...") and ``EarlyStopping`` ("Metric val_loss improved by 0.012 >= min_delta = 0.0. New best score:
  0.457"): the monitored key's value;
- llama-recipes' ``MemoryTrace`` summary ("Max CUDA memory reserved was 42 GB", whole GiB): the GPU's memory.

An evaluation head makes the line's losses the evaluation's: PyTorch's MNIST example ("Test set: Average
loss: 0.0553, ..."), ``Test:`` / ``Validation:`` / ``Eval:`` at the start of the line, TensorFlow
Estimator's evaluation results ("Saving dict for global step 1000: accuracy = 0.91, loss = 0.29"), MaxText's
evaluation line ("eval metrics after step: 99, loss=2.345, total_weights=5000.0").
"""

from __future__ import annotations

import re

from streams.assemble.keys import norm
from streams.assemble.lift import Parsed, lift_value
from streams.assemble.stepruns import NUMBER

# (printer, needle in the lowered line, regex with a "value" group and maybe a "key" group, key when none)
PHRASES: tuple[tuple[str, str, re.Pattern, str | None], ...] = (
    ("keras/torch/time-series-library lr scheduler", "learning rate",
     re.compile(rf"(?i:reducing|adjusting|updating) learning rate (?:of group \d+ )?to (?P<value>{NUMBER})"), "lr"),
    ("keras ModelCheckpoint", " improved from ",
     re.compile(rf"(?P<key>[A-Za-z_][\w/.]*) improved from \S+ to (?P<value>{NUMBER})"), None),
    # (its own words: "evaluate after 500 steps" in a banner is a setting)
    ("sentence-transformers evaluator", " steps",
     re.compile(r"\bepoch \d+ after (?P<value>\d+) steps\b"), "step"),
    ("tensorflow NanTensorHook", "diverged with loss",
     re.compile(rf"diverged with loss = (?P<value>{NUMBER})"), "loss"),
    # (releases before 1.x printed the monitor without its repr quotes)
    ("lightning ModelCheckpoint", " reached ",
     re.compile(rf"global step \d+: '?(?P<key>[A-Za-z_][\w/.-]*)'? reached (?P<value>{NUMBER})"), None),
    ("lightning EarlyStopping", "new best score: ",
     re.compile(rf"\bMetric (?P<key>[A-Za-z_][\w/.-]*) improved\b[^.]*(?:\.\d[^.]*)*\. New best score: "
                rf"(?P<value>{NUMBER})"), None),
    ("llama-recipes MemoryTrace", "memory reserved was",
     re.compile(r"\bMax CUDA memory reserved was (?P<value>\d+) GB\b"), "max_memory_reserved_gb"),
    # MindSpore's LossMonitor: "epoch: 1 step: 1875, loss is 0.13536046"; model-zoo copies print the Tensor itself,
    # "loss is Tensor(shape=[], dtype=Float32, value= 2.30198)" (a shape of one: "value= [ 2.30198]")
    ("mindspore LossMonitor", "loss is ",
     re.compile(rf"\b(?P<key>[A-Za-z_]*loss) is (?:Tensor\(shape=\[[\d, ]*\], dtype=\w+, value=\s*\[?\s*)?"
                rf"(?P<value>{NUMBER})(?![\w.])"), None),
    # CycleGAN and pix2pix's BaseModel.update_learning_rate: print("learning rate %.7f -> %.7f" % (old_lr, lr))
    ("pix2pix update_learning_rate", " -> ",
     re.compile(rf"\blearning rate {NUMBER} -> (?P<value>{NUMBER})"), "lr"),
    # icefall's train.py after each epoch: f"Maximum memory allocated so far is {max_memory_allocated()//1000000}MB";
    # modded-nanogpt's "peak memory consumption: {max_memory_allocated() // 1024 // 1024} MiB"
    ("icefall memory sentence", "memory allocated so far",
     re.compile(r"\bMaximum memory allocated so far is (?P<value>\d+ ?MB)\b"), "gpu_memory"),
    ("modded-nanogpt memory sentence", "peak memory consumption",
     re.compile(r"\bpeak memory consumption: (?P<value>\d+ ?MiB)\b"), "gpu_memory"),
    # Colossal-AI's examples and ColossalChat's training scripts: coordinator.print_on_master(f"Booster init max CUDA
    # memory: {max_memory_allocated()/1024**2:.2f} MB") after booster.boost, and the benchmark's f"Max CUDA memory
    # usage: ... MB" at its end (their "max CPU memory" is the process's resident memory, no GPU's)
    ("colossal-ai cuda memory print", "cuda memory",
     re.compile(r"\b(?:Booster init max|Max) CUDA memory(?: usage)?: (?P<value>\d+(?:\.\d+)? ?MB)\b"), "gpu_memory"),
    # axolotl's log_gpu_memory_usage: "GPU memory usage after model load: 13.524GB (+0.136GB cache, ...)"
    ("gpu memory sentence", "gpu memory usage",
     re.compile(r"\bGPU memory usage\b[^:=]{0,48}[:=] ?(?P<value>\d+(?:\.\d+)? ?(?:[KMGT]i?B|MB|GB))\b"), "gpu_memory"),
    # nnU-Net v2's on_epoch_start: print_to_log_file(f"Current learning rate: {np.round(lr, decimals=5)}"), the rate
    # its poly schedule set for the epoch (a lone "lr: 0.01" stays a setting)
    ("nnU-Net epoch start", "current learning rate: ",
     re.compile(rf"\bCurrent learning rate: (?P<value>{NUMBER})\s*\Z"), "lr"),
    # GluonTS' mx Trainer: logger.info(f"Epoch[{epoch_no}] Learning rate is {curr_lr}") as each epoch starts, and
    # "Epoch[%d] Evaluation metric '%s'=%f" with "epoch_loss" or "validation_epoch_loss" as it ends
    ("gluonts trainer learning rate", "learning rate is ",
     re.compile(rf"\bEpoch\[\d+\] Learning rate is (?P<value>{NUMBER})"), "lr"),
    ("gluonts trainer evaluation metric", "evaluation metric '",
     re.compile(rf"\bEvaluation metric '(?P<key>[A-Za-z_]\w*)'=(?P<value>{NUMBER})"), None),
    # Horovod's LearningRateWarmupCallback (verbose): "\nEpoch %d: finished gradual learning rate warmup to %g."
    ("horovod warmup callback", "learning rate warmup to ",
     re.compile(rf"\bfinished gradual learning rate warmup to (?P<value>{NUMBER})"), "lr"),
    # Deeplearning4j's listeners: ScoreIterationListener log.info("Score at iteration {} is {}", ...) and
    # PerformanceListener's "...; iteration {}; iteration time: {} ms; ...; score: {};", the score being the loss
    # function's value on the minibatch
    ("dl4j ScoreIterationListener", "score at iteration ",
     re.compile(rf"\bScore at iteration \d+ is (?P<value>{NUMBER})"), "loss"),
    ("dl4j PerformanceListener", "; score: ",
     re.compile(rf"\biteration \d+; iteration time: .*; score: (?P<value>{NUMBER});"), "loss"),
    # candle's training examples (candle-examples/examples/mnist-training/main.rs and the crates copying its loop):
    # println!("{epoch:4} train loss {:8.5} test acc: {:5.2}%", avg_loss, 100. * test_accuracy), the epoch first
    ("candle training loop epoch", " train loss ",
     re.compile(rf"\A *(?P<value>\d+) train loss +{NUMBER} test acc: "), "epoch"),
    ("candle training loop loss", " train loss ",
     re.compile(rf"\A *\d+ train loss +(?P<value>{NUMBER}) test acc: "), "loss"),
    # tegrastats (Jetson): "... EMC_FREQ 0% GR3D_FREQ 99%@921 ..." (Orin: "GR3D_FREQ 87%@[1300,1300]"), the GPU's load
    ("tegrastats", "gr3d_freq ",
     re.compile(r"\bGR3D_FREQ (?P<value>\d+)%(?=@|\s|\Z)"), "gpu_utilization_pct"),
)
# (end2end-asr-pytorch's trainer logs each validation set's result as "VALID SET 0 LOSS:0.1780 CER:5.78%")
# Ignite's examples write "Validation Results - Epoch: 1  Avg accuracy: ... Avg loss: 0.13"; OpenNMT-tf "Evaluation
# result for step 5000: loss = 3.12 ; ..."; a split in brackets tags the line: PaddleClas "[Eval][Epoch 1][Avg]...",
# Flax's NNX examples "[test] step: 1199, loss: ...", Marian's validation logger "[valid] Ep. 2 : Up. 25000 : ...";
# a split in capitals before the counter, as WeNet's executor writes its cross-validation batches ("CV Batch {}/{} loss
# {:.6f} ", its training ones "TRAIN Batch ...").
# fairseq2's LogMetricRecorder titles a validation's figures "Validation Metrics (step {n}) - " (an evaluation's
# "Evaluation Metrics"); ParlAI's train_model logs the validation report as f"{datatype}:{report}", "valid:{'exs': ...";
# Catalyst's ConsoleLogger heads a loader's figures by its name and epoch, "valid (1/3) accuracy: ... | loss: ...";
# DJL's LoggingTrainingListener heads an epoch's validation figures "Validate: " ("Train: " its training ones).
# Levanter's eval_loss_loop names its tqdm bar "eval" or f"eval {name}" ("eval:  40%|... [..., loss=3.05]").
# JoeyNMT's _validate names its decoding in brackets: "Validation result (greedy) at epoch   1, step     1000: ...,
# loss: ..." (v1), "Evaluation result (beam search) loss:   3.21, ppl: ..." (v2); DLRM's dlrm_s_pytorch.py heads its
# test "Testing at - {j + 1}/{nbatches} of epoch {k}, loss ..."; ggml-opt's progress bar names the split before its
# bar, "train: [" or "val:   [" then "] data=... loss=...". Colossal-AI's legacy LogMetricByEpochHook heads an epoch's
# figures by its mode: f"[Epoch {cur_epoch} / Train]: {msg}", f"[Epoch {cur_epoch} / Test]: {msg}".
_EVAL_HEAD = re.compile(r"\s*(?:(?:Test|Validation|Validate|Valid|Val|Eval|Evaluation)(?: set| [Rr]esults?)?"
                        r"(?::(?!\S)| - )|"
                        r"(?:Validation|Evaluation) Metrics(?: \(step \d+\))? - |(?:valid|test):(?=\{)|"
                        r"(?:valid|val|test|eval)\w* \(\d+/\d+\) (?=[\w/]+: )|eval(?: [\w/.-]+)?: +\d+%\||"
                        r"(?:Evaluation|Validation|Test) results? (?:for|at|after) (?:step|epoch|iteration) \d+:|"
                        r"(?:Evaluation|Validation|Test) results? \((?:greedy|beam search)\) |Testing at - \d+/\d+ |"
                        r"(?:val|eval|test): +\[|\[Epoch \d+ / Test\]: |"
                        r"\[(?i:eval|evaluation|test|val|valid|validation)\]|"
                        r"Saving dict for global step \d+:|eval metrics after step: \d+,|"
                        r"(?:VALID|TEST) SET \d+ (?=[A-Z]+:)|"
                        r"(?:CV|DEV|VALID|VAL|TEST|EVAL) (?=(?:Batch|Step|Epoch|Iter|Iteration) \d))")
_EVAL_WORDS = ("Test", "Val", "Eval", "Saving dict", "eval", "VALID", "VAL", "TEST", "[", "CV ", "DEV ", "EVAL ", "val",
               "test")
# icefall's train.py names the split after the epoch it heads: f"Epoch {params.cur_epoch}, validation: {valid_info}"
# (a split word after a figure's comma is a figure's name elsewhere: PyG's "Loss: 1.94, Train: 0.30, Val: 0.23").
_SPLIT_AFTER_EPOCH = re.compile(r"\b[Ee]poch \d+, (?:validation|valid|eval|test): ")
_SPLIT_WORDS = ("validation: ", "valid: ", "eval: ", "test: ")
# Mozilla DeepSpeech's run_set progress bar: "Epoch {:>3d} | {:>10} | ... | Loss: {:.6f}", the set's name right-aligned
# ("  Training", "Validation", "      Test")
_SPLIT_BAR = re.compile(r"\bEpoch +\d+ \| +(?:Validation|Test) \|")
# Catalyst's TqdmCallback names its bar f"{epoch}/{num_epochs} * Epoch ({loader})": "2/3 * Epoch (valid): 100%|..."
_LOADER_BAR = re.compile(r"\d+/\d+ \* Epoch \((?:valid|val|test|eval)\w*\): ")
_HEAD_SEPARATORS = " \t-|"
# (fairseq2's "%(asctime)s %(levelname)s %(name)s - %(message)s" ends its head in " - ")
_HEAD_END = re.compile(r"[:\]] | - ")
MAX_HEAD = 96


def lift_phrases(body: str, low: str, p: Parsed) -> bool:
    """The figures of the sentences in :data:`PHRASES` into ``p``; True when one matched."""
    found = False
    for _printer, needle, rx, key in PHRASES:
        if needle in low:
            m = rx.search(body)
            if m is not None:
                name = key or m.group("key")
                found = lift_value(p, name, norm(name), m.group("value")) or found
    return found


def evaluation_losses(body: str, p: Parsed) -> None:
    """Under an evaluation head, the line's loss is the evaluation's. The head may follow the separator a
    logging format put after its time ("%(asctime)s - %(message)s"), or a head this module's caller did not
    take off, ending in ": " or "] " (PaddleClas' "[{asctime}] ppcls INFO: [Eval]...", absl's "... file.py:260] ")."""
    if "loss" not in p.metrics or "eval_loss" in p.metrics:
        return
    body = body.lstrip(_HEAD_SEPARATORS)
    if body.startswith(_EVAL_WORDS) and _EVAL_HEAD.match(body) is not None:
        p.metrics["eval_loss"] = p.metrics.pop("loss")
        return
    for m in _HEAD_END.finditer(body, 0, MAX_HEAD):
        if body.startswith(_EVAL_WORDS, m.end()) and _EVAL_HEAD.match(body, m.end()) is not None:
            p.metrics["eval_loss"] = p.metrics.pop("loss")
            return
    if (any(w in body for w in _SPLIT_WORDS) and _SPLIT_AFTER_EPOCH.search(body, 0, MAX_HEAD) is not None) or (
            "| " in body and _SPLIT_BAR.search(body, 0, MAX_HEAD) is not None) or (
            "* Epoch (" in body and _LOADER_BAR.match(body) is not None):
        p.metrics["eval_loss"] = p.metrics.pop("loss")
