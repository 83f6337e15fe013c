"""Key families: which key of a structured record becomes which typed field, and how its value is read.

A record is a JSON object, a Python dict repr, logfmt, or the ``key: value`` / ``key=value`` pairs of a
step line. Keys are matched after normalising them (:func:`norm`): lower case, camelCase split, every
run of other characters one ``_``; so ``memory(GiB)``, ``Memory (GiB)`` and ``memory_gib`` are one key,
``train/loss``, ``train.loss`` and ``train_loss`` another. The families come from the printers:

- time: ``timestamp``/``@timestamp``/``time``/``ts``/``asctime``/``created`` (Python logging, structlog,
  python-json-logger, logrus, zap, pino, Vector/Filebeat ECS), ISO 8601 or epoch s/ms/µs/ns;
- level: ``level``/``levelname``/``severity``/``lvl``, words or pino/bunyan numbers (``levelno``: Python's);
- message: ``message``/``msg``/``event`` (structlog), with the exception text loggers put beside it;
- training: ``task_id``, ``task_type`` (ms-swift's ``train_type``), ``model_name``, ``phase``, ``epoch``,
  ``step`` (HF ``global_step``, ms-swift ``global_step/max_steps`` "1/94", Megatron ``iteration`` "10/100",
  DeepSpeed ``global_steps``, torchtune ``Step``), the losses, learning rate, grad norm, throughput;
- GPU: ``gpu_memory_mb`` from ms-swift ``memory(GiB)`` (its ``max_memory_reserved``), torchtune
  ``peak_memory_reserved`` (GiB), Megatron's ``max reserved`` (MB), DeepSpeed's ``Max_CA`` (GB), or any
  ``gpu_memory``/``gpu_mem`` key with a unit; ``gpu_utilization_pct`` from ``gpu_util``, ``utilization.gpu``.

Numbers keep NaN and Inf in every spelling the frameworks print (``nan``, ``NaN``, ``NAN`` from
Megatron's ``{:.6E}``, ``inf``, ``-inf``, ``Infinity``).
"""

from __future__ import annotations

import math
import re
from typing import Any

GIB_TO_MB = 1024.0

# normalised key -> (field or metric name, scale to the field's unit)
_FAMILIES: dict[str, tuple[str, float]] = {}


def _family(name: str, *keys: str, scale: float = 1.0) -> None:
    for k in keys:
        _FAMILIES[k] = (name, scale)


# The memory units frameworks print: "GB" and "MB" are powers of 1024 there (torch's bytes / 1024**3).
_family("gpu_memory_mb", "gpu_memory", "gpu_mem", "gpu_memory_used", "gpu_memory_mb", "gpu_mem_mb", "gpu_memory_mib",
        "gpu_mem_mib", "gpu_memory_used_mb", "gpu_memory_used_mib", "memory_used_mib", "memory_used_mb", "memory_mib",
        "memory_mb", "max_reserved", "gpu_memory_reserved_mb", "max_memory_reserved_mb",
        "dcgm_fi_dev_fb_used",  # DCGM's framebuffer in use, MiB
        # torch's / Paddle's max_memory_reserved() by name (PaddleOCR "max_mem_reserved: 6177 MB")
        "max_memory_reserved", "max_mem_reserved",
        # DeepSpeed's ThroughputTimer "MaxMemAllocated=19.52GB" (max_memory_allocated() in GiB, its only GPU figure)
        "max_mem_allocated",
        # nvidia-smi --query-compute-apps: the memory a process holds, "used_gpu_memory [MiB]"
        "used_gpu_memory", "used_gpu_memory_mib")
