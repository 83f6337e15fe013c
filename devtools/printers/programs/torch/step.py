"""A tiny PyTorch training step whose failures PyTorch itself prints: ``python step.py SCENARIO`` (CPU).

Each scenario writes one uncaught error (or one warning, then the error) to stderr:

- ``shape``: ``torch.mm`` of mismatched shapes: ``RuntimeError: mat1 and mat2 shapes cannot be multiplied``,
  with ``TORCH_SHOW_CPP_STACKTRACES=1`` c10's ``Exception raised from ... (most recent call first):`` and its
  ``frame #N:`` lines inside the message (c10/util/Exception.cpp ``Error::compute_what``).
- ``index``: an embedding lookup past its table: ``IndexError: index out of range in self``.
- ``view``: ``Tensor.view`` of a non-contiguous tensor (a message of several sentences).
- ``anomaly``: ``torch.autograd.detect_anomaly()``: its own ``UserWarning`` (``Anomaly Detection has been
  enabled``), then the engine's warning ``Error detected in LogBackward0. Traceback of forward call that
  caused the error:`` with the forward's frames (torch/csrc/autograd/python_anomaly_mode.cpp, through
  ``warnings``: ``file:line: UserWarning: message`` and the source line), then the backward's error.
- ``dataloader``: a ``Dataset.__getitem__`` that raises in a worker process: ``ValueError: Caught ValueError in
  DataLoader worker process 0.`` and ``Original Traceback (most recent call last):`` with the worker's frames
  (torch/_utils.py ``ExceptionWrapper.reraise``).
- ``compile``: ``torch.compile(fullgraph=True)`` of a function dynamo cannot trace (a data-dependent branch):
  ``torch._dynamo.exc.UserError`` / ``Unsupported`` with its explanation, hints, ``from user code:`` and the
  ``Set TORCHDYNAMO_VERBOSE=1`` hint.
- ``load``: ``torch.load`` of a pickle holding an object of the program's own class under the default
  ``weights_only=True``: ``_pickle.UnpicklingError: Weights only load failed ...`` over many lines.
- ``warn``: PyTorch's ``UserWarning``s (a tensor copy-constructed from a tensor, ``softmax`` without ``dim``),
  then a clean exit: warnings only.

Under ``torchrun`` (``dist_raise``, ``dist_timeout``): two processes with the gloo backend on CPU;
``init_process_group`` installs an excepthook that writes ``[rankN]: `` before every line of a rank's
traceback (torch/distributed/distributed_c10d.py ``_distributed_excepthook``).

- ``dist_raise``: rank 1 raises after a collective; rank 0 waits in a barrier until torchrun stops it.
- ``dist_timeout``: rank 0 waits in an ``all_reduce`` that rank 1 never joins (a 3 s timeout): gloo's
  timeout error.
- ``store``: rank 1 of 2 whose rank 0 never starts its TCPStore (no torchrun): c10's warnings of the
  client's failed connects (``[W<mmdd> hh:mm:ss.ns socket.cpp:N] [c10d] The client socket has failed to
  connect to ...``), then ``torch.distributed.DistNetworkError`` / ``DistStoreError``.
- ``dist_record``: ``dist_raise`` with ``@record``: the rank's traceback goes into the error file, and
  torchrun's ``ChildFailedError`` report shows it under ``traceback :``.
"""

import os
import sys
import time
import warnings

import torch


def s_shape():
    a = torch.randn(2, 3)
    b = torch.randn(4, 5)
    torch.mm(a, b)


def s_index():
    emb = torch.nn.Embedding(10, 4)
    emb(torch.tensor([[1, 2, 12]]))


def s_view():
    x = torch.randn(4, 6).t()
    x.view(24)


def s_anomaly():
    with torch.autograd.detect_anomaly():
        w = torch.zeros(3, requires_grad=True)
        loss = (torch.sqrt(w) * 0).sum()  # sqrt's gradient at 0 is inf: 0 * inf is nan
        loss.backward()


class Shards(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"shard {i} is corrupt: expected 4096 records, got 0")
        return torch.ones(2) * i


def s_dataloader():
    loader = torch.utils.data.DataLoader(Shards(), batch_size=2, num_workers=1)
    for batch in loader:
        print(f"batch {batch.tolist()}", flush=True)


def s_compile():
    def f(x):
        if x.sum() > 0:  # a branch on a tensor's value
            return x + 1
        return x - 1

    torch.compile(f, backend="eager", fullgraph=True)(torch.ones(3))


class Checkpoint:
    def __init__(self):
        self.step = 1200


def s_load():
    path = "ckpt.pt"
    torch.save({"state": Checkpoint()}, path)
    torch.load(path)


def s_warn():
    x = torch.ones(3)
    torch.tensor(x)
    torch.nn.functional.softmax(torch.ones(2, 3))
    print("done.", flush=True)


def _dist():
    import torch.distributed as dist

    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(seconds=3))
    return dist


def s_dist_raise():
    dist = _dist()
    t = torch.ones(2) * dist.get_rank()
    dist.all_reduce(t)
    if dist.get_rank() == 1:
        raise ValueError(f"rank 1: loss is nan at step 12 (sum {t.tolist()})")
    time.sleep(60)  # torchrun stops this rank when the other fails


def s_dist_timeout():
    dist = _dist()
    if dist.get_rank() == 1:
        time.sleep(60)  # never joins; torchrun stops it when rank 0 fails
    t = torch.ones(2)
    dist.all_reduce(t)


def s_store():
    import torch.distributed as dist

    # rank 1 of 2 with no rank 0 listening: the TCPStore client's connect retries, then its timeout
    os.environ.update(RANK="1", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="29431")
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(seconds=4))


def s_dist_record():
    from torch.distributed.elastic.multiprocessing.errors import record

    record(s_dist_raise)()


if __name__ == "__main__":
    warnings.simplefilter("default")
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    globals()["s_" + sys.argv[1]]()
