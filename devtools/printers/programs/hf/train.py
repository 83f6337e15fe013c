"""A tiny Hugging Face training run whose output transformers, accelerate and datasets print themselves:
``python train.py SCENARIO`` (CPU; the model is built from a config and the data in memory, nothing is
downloaded). Each run writes, to stdout and stderr:

- ``train``: ``Trainer.train`` for a few steps with ``disable_tqdm=False`` (the bar written to a pipe: its
  redraws after ``\\r`` on one line), the log dicts (``{'loss': ..., 'grad_norm': ..., 'learning_rate': ...,
  'epoch': ...}``, through the bar's ``tqdm.write``) and the closing ``{'train_runtime': ...}`` dict.
- ``train_info``: the same with ``log_level="info"`` and transformers' explicit format, as its example scripts
  set it (``[INFO|trainer.py:N] <asctime> >> ***** Running training *****``, ``  Num examples = 64``, ...).
- ``label_error``: a label past the vocabulary: the cross-entropy's ``IndexError: Target 99 is out of
  bounds.`` raised inside ``Trainer.train`` (the bar left open, the traceback after its last redraw).
- ``loss_error``: a ``compute_loss`` of the user's own that raises ``ValueError`` after a logged step.
- ``accelerate`` (under ``accelerate launch --cpu``): a script that raises after creating its ``Accelerator``:
  accelerate's record of the defaults it used (one ``logger.warning``: the message, a tab-led line per
  default, ``To avoid this warning ...``), the script's traceback, then accelerate's own traceback ending
  in ``subprocess.CalledProcessError: Command '[...]' returned non-zero exit status 1.``.
- ``warn``: transformers' own warnings through its logger under the explicit format (a config attribute it
  does not know, ``[WARNING|...] ... >> ...``) and through ``warnings`` (a deprecated argument).
"""

import os
import sys

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM, LlamaForSequenceClassification, Trainer, TrainingArguments

VOCAB = 64


def model():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32)
    return LlamaForCausalLM(cfg)


def data(bad_label=False):
    # (a list of examples: datasets' Dataset fingerprints itself with dill, which fails on this pyarrow)
    rows = [{"input_ids": [(i * 7 + j) % VOCAB for j in range(8)]} for i in range(64)]
    for row in rows:
        row["labels"] = list(row["input_ids"])
    if bad_label:
        rows[9]["labels"][3] = 99  # past the vocabulary
    return rows


def args(**kw):
    base = dict(output_dir="out", max_steps=6, per_device_train_batch_size=4, logging_steps=2,
                disable_tqdm=False, report_to="none", use_cpu=True, save_strategy="no", seed=0)
    return TrainingArguments(**(base | kw))


def s_train():
    Trainer(model=model(), args=args(), train_dataset=data()).train()


def s_train_info():
    transformers.utils.logging.enable_explicit_format()
    Trainer(model=model(), args=args(log_level="info"), train_dataset=data()).train()


def s_label_error():
    Trainer(model=model(), args=args(max_steps=20), train_dataset=data(bad_label=True)).train()


class LossTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.state.global_step >= 3:
            raise ValueError(f"loss is nan at step {self.state.global_step}: check the learning rate")
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


def s_loss_error():
    LossTrainer(model=model(), args=args(), train_dataset=data()).train()


def s_warn():
    transformers.utils.logging.enable_explicit_format()
    model().save_pretrained("tiny")
    # a head the checkpoint has no weights for: from_pretrained's report of the weights it initialised
    LlamaForSequenceClassification.from_pretrained("tiny", num_labels=3)
    Trainer(model=model(), args=args(gradient_checkpointing=True, max_steps=2), train_dataset=data()).train()


def s_accelerate():
    from accelerate import Accelerator

    acc = Accelerator(cpu=True)
    if acc.is_main_process:
        raise ValueError("loss is nan at step 12: check the learning rate")


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    globals()["s_" + sys.argv[1]]()