# A bare memory figure is a metric ``memory_mb`` (MB unless the value says otherwise); on a step line or
# beside a GPU utilisation it is the GPU's (see settle_memory): mmcv/mmengine ``memory: 2103``
# (torch.cuda.max_memory_allocated in MB), detectron2 ``max_mem: 1962M``, maskrcnn-benchmark ``max mem: 4358``,
# Detectron's ``"mem": 3084``, torchtitan ``memory: 2.49GiB(3.14%)``, NeMo Automodel ``mem 24.06 GiB``,
# gpustat's ``memory.used`` and DCGM's ``fb_used`` (MiB). Elsewhere (a scheduler's ``Mem=50``, SGLang's
# ``avail mem=38.11 GB``) it is not.
_family("memory_mb", "memory", "mem", "max_mem", "max_memory", "memory_used", "mem_used", "fb_used")
_family("gpu_memory_mb", "gpu_memory_gb", "gpu_memory_gib", "gpu_mem_gb", "gpu_mem_gib", "memory_gib", "memory_gb",
        "gpu_memory_used_gb", "gpu_memory_used_gib", "peak_memory_reserved", "max_memory_reserved_gb",
        "max_memory_reserved_gib", "max_ca",
        # axolotl's trainer log: "memory/device_reserved (GiB)" (earlier "memory/device_mem_reserved(gib)"); its
        # max_active and max_allocated stay metrics of their own
        "memory_device_reserved_gib", "memory_device_mem_reserved_gib",
        # mistral-finetune's train_log_msg: "peak_alloc_mem (GB): 23.4" (torch.cuda.max_memory_allocated() / 1024**3);
        # its "alloc_mem (GB)" (the memory allocated now) stays a metric of its own
        "peak_alloc_mem_gb",
        # NVlabs' GAN training loops (StyleGAN2-ADA, StyleGAN3, EDM) print their tick's "gpumem 5.39"
        # (torch.cuda.max_memory_allocated(device) / 2**30); the "reserved" beside it stays unread
        "gpumem",
        # OLMo-core's GPUMemoryMonitorCallback: "gpu_memory/GPU active mem (GiB)" (max_memory_active; its "GPU reserved
        # mem (GiB)" stays a metric of its own)
        "gpu_memory_gpu_active_mem_gib",
        # LLaMA-Factory's LogCallback under RECORD_VRAM: trainer_log.jsonl's "vram_reserved" (get_peak_memory()'s
        # reserved bytes / 1024**3, rounded); its "vram_allocated" stays a metric of its own
        "vram_reserved",
        # nanoVLM's profiled step line: "peak alloc: {:.2f} GiB, peak reserved: {:.2f} GiB" (torch.cuda's
        # max_memory_allocated / max_memory_reserved in GiB; the allocated peak stays unread)
        "peak_reserved", scale=GIB_TO_MB)
# Slurm's gres/gpumem TRES: "21794M" as sstat and sacct print it (the unit on the value wins), bytes under --noconvert
_family("gpu_memory_mb", "gres_gpumem", scale=1 / 1048576)
_family("gpu_memory_mb", "gpu_memory_bytes", "gpu_mem_bytes", "gpu_memory_used_bytes", scale=1 / 1048576)
# torch.cuda.memory_reserved() / max_memory_reserved() logged in bytes under their own names (the caching allocator's
# hold on the GPU, the figure the GiB families above read); memory_allocated() beside them stays a metric of its own
_family("gpu_memory_mb", "memory_reserved_bytes", "max_memory_reserved_bytes", "cuda_memory_reserved_bytes",
        "cuda_max_memory_reserved_bytes", scale=1 / 1048576)
_family("gpu_utilization_pct", "gpu_utilization_pct", "gpu_util_pct", "gpu_utilization", "gpu_util",
        "utilization_gpu", "gpu_usage_pct", "gpu_util_percent", "gpu_utilization_percent",
        "dcgm_fi_dev_gpu_util",  # DCGM field names as exporters key them
        "gputl",  # ... and the short name dcgmi dmon heads its column with (field 203)
        # rocm-smi: --showuse's "GPU use (%)", the concise table's "GPU%"; amd-smi monitor's GFX_UTIL (the graphics
        # engine's busy %, the GPU's utilisation)
        "gpu_use", "gpu_pct", "gfx_util",
        # Habana's hl-smi query CSV names its accelerator the AIP: "utilization.aip [%]"
        "utilization_aip",
        # Slurm's NVML GPU plugin accounts a job's GPU use as the TRES gres/gpuutil (sstat/sacct TRESUsageIn*); its
        # gres/gpumem is the memory the job's processes hold ("21794M", the unit on the value)
        "gpuutil")
