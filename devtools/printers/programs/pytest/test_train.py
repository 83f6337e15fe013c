"""A training project's tests that fail the ways tests fail, for pytest's own report (``_pytest/terminal.py``):
an assertion with pytest's comparison detail, a dict comparison, an exception two frames deep, an error in a
fixture (``ERROR at setup of``), a test that prints and logs before it fails (its ``Captured stdout call`` and
``Captured log call`` sections), a passing test that prints (its section under ``-rA``'s ``PASSES``), a warning
(the ``warnings summary``)."""

import logging
import warnings

import pytest

log = logging.getLogger("trainer")


def loss_at(step):
    return 2.5 / (step + 1)


def test_loss_decreases():
    print(f"loss at step 10: {loss_at(10):.4f}")
    assert loss_at(10) < loss_at(1)


def test_loss_value():
    print("computing the loss at step 10")
    log.error("loss diverged at step %d", 10)
    assert loss_at(10) == pytest.approx(0.2, abs=1e-3)


def test_config_keys():
    cfg = {"lr": 3e-4, "warmup": 100, "batch_size": 8}
    assert cfg == {"lr": 3e-4, "warmup": 200, "batch_size": 8, "epochs": 3}


def test_shard_loader():
    def load(i):
        raise FileNotFoundError(f"/data/shard-{i:05d}.arrow")
    load(17)


@pytest.fixture
def device():
    raise RuntimeError("CUDA device 0 not available")


def test_on_device(device):
    pass


def test_deprecated_api():
    warnings.warn("step() without closure is deprecated", DeprecationWarning)
