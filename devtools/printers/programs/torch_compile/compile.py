"""PyTorch 2's compiler stack failing on CPU: ``python compile.py SCENARIO`` (what torch.compile, dynamo, inductor,
torch.fx and DDP print).

- ``backend``: ``torch.compile`` with a backend of the user's own that raises: ``BackendCompilerFailed:
  backend='fuse' raised:``, the backend's exception on the next line, then dynamo's footer after a blank line
  (``Set TORCHDYNAMO_VERBOSE=1 ...``: torch/_dynamo/exc.py appends it to the message). With
  ``TORCHDYNAMO_VERBOSE=1`` (``backend_verbose``) the traceback keeps dynamo's frames and loses the footer.
- ``inductor_cxx``: the inductor backend with ``CXX`` naming no compiler: ``InductorError: InvalidCxxCompiler``.
- ``inductor_cpp``: the inductor backend with a compiler that fails on its kernel: ``InductorError:
  CppCompileError: C++ compile error``, ``Command:`` and the compile command, ``Output:`` and the compiler's
  diagnostics (torch/_inductor/exc.py ``CppCompileError``), then the footer.
- ``fx``: ``torch.fx.symbolic_trace`` of a branch on a tensor: ``TraceError``.
- ``export``: ``torch.export.export(strict=True)`` of the same branch: the partial graph as dynamo prints it
  (``class GraphModule(torch.nn.Module):``, twice: torch/export/_trace.py prints it in each wrapper it raises
  through), then dynamo's ``Unsupported``. ``export_nonstrict``: the default (non-strict) export: a warning of
  torch.fx's symbolic shapes, the partial graph as torch.fx prints it (``def forward(...)`` after blank lines),
  then ``GuardOnDataDependentSymNode`` with its hints and ``The following call raised this error:``.
- ``graph_breaks``: ``TORCH_LOGS=graph_breaks``: torch._logging's record of a graph break (the head on every
  line: torch/_logging/_internal.py ``TorchLogsFormatter``), then the program's own print.
- ``recompiles``: ``TORCH_LOGS=recompiles``: a record per recompilation with its guard failures.
- ``recompile_limit``: dynamo's warning ``torch._dynamo hit config.recompile_limit (2)`` over five lines.
- ``checkpoint``: ``torch.utils.checkpoint`` without ``use_reentrant``: its ``UserWarning`` and source line.

Under ``torchrun`` (``ddp_unused``): two processes with the gloo backend; a ``DistributedDataParallel`` model
with a parameter the forward never uses: the reducer's ``Expected to have finished reduction in the prior
iteration ...`` (torch/csrc/distributed/c10d/reducer.cpp) over several lines, on each rank behind ``[rankN]: ``
(``_distributed_excepthook`` writes a rank's traceback in one write: the ranks' tracebacks come one after the
other, whole; the rank torchrun stops first may print none).
"""

import os
import sys

import torch


def f(x):
    return torch.sin(x) * 2 + 1


def s_backend():
    def fuse(gm, example_inputs):
        raise RuntimeError(f"fused kernel for {len(gm.graph.nodes)} nodes is not implemented on cpu")

    torch.compile(f, backend=fuse)(torch.ones(8))


def s_inductor():
    torch.compile(f)(torch.ones(8))


def branch(x):
    if x.sum() > 0:  # a branch on a tensor's value
        return x + 1
    return x - 1


def s_fx():
    torch.fx.symbolic_trace(branch)


class Branch(torch.nn.Module):
    def forward(self, x):
        return branch(x)


def s_export():
    torch.export.export(Branch(), (torch.ones(3),), strict=True)


def s_export_nonstrict():
    torch.export.export(Branch(), (torch.ones(3),))


def s_graph_breaks():
    def step(x):
        print("step", x.shape)  # dynamo cannot trace print: a graph break
        return x * 2

    torch.compile(step, backend="eager")(torch.ones(3))


def s_recompiles():
    def scale(x, n):
        return x * n

    c = torch.compile(scale, backend="eager")
    for n in range(2):
        c(torch.ones(3), n)
    c(torch.ones(2, 2), 1)
    print("done.", flush=True)


def s_recompile_limit():
    torch._dynamo.config.recompile_limit = 2
    c = torch.compile(lambda x: x * 2, backend="eager")
    for k in range(1, 5):
        c(torch.ones(*[2] * k))  # each rank a new graph
    print("done.", flush=True)


def s_checkpoint():
    import torch.utils.checkpoint

    lin = torch.nn.Linear(3, 3)
    torch.utils.checkpoint.checkpoint(lin, torch.ones(2, 3, requires_grad=True)).sum().backward()
    print("done.", flush=True)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(4, 4)
        self.head = torch.nn.Linear(4, 2)  # never used in forward

    def forward(self, x):
        return self.body(x)


def s_ddp_unused():
    import torch.distributed as dist

    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(Net())
    for _ in range(2):  # the second forward finds the first backward's reduction unfinished, on every rank
        model(torch.ones(2, 4)).sum().backward()


SCENARIOS = {"backend": s_backend, "backend_verbose": s_backend, "inductor_cxx": s_inductor,
             "inductor_cpp": s_inductor, "fx": s_fx, "export": s_export,
             "export_nonstrict": s_export_nonstrict, "graph_breaks": s_graph_breaks,
             "recompiles": s_recompiles, "recompile_limit": s_recompile_limit, "checkpoint": s_checkpoint,
             "ddp_unused": s_ddp_unused}

if __name__ == "__main__":
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    SCENARIOS[sys.argv[1]]()