# nvidia_gpu_exporter (Prometheus): each nvidia-smi query field a gauge "nvidia_smi_<field>", a "[%]" field turned
# into a ratio of 0-1 ("nvidia_smi_utilization_gpu_ratio 0.98"), a "[MiB]" one into bytes ("..._memory_used_bytes");
# its utilization_memory_ratio (how busy the memory is) and memory_total/free_bytes are no such figure
_family("gpu_utilization_pct", "nvidia_smi_utilization_gpu_ratio", scale=100.0)
_family("gpu_memory_mb", "nvidia_smi_memory_used_bytes", scale=1 / 1048576)
_family("gpu_memory_mb", "fbusd")  # dcgmi dmon's short name of DCGM_FI_DEV_FB_USED (field 252), MiB
_family("gpu_memory_mb", "vram_used")  # amd-smi monitor's VRAM_USED ("30123 MB")
# rocm-smi --showmeminfo vram: "GPU[0]\t\t: VRAM Total Used Memory (B): 1234567890", bytes
# (--csv names the column "VRAM Total Used Memory (B)": the unit in parentheses goes onto the value)
_family("gpu_memory_mb", "vram_total_used_memory_b", "vram_total_used_memory", scale=1 / 1048576)
# detectron2 prints the sum of its losses as ``total_loss``; NeMo's Megatron models ``reduced_train_loss``.
# Composer's console logger names it ``loss/train/total``.
# Cross-entropy is the loss of the sequence models that print it by that name: OpenNMT-py's ``xent``
# (its ``ppl`` is exp(xent)); NVIDIA's DLLogger examples print the step's loss as ``step_loss``.
# OLMo's console logger prints ``train/CrossEntropyLoss`` (camelCase: ``cross_entropy_loss``).
# llama-recipes and the PEFT examples print the epoch's mean loss as ``train_epoch_loss`` / ``eval_epoch_loss``.
_family("loss", "loss", "train_loss", "training_loss", "lm_loss", "train_lm_loss", "train_loss_step", "total_loss",
        "reduced_train_loss", "loss_train_total", "loss_total", "xent", "cross_entropy", "step_loss",
        "cross_entropy_loss", "ce_loss", "epoch_loss",
        # Lightning's self.log(..., on_step=True, on_epoch=True) logs "{name}_step" and "{name}_epoch" (its mean)
        "loss_step", "loss_epoch", "train_loss_epoch",
        # Trax's default loss layer, logged by its name: "Step 100: train WeightedCategoryCrossEntropy |  2.30"
        "weighted_category_cross_entropy",
        # GluonNLP's word language model: "[Epoch 0 Batch 200/2983] current loss 6.89, ppl 982.31, ..."
        "current_loss",
        # tensorpack's ImageNet examples name the cross-entropy "xentropy-loss" (ScalarPrinter: "xentropy-loss: 4.3052")
        "xentropy_loss",
        # The TensorFlow Object Detection API's model_lib_v2 logs its losses as "Loss/total_loss" (the sum of the
        # classification, localization and regularization losses beside it)
        "loss_total_loss",
        # DJL's LoggingTrainingListener names a loss by its evaluator, the class's name: "Train: Accuracy: 0.93,
        # SoftmaxCrossEntropyLoss: 0.24" (Loss.softmaxCrossEntropyLoss(), Loss.sigmoidBinaryCrossEntropyLoss())
        "softmax_cross_entropy_loss", "sigmoid_binary_cross_entropy_loss")
# The running mean of the loss, which some printers show as their only loss: fastText's "avg.loss", kohya
# sd-scripts' bar "avr_loss". Beside a loss of the step it stays a metric of its own (settle_loss).
_family("running_loss", "avg_loss", "avr_loss", "average_loss",
        "mean_loss",  # ParlAI's ranking agents report the interval's "mean_loss"
        "avg_epoch_loss")  # GluonTS' trainer bar: the epoch's running mean so far, "avg_epoch_loss=5.43"
_family("eval_loss", "eval_loss", "val_loss", "validation_loss", "valid_loss", "eval_lm_loss", "lm_loss_value",
        "eval_epoch_loss",
        # GluonTS' trainer: "Epoch[3] Evaluation metric 'validation_epoch_loss'=5.612300" and its bar's running mean
        "validation_epoch_loss", "validation_avg_epoch_loss",
        "eval_weighted_category_cross_entropy")  # Trax's eval stream logs its loss layer by name
# The rate a scheduler set for the step, by the names its printers give it: Coqui TTS's console logger
# "current_lr", icefall's and many scripts' "cur_lr"; OpenRLHF's PPO bar the actor's, "act_lr" (the policy trained;
# its critic's "cri_lr" is another model's).
_family("learning_rate", "learning_rate", "lr", "train_learning_rate", "train_lr", "current_lr", "cur_lr",
        "current_learning_rate", "act_lr")
# fairseq ``gnorm``, torch's clip_grad_norm_ ``total_norm``. OLMo's ``optim/total_grad_norm``.
_family("grad_norm", "grad_norm", "gradient_norm", "train_grad_norm", "global_grad_norm", "gnorm", "total_norm",
        "grad_l2_norm", "total_grad_norm",
        "grad_l2",  # nanoT5's "Grad_l2 --> 1.234": the gradients' L2 norm
        "gradients_l2",  # Trax's training loop logs the gradients' L2 norm as "gradients_l2"
        "grad_gnorm",
        "gn",  # TensorFlow NMT's print_step_info: "... ppl %.2f gN %.2f" (the global norm of the gradients)
        # MindFormers' MFLossMonitor prints the gradients' global norm it clips by: "global_norm: [1.234]"
        "global_norm",  # RLlib's learner_stats: the global norm of the gradients ("grad_gnorm")
        "l2_grads",  # big_vision's train.py measures the gradients' global L2 norm as "l2_grads"
        "grdn")  # LeRobot's train.py meters the clipped gradients' norm as AverageMeter("grdn", ":.3f")
