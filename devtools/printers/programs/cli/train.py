"""A training script's command line as the libraries that parse it report its errors: ``CLI=<library>
python train.py ARGS`` (``CLI`` one of argparse, click, fire, hydra). Each run writes to stderr what the
library prints for the arguments given:

- argparse: ``usage: train.py [-h] ...`` (wrapped over several lines at the terminal's width, the
  continuation indented under the first option), then ``train.py: error: ...`` (a missing required
  argument, an invalid choice).
- click: ``Usage: train.py [OPTIONS] DATA_DIR``, ``Try 'train.py --help' for help.``, a blank line and
  ``Error: ...`` (a missing option, a value that is not an integer).
- fire: ``ERROR: ...`` (an argument it could not consume, a required one missing, a command it does not
  know), the usage of the command (``Usage: ...``, its ``  available commands:`` or ``  optional flags:``
  lines), a blank line and the hint to run it with ``--help`` (core.py ``_DisplayError``, helptext.py
  ``UsageText``).
- hydra: the job's records under Hydra's logging format (``[<asctime>][__main__][INFO] - ...``), then the
  job's error as ``run_and_report`` prints it (``Error executing job with overrides: [...]``, the traceback
  with Hydra's frames left out, ``Set the environment variable HYDRA_FULL_ERROR=1 ...``), or an override
  Hydra cannot compose (``Could not override 'optim.lr'.`` ... ``Key 'lr' is not in struct``).
"""

import logging
import os
import sys

CLI = os.environ.get("CLI", "argparse")


def run_argparse():
    import argparse

    ap = argparse.ArgumentParser(description="Train a tiny model.")
    ap.add_argument("--config", required=True, help="the run's YAML configuration")
    ap.add_argument("--model", choices=["llama-tiny", "gpt2-tiny", "bert-tiny"], default="llama-tiny")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--gradient-accumulation-steps", type=int, default=1)
    ap.add_argument("--output-dir", default="out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resume-from-checkpoint", default=None)
    ap.add_argument("data_dir")
    ap.parse_args()


def run_click():
    import click

    @click.command()
    @click.option("--lr", type=float, required=True, help="Learning rate.")
    @click.option("--epochs", type=int, default=3, help="Epochs to train.")
    @click.argument("data_dir")
    def train(lr, epochs, data_dir):
        click.echo(f"training on {data_dir}")

    train()


def run_fire():
    import fire

    def train(data_dir, lr=3e-4, epochs=3):
        print(f"training on {data_dir}")

    fire.Fire({"train": train})


def run_hydra():
    import hydra
    from hydra.core.config_store import ConfigStore

    cs = ConfigStore.instance()
    cs.store(name="config", node={"epochs": 2, "optim": {"name": "adamw", "lr": 3e-4},
                                  "model": {"name": "llama-tiny", "layers": 2}})

    @hydra.main(version_base=None, config_name="config")
    def main(cfg):
        log = logging.getLogger(__name__)
        log.info("training %s for %d epochs", cfg.model.name, cfg.epochs)
        log.warning("no checkpoint found in %s: starting from scratch", os.getcwd())
        if cfg.optim.lr > 0.01:
            raise ValueError(f"loss is nan at step 12: learning rate {cfg.optim.lr} is too high")

    main()


if __name__ == "__main__":
    globals()["run_" + CLI]()
