"""A tiny PyTorch Lightning run (CPU) and a wandb offline run whose output the libraries print themselves:
``python fit.py SCENARIO``. Nothing is downloaded. Each run writes, to stdout and stderr:

- ``fit``: ``Trainer.fit`` of a small LightningModule stopped by ``max_epochs``: the Trainer's start-up
  lines (``GPU available: False, used: False``, ``TPU available``, ...), the model summary table
  (``  | Name | Type | Params | Mode`` with its ``---`` rules and the totals lines after it), the
  TQDMProgressBar written to a pipe (its ``\\r`` redraws), rank_zero_warn's ``PossibleUserWarning`` about
  ``num_workers`` (a ``UserWarning`` with its source line), ``ModelCheckpoint``'s and ``EarlyStopping``'s
  messages (``verbose=True``) and ``Trainer.fit` stopped: `max_epochs=2` reached.``.
- ``rich``: the same with ``RichProgressBar`` and ``RichModelSummary``.
- ``step_error``: an error raised inside ``training_step`` (the traceback through Lightning's loop frames).
- ``misconfig``: a ``MisconfigurationException`` (``ModelCheckpoint`` monitoring a metric never logged).
- ``warn``: ``rank_zero_warn`` of the user's own (``UserWarning`` with its source line) and Lightning's own
  ``PossibleUserWarning`` about ``log_every_n_steps`` (Lightning's ``formatwarning`` writes a warning from its
  own files on one line; the one about ``num_workers`` needs more than two CPUs).
- ``wandb``: ``wandb.init`` with ``WANDB_MODE=offline`` (``wandb: Tracking run with wandb version ...``,
  ``wandb: W&B syncing is set to `offline` ...``), logged metrics, ``wandb.finish()``'s ``Run history:``
  and ``Run summary:`` blocks and ``wandb: You can sync this run to the cloud by running:``.
- ``wandb_error``: a run that raises inside ``with wandb.init()``: wandb's footer, then the traceback.
"""

import os
import sys
import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset


def _data(n=64):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=g)
    return TensorDataset(x, (x.sum(1, keepdim=True) > 0).float())


def _module(fail_at=None, val=True):
    import pytorch_lightning as pl

    class Regressor(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU())
            self.head = torch.nn.Linear(16, 1)

        def forward(self, x):
            return self.head(self.encoder(x))

        def training_step(self, batch, idx):
            x, y = batch
            if fail_at is not None and self.global_step >= fail_at:
                raise ValueError(f"loss is nan at step {self.global_step}: check the learning rate")
            loss = torch.nn.functional.binary_cross_entropy_with_logits(self(x), y)
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if val:
        def validation_step(self, batch, idx):
            x, y = batch
            self.log("val_loss", torch.nn.functional.binary_cross_entropy_with_logits(self(x), y))
        Regressor.validation_step = validation_step
    return Regressor()


def _trainer(**kw):
    import pytorch_lightning as pl

    base = dict(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                default_root_dir="out")
    return pl.Trainer(**(base | kw))


def _loaders():
    return DataLoader(_data(), batch_size=8), DataLoader(_data(32), batch_size=8)


def s_fit():
    from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint, ModelSummary, TQDMProgressBar

    # (with rich installed Lightning picks its Rich bar and summary: the plain ones are asked for)
    cbs = [ModelCheckpoint(dirpath="out/ckpt", monitor="val_loss", verbose=True),
           EarlyStopping(monitor="val_loss", patience=1, verbose=True), TQDMProgressBar(), ModelSummary()]
    _trainer(callbacks=cbs, enable_checkpointing=True).fit(_module(), *_loaders())


def s_rich():
    from pytorch_lightning.callbacks import RichModelSummary, RichProgressBar

    _trainer(callbacks=[RichProgressBar(), RichModelSummary()]).fit(_module(), *_loaders())


def s_step_error():
    from pytorch_lightning.callbacks import ModelSummary, TQDMProgressBar

    _trainer(max_epochs=3, callbacks=[TQDMProgressBar(), ModelSummary()]).fit(_module(fail_at=5), *_loaders())


def s_misconfig():
    from pytorch_lightning.callbacks import ModelCheckpoint

    cb = ModelCheckpoint(dirpath="out/ckpt", monitor="val_acc")
    _trainer(callbacks=[cb], enable_checkpointing=True, max_epochs=1).fit(_module(), *_loaders())


def s_warn():
    from pytorch_lightning.utilities import rank_zero_warn

    from pytorch_lightning.loggers import CSVLogger

    rank_zero_warn("the learning rate schedule has no warm-up: the first steps may diverge")
    # (a logger: the fit loop warns that the epoch has fewer batches than log_every_n_steps)
    _trainer(max_epochs=1, enable_progress_bar=False, enable_model_summary=False, logger=CSVLogger("out")).fit(
        _module(val=False), DataLoader(_data(), batch_size=8))


def s_wandb():
    import wandb

    run = wandb.init(project="tiny", name="tiny-run", dir="out", config={"lr": 0.1, "batch_size": 8})
    for step in range(20):
        run.log({"train/loss": 2.0 / (step + 1), "train/lr": 0.1 * 0.9 ** step, "epoch": step // 10})
    run.summary["best_val_loss"] = 0.125
    run.finish()


def s_wandb_error():
    import wandb

    with wandb.init(project="tiny", name="tiny-run", dir="out") as run:
        for step in range(5):
            run.log({"train/loss": 2.0 / (step + 1)})
        raise ValueError("loss is nan at step 5: check the learning rate")


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    warnings.simplefilter("default")
    globals()["s_" + sys.argv[1]]()