# A bare ``norm`` is the gradients' on a step line (one that names its step or epoch): llm.c's "step 1/74 | train loss
# 11.01 | norm 15.41 | lr 6e-06" prints no other norm. Elsewhere it is not known whose it is: scikit-learn's SGD
# prints its weights' "Norm: 12.34, NNZs: 100, Bias: ..., T: 1000, Avg. loss: ..." after each "-- Epoch 1" line.
# Meta Lingua's train.py prints the clipped gradients' norm as "grad: 3.45e-01" beside its "step: 1000".
_family("bare_norm", "norm", "grad")
# What a serving engine generates per second: vLLM's "Avg generation throughput" (its rule names it), SGLang's
# scheduler "gen throughput (token/s)".
_family("generation_throughput_tokens_s", "gen_throughput_token_s", "gen_throughput_tokens_s",
        "generation_throughput_token_s", "generation_throughput_tokens_s")
_family("iteration_time_ms", "elapsed_time_per_iteration_ms")
_family("iteration_time_s", "elapsed_time_per_iteration_s", "iter_time_s", "train_speed_s_it")
_family("throughput_iter_s", "train_speed_iter_s")
_family("throughput_samples_s", "train_samples_per_second", "samples_per_second", "samples_sec",
        "running_avg_samples_per_sec")
_family("throughput_steps_s", "train_steps_per_second")
_family("eval_samples_s", "eval_samples_per_second")
_family("train_runtime_s", "train_runtime")
_family("eval_runtime_s", "eval_runtime")
# MaxText's "TFLOP/s/device" is the same figure per accelerator.
_family("tflops_per_gpu", "throughput_per_gpu_tflop_s_gpu", "throughput_tflop_s_gpu", "tflop_s_device")
_family("nan_iterations", "number_of_nan_iterations")
_family("skipped_iterations", "number_of_skipped_iterations")

# Counters: typed fields of the event, never metrics. "N/M" values carry the total.
# fairseq counts optimizer steps as ``num_updates``; LLaMA-Factory's trainer_log.jsonl ``current_steps``.
STEP_KEYS = frozenset(("step", "global_step", "global_steps", "steps", "iteration", "iter", "train_step",
                       "trainer_global_step", "current_step", "global_step_max_steps", "num_steps", "num_updates",
                       "current_steps",
                       # Sockeye's "Updates=1000"; Marian's "Up. 500" (see ABBREVIATIONS)
                       "updates",
                       # flashlight (wav2letter) Train's log string: "epoch:        1 | nupdates:         1000 | ..."
                       "nupdates",
                       # Pax (paxml) logs "step_i: %d, training loss: %s"
                       "step_i"))
MAX_STEP_KEYS = frozenset(("max_steps", "total_steps", "train_iters", "max_iters", "num_training_steps"))
# MLPerf's mllog puts the epoch a record belongs to in its metadata: ":::MLLOG {..., "metadata": {"file": ..., "lineno":
# ..., "epoch_num": 12}}" (read whole: a bare "epoch_num: 500" is PaddleOCR's configured number of epochs).
# LeRobot's MetricsTracker prints the epochs seen as "epch:{:.2f}" (its "ep" counts episodes).
EPOCH_KEYS = frozenset(("epoch", "train_epoch", "trainer_epoch", "cur_epoch", "current_epoch", "metadata_epoch_num",
                        "epch"))
# Keys a printer writes in words of its own, read as the keys they stand for when one is the whole key of a
# ``key value`` run's pair: abbreviations with dots (the dot tells one from a word: a bare "ep" may be an episode)
# and the training objective called a cost ("Time cost=4.6" is no loss: there the key is two words). Marian's
# scheduler: "Ep. 1 : Up. 500 : Sen. 64523 : Cost 9.18 : ... : L.r. 3.0000e-04" (epoch, updates, sentences, cost,
# learning rate).
SPELLED_KEYS = {"ep.": "epoch", "up.": "updates", "l.r.": "lr", "it.": "iteration", "iter.": "iteration",
                "cost": "loss"}
# Strings lifted as the event's task fields.
TASK_KEYS: dict[str, str] = {
    "task_id": "task_id", "taskid": "task_id", "job_id": "task_id",
    "task_type": "task_type", "train_type": "task_type", "training_type": "task_type",
    "model_name": "model_name", "model": "model_name", "model_id": "model_name", "model_name_or_path": "model_name",
    "phase": "phase", "stage": "phase",
}
# Ray's JSON logs carry ``timestamp_ns``; a unit in the key only confirms what the number's size says.
# A GPU's product name as NVML and ROCm report it (DCGM's and Kubernetes' ``modelName``, nvidia-smi's
# ``name``): "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "GeForce GTX 1080 Ti", "A100-SXM4-40GB",
# "AMD Instinct MI300X". Under a model key it names the device, not the model being trained.
_GPU_PRODUCT = re.compile(r"(?:NVIDIA|Tesla|GeForce|Quadro|TITAN|AMD Instinct|AMD Radeon|Radeon|Intel\(R\) Data Center"
                          r") \S|[AHLV]\d{2,3}[A-Z]?-(?:SXM|PCIE|PCIe|NVL)")


def is_gpu_product(value: str) -> bool:
    return _GPU_PRODUCT.match(value) is not None


# log4j2's JsonLayout writes ``instant`` ({"epochSecond", "nanoOfSecond"}) or, before 2.11, ``timeMillis``;
# Cloud Logging's ``timestamp`` may be {"seconds", "nanos"}.
TIME_KEYS = frozenset(("timestamp", "time", "ts", "asctime", "created", "datetime", "date_time", "t", "timestamp_ns",
                       "timestamp_ms", "time_ns", "time_ms", "ts_ns", "ts_ms", "instant", "time_millis",
                       "timestamp_millis"))
# The parts of a time written as a dict (protobuf's Timestamp in JSON, Java's Instant): (seconds, nanoseconds).
TIME_PARTS = (("seconds", "nanos"), ("epochSecond", "nanoOfSecond"), ("epoch_second", "nano_of_second"))
# zap's development encoder config names its keys by one capital ("T", "L", "C", "M"), and so do zerolog set-ups
# that copy it: "l" and "m" are a level and a message only when their value is one (a level word, a text).
LEVEL_KEYS = frozenset(("level", "levelname", "severity", "lvl", "log_level", "loglevel", "level_name",
                        "severity_text", "level_value", "l"))
MESSAGE_KEYS = frozenset(("message", "msg", "event", "m"))
# Where loggers put the exception beside the message (python-json-logger, structlog, ECS, pino).
EXCEPTION_KEYS = frozenset(("exc_info", "exc_text", "exception", "stack_trace", "stacktrace", "traceback",
                            "error_stack_trace", "err_stack", "error_stack", "stack"))
# Serilog names the logger "SourceContext" (ForContext<T>(), the compact JSON formatters write it as a property).
LOGGER_KEYS = frozenset(("logger", "name", "logger_name", "log_logger", "source_context"))
# Keys that name the logger only beside a key of the same printer (alone, each may mean something else): .NET's
# JsonConsoleFormatter writes the ILogger's category as "Category" beside "LogLevel" (a "category" elsewhere may be a
# data set's class); HashiCorp's go-hclog JSON writes the logger's name as "@module" beside "@level" (intlogger.go
# jsonMapEntry; a "module" elsewhere is Python's source module). (the logger's key, the key that must be beside it)
PAIRED_LOGGER_KEYS = (("Category", "LogLevel"), ("@module", "@level"))
# Numbers a logger gives its levels: pino and bunyan (level); Python's logging (levelno).
_NUMERIC_LEVELS = {10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL"}
_PYTHON_LEVELNO = {10: "DEBUG", 20: "INFO", 30: "WARN", 40: "ERROR", 50: "FATAL"}
# logback's Level.toInt, which logstash-logback-encoder writes as ``level_value`` beside the level's name.
_LOGBACK_LEVELS = {5000: "TRACE", 10000: "DEBUG", 20000: "INFO", 30000: "WARN", 40000: "ERROR"}
_LEVEL_NUMBERS = {"levelno": _PYTHON_LEVELNO, "level_value": _LOGBACK_LEVELS}
# A record's own bookkeeping, which a logger writes in every record and is no training state: the process id
# (bunyan, pino, python-json-logger's %(process)d), bunyan's format version ``v``, Logstash's ``@version``, the
# source line, and loguru's serialize=True record ids (``record.process.id``, ``record.thread.id``, ``record.line``);
# MLPerf's mllog writes its caller's line in the record's metadata (``metadata.lineno``).
RECORD_META_KEYS = frozenset(("pid", "v", "@version", "lineno", "process", "thread", "record.process.id",
                              "record.thread.id", "record.line", "metadata.lineno"))

# Where a record nests its run's configuration: Ray Tune's result.json "config" (Ray Train's
# {"train_loop_config": {...}} inside it; ray/tune/logger/json.py JsonLoggerCallback), MLflow's Run.to_dictionary
# "data.params" (`mlflow runs describe`), W&B's and Lightning's "hparams"/"hyperparameters". A learning rate or a step
# budget under one is a setting, never the step's state: its leaves stay text in the attributes.
CONFIG_KEYS = frozenset(("config", "train_loop_config", "params", "hparams", "hyperparameters", "hyper_parameters"))
# A tracker's own count of its log calls, which yields to the trainer's step in the same record: W&B's "_step" (0, 1, 2
# per wandb.log call) beside transformers' WandbCallback "train/global_step".
TRACKER_COUNTERS = frozenset(("_step",))
# Records that name their one metric in a field and carry its value in another: (name key, value key). MLflow's
# Metric (mlflow/protos/service.proto: key, value, timestamp, step), a list of them in LogBatch and GetMetricHistory
# bodies; ClearML's MetricsScalarEvent (metric = the title, variant = the series, value, iter); Comet's MetricRest
# (metricName, metricValue as a string, step, epoch); TensorBoard's scalars as a frame of run, tag, step, value.
NAMED_VALUE_KEYS = (("key", "value"), ("metric", "value"), ("metricName", "metricValue"),
                    ("metric_name", "metric_value"), ("tag", "value"))
# The key that qualifies a named value's name (ClearML's series: "train", "validation", "gpu_0_utilization").
NAMED_VALUE_QUALIFIERS = ("variant",)

# The metrics that make a line a step line (with a step or epoch), as metrics.is_step_metric reads them.
STEP_METRICS = frozenset(("loss", "grad_norm", "eval_loss", "gpu_utilization_pct", "generation_throughput_tokens_s"))


def settle_memory(metrics: dict, counted: bool) -> None:
    """A bare ``memory_mb`` becomes ``gpu_memory_mb`` on a step line (``counted``: it names its step or
    epoch; or it carries a step metric) when no key named the GPU's memory itself; elsewhere it is
    dropped (its key's text stays in the attributes: whose memory, in what unit, is not known)."""
    value = metrics.pop("memory_mb", None)
    if value is not None and "gpu_memory_mb" not in metrics and (
            counted or not STEP_METRICS.isdisjoint(metrics) or any(k.endswith("loss") for k in metrics)):
        metrics["gpu_memory_mb"] = value


def settle_norm(metrics: dict, counted: bool) -> None:
    """A bare ``norm`` becomes ``grad_norm`` on a line that names its step or epoch (``counted``) when no key named
    the gradients' norm itself; elsewhere it is dropped (its key's text stays in the attributes)."""
    value = metrics.pop("bare_norm", None)
    if value is not None and counted and "grad_norm" not in metrics:
        metrics["grad_norm"] = value


def settle_loss(metrics: dict) -> None:
    """A running mean of the loss is the line's loss when the line prints no loss of the step."""
    value = metrics.get("running_loss")
    if value is not None and "loss" not in metrics:
        metrics["loss"] = value


# Every metric name the families can emit (dashboards may only name these).
CANONICAL_METRICS = frozenset(name for name, _scale in _FAMILIES.values())

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")
_NORM_CACHE: dict[str, str] = {}


def norm(key: str) -> str:
    """The key as the families know it: ``MaxMemAllocated`` -> ``max_mem_allocated``, ``memory(GiB)`` ->
    ``memory_gib``, ``lm loss`` -> ``lm_loss``. Cached: a log repeats its keys."""
    hit = _NORM_CACHE.get(key)
    if hit is None:
        hit = _NON_WORD.sub("_", _CAMEL.sub("_", key).lower()).strip("_")[:64]
        if len(_NORM_CACHE) < 8192:
            _NORM_CACHE[key] = hit
    return hit


def family(nkey: str) -> tuple[str, float] | None:
    """(metric name, scale) of a normalised key, or None for a key no family claims."""
    return _FAMILIES.get(nkey)


# Namespaces trackers put in front of a key (``train/loss``, verl's ``actor/grad_norm``,
# ``training/global_step``, ``perf/max_memory_reserved_gb``, Keras/Lightning ``val_loss``): the key without
# one is looked up again; an evaluation namespace makes the loss an ``eval_loss``. Value: what replaces it.
# OLMo's console logger groups its figures as ``train/``, ``optim/``, ``throughput/`` and ``System/``.
# TRL's PPOTrainer (0.x) groups its step's stats as ``ppo/loss/total``, ``ppo/learning_rate``.
# Chainer's Reporter names a figure by the link that reported it, the trained model being ``main`` by convention
# (PrintReport's ``main/loss``, and its Evaluator's ``validation/main/loss``). A cross-validation set is a held-out
# one: WeNet's and ESPnet's ``cv_loss``; so is a development set: Flair's and spaCy's ``dev_loss``.
# The Time-Series-Library (Informer, Autoformer, TimesNet and their forks) names its validation split "Vali":
# "Epoch: 9, Steps: 569 | Train Loss: 0.138 Vali Loss: 0.123 Test Loss: 0.144".
# trlx groups its losses as ``losses/total_loss`` (PPO) and ``losses/loss`` (ILQL); Slurm names a GPU's accounted
# figures as generic resources, ``gres/gpumem`` and ``gres/gpuutil``.
_NAMESPACES = {"train": "", "training": "", "trainer": "", "actor": "", "policy": "", "perf": "", "optim": "",
               "ppo": "", "optimizer": "", "metrics": "", "system": "", "main": "", "losses": "", "gres": "",
               "eval": "eval_", "val": "eval_",
               "valid": "eval_", "validation": "eval_", "vali": "eval_", "test": "eval_", "cv": "eval_", "dev": "eval_"}
_KNOWN = frozenset(_FAMILIES) | STEP_KEYS | MAX_STEP_KEYS | EPOCH_KEYS


def claimed(nkey: str) -> bool:
    """Whether the fields know a normalised key: a step, an epoch, a step budget or a family's metric."""
    return nkey in _KNOWN


_CANONICAL_CACHE: dict[str, str] = {}


# The learning rate of one optimizer or parameter group: ESPnet2 ``lr_0`` / ``optim0_lr0``, ``lr0``,
# ``lr_group0``, ``lr_pg1``. Group 0 is the one printed first, and the first value of a family wins.
# A bare ``lr0`` is a setting (ultralytics' initial learning rate), not the rate of a step.
# OLMo's ``optim/learning_rate_group0`` is the same, spelt out.
# Lightning's LearningRateMonitor names the rate by its optimizer's class ("lr-AdamW", "lr-SGD", "lr-Adam/pg1" per
# parameter group; its "lr-AdamW-momentum" is no rate).
_INDEXED_LR = re.compile(r"optim(?:izer)?_?\d+_lr_?\d+|(?:lr|learning_rate)_(?:group_?|pg_?)?\d+|lr_(?:sgd|adam|adamw|"
                         r"adagrad|adadelta|adamax|asgd|lbfgs|nadam|radam|rmsprop|rprop|sparseadam|adafactor|lamb|lion|"
                         r"fusedadam|fusedlamb)(?:_pg_?\d+)?")
# A GPU's memory however a script spells it: ``peak_gpu_memory``, ``max_gpu_mem_allocated_gb``,
# ``gpu_memory_reserved_mib`` (OLMo's "Peak GPU Memory (MB)"). The unit on the key or the value says the scale
# (memory_scale); none means MB.
_GPU_MEMORY = re.compile(r"(?:(?:peak|max)_)?gpu_mem(?:ory)?(?:_(?:peak|max))?(?:_(?:used|allocated|reserved|usage))?"
                         r"(?:_(mb|mib|gb|gib))?")
_GPU_MEMORY_SCALE = {None: 1.0, "mb": 1.0, "mib": 1.0, "gb": GIB_TO_MB, "gib": GIB_TO_MB}


# One GPU's figure keyed by its index, as trackers' system monitors name them (after a ``system`` namespace):
# W&B's GPU monitor (wandb core/pkg/monitor) "gpu.{i}.gpu" (utilisation %) and "gpu.{i}.memoryAllocatedBytes",
# repeated as "gpu.process.{i}.*" for the run's own GPU; ClearML's ResourceMonitor._get_gpu_stats
# "gpu_{i}_utilization" and "gpu_{i}_mem_used_gb" (memory.used MiB / 1024). Their "gpu.{i}.memory" and
# "gpu_{i}_mem_usage" are shares of the memory (busy or used, %), no amount, and stay metrics of their own.
_INDEXED_GPU: tuple[tuple[re.Pattern[str], tuple[str, float]], ...] = (
    (re.compile(r"gpu_(?:process_)?\d+_(?:gpu|utilization)"), ("gpu_utilization_pct", 1.0)),
    (re.compile(r"gpu_(?:process_)?\d+_memory_allocated_bytes"), ("gpu_memory_mb", 1 / 1048576)),
    (re.compile(r"gpu_\d+_mem_used_gb"), ("gpu_memory_mb", GIB_TO_MB)),
)


def _known(nkey: str) -> str | None:
    """The known key ``nkey`` is, directly or as one group's learning rate, a GPU memory spelling or one GPU's
    figure by its index."""
    if nkey in _KNOWN:
        return nkey
    if (nkey.startswith("gpu_") and nkey[4:5].isdigit()) or nkey.startswith("gpu_process_"):
        for pattern, fam in _INDEXED_GPU:
            if pattern.fullmatch(nkey):
                _FAMILIES.setdefault(nkey, fam)
                return nkey
        return None
    if "lr" in nkey or "learning_rate" in nkey:
        if _INDEXED_LR.fullmatch(nkey):
            return "lr"
    elif "gpu_mem" in nkey:
        m = _GPU_MEMORY.fullmatch(nkey)
        if m is not None:
            _FAMILIES.setdefault(nkey, ("gpu_memory_mb", _GPU_MEMORY_SCALE[m.group(1)]))
            return nkey
    return None


# A held-out split named after the figure rather than before it: mmcv's EvalHook merged into the training
# log as ``loss_val`` (mmsegmentation's "..., loss: 0.1675, ..., loss_val: 0.1805"), scripts' ``loss_valid``,
# ``loss_test``. Only a loss: ``acc_seg_val`` is no key a family knows either way.
_SPLIT_SUFFIXES = ("_val", "_valid", "_validation", "_eval", "_test")


def _split_suffix(nkey: str) -> str | None:
    """The evaluation key ``loss_val`` stands for (``eval_loss``), or None."""
    if not nkey.endswith(_SPLIT_SUFFIXES):
        return None
    base = nkey[:nkey.rindex("_")]
    return _known("eval_" + base) if base.endswith("loss") else None


def canonical(nkey: str) -> str:
    """The known key a namespaced one stands for (``actor_perf_max_memory_reserved_gb`` ->
    ``max_memory_reserved_gb``, ``test_loss`` -> ``eval_loss``, ``optim0_lr0`` -> ``lr``), else the key
    itself. Cached."""
    hit = _CANONICAL_CACHE.get(nkey)
    if hit is not None:
        return hit
    out = _known(nkey)
    if out is None:
        out = nkey
        rest, prefix = nkey, ""
        while "_" in rest:
            head, _, tail = rest.partition("_")
            replace = _NAMESPACES.get(head)
            if replace is None:
                break
            prefix = prefix or replace
            rest = tail
            known = _known(prefix + rest)
            if known is not None:
                out = known
                break
        if out is nkey and (split := _split_suffix(nkey)) is not None:
            out = split
    if len(_CANONICAL_CACHE) < 8192:
        _CANONICAL_CACHE[nkey] = out
    return out


# A number as the frameworks print it: bare, in ``tensor(...)``/NumPy reprs, NaN/Inf spelled any way, with a
# unit: percent, bytes (``18.5GB``, ``2.49GiB``; detectron2's and ultralytics' one-letter ``1962M``, ``6.73G``,
# upper case only: ``5m`` is minutes) or seconds.
# MSVC's printf writes a NaN as "nan(ind)" / "-nan(ind)" / "nan(snan)" (older runtimes "1.#QNAN", "-1.#IND",
# "1.#INF").
_NUM = re.compile(r"\s*(?:tensor\(|np\.\w+\(|numpy\.\w+\()?\s*([-+]?(?:nan(?:\((?:ind|snan)\))?|"
                  r"1\.#(?:qnan|snan|ind|inf)\d*|inf(?:inity)?|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?))\s*\)?\s*"
                  r"(%|[kmgt]i?b|(?-i:[KMGT])|b|ms|s)?\s*\Z", re.I)
_UNIT_MB = {"b": 1 / 1048576, "kb": 1 / 1024, "kib": 1 / 1024, "mb": 1.0, "mib": 1.0, "gb": GIB_TO_MB,
            "gib": GIB_TO_MB, "tb": GIB_TO_MB * 1024, "tib": GIB_TO_MB * 1024, "k": 1 / 1024, "m": 1.0,
            "g": GIB_TO_MB, "t": GIB_TO_MB * 1024}


def number(value: Any) -> tuple[int | float | None, str | None]:  # noqa: PLR0911 - one return per kind of input
    """A number and its unit suffix (``"18.5GB"`` -> (18.5, "gb"); ``"87%"`` -> (87.0, "%")).

    Integers stay ``int`` (a step must stay exact, however large: bounds are the caller's to check).
    Booleans and anything unreadable give (None, None). A float too large for a double is None too.
    """
    if value is None or value is True or value is False:
        return None, None
    if isinstance(value, int):
        return value, None
    if isinstance(value, float):
        return value, None
    if not isinstance(value, str) or len(value) > 64:
        return None, None
    m = _NUM.match(value)
    if m is None:
        return None, None
    text, unit = m.group(1), m.group(2)
    if text.isdigit() or (text[0] in "+-" and text[1:].isdigit()):
        return int(text), unit.lower() if unit else None
    if "(" in text or "#" in text:  # MSVC's spellings
        sign = -1.0 if text[0] == "-" else 1.0
        return (sign * math.inf if "inf" in text.lower() else math.nan), unit.lower() if unit else None
    try:
        return float(text), unit.lower() if unit else None
    except (ValueError, OverflowError):
        return None, None


def as_float(value: int | float) -> float | None:
    """A double for the contract, or None when an integer is too large for one."""
    try:
        return float(value)
    except OverflowError:
        return None


def memory_scale(unit: str | None, family_scale: float) -> float:
    """The factor to MB: a unit written on the value wins over the one the key implies."""
    if unit:
        return _UNIT_MB.get(unit, family_scale)
    return family_scale


def level_of(value: Any, key: str, words: dict[str, str]) -> str | None:
    if isinstance(value, str):
        return words.get(value.strip().upper())
    if isinstance(value, int) and not isinstance(value, bool):
        table = _LEVEL_NUMBERS.get(key, _NUMERIC_LEVELS)
        return table.get(value)
    return None
