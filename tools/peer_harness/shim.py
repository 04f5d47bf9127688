"""The shim a peer's unchanged script runs under (``peer_harness/process.py``): ``python shim.py SPEC.json``, in the
folder the script writes into. It imports nothing of sdeformer (the peer's process sees only its own imports, torch
and matplotlib), sets up what the script needs to run reproducibly on this machine, then runs it as ``python
SCRIPT ARGS`` would (``__main__``, its folder first on ``sys.path``, ``sys.argv``).

SPEC, a JSON object (every key but ``script`` optional):

- ``script``: the ``.py`` file to run, or an ``.ipynb`` notebook whose chosen code cells are run in order, in one
  namespace (plain Python: no IPython magics); ``argv``: its arguments;
- ``seed``: torch's default generator seeded with it before the script runs (the scripts that never seed torch);
- ``cuda_to_cpu``: when CUDA is unavailable, the device 'cuda' (a string, ``torch.device`` or index) given as
  ``device=`` to any torch function, to ``Tensor.to``, or as ``Tensor.cuda()``, becomes the CPU (``CudaToCpu``);
- ``stubs``: modules the script imports but whose computation does not use them, made empty when not installed;
- ``set``: {name: value}, module-level names of the script replaced right after the script first assigns them
  (a size it has no option for), by a trace on its module frame only, removed once all are set;
- ``stop_at``: the script run up to (not including) its first line equal to this (the part that computes);
- ``cells`` (notebooks): one regular expression per cell to run, each matched in the code cells after the
  previous match; ``calls``: {name: {keyword: value}}, the notebook's callable ``name`` called with these
  keywords replaced (applied between cells, from the cell after the one defining it);
- ``save``: {name: file}: after the run, the script's variable saved by ``numpy.save`` (a tensor as numpy).

Figures are never drawn: matplotlib's ``savefig`` and ``show`` do nothing (no figure is compared, and the peers'
TeX labels need a LaTeX installation).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import types
from typing import Any


def cuda_to_cpu():
    """A ``TorchFunctionMode`` that runs the script's CUDA placements on the CPU (see the module docstring)."""
    import torch
    from torch.overrides import TorchFunctionMode

    def _is_cuda(device: Any) -> bool:
        """A CUDA device as torch takes one: 'cuda', 'cuda:1', ``torch.device('cuda')``, or an index."""
        if isinstance(device, str):
            return device.split(":")[0] == "cuda"
        if isinstance(device, torch.device):
            return device.type == "cuda"
        return isinstance(device, int) and not isinstance(device, bool)

    class CudaToCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:  # x.cuda(): a CPU tensor stays where it is, as x.to('cpu') leaves it
                return args[0].cpu()
            if _is_cuda(kwargs.get("device", "cpu")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to:
                args = tuple("cpu" if _is_cuda(a) else a for a in args)
            return func(*args, **kwargs)

    return CudaToCpu()


def _no_figures() -> None:
    os.environ["MPLBACKEND"] = "Agg"
    if importlib.util.find_spec("matplotlib") is None:
        return
    import matplotlib.figure
    import matplotlib.pyplot as plt

    def nothing(*args, **kwargs) -> None:
        return None

    matplotlib.figure.Figure.savefig = nothing  # type: ignore[method-assign]
    plt.savefig = plt.show = nothing


def _set_after_assignment(code: types.CodeType, values: dict) -> dict:
    """Trace the frame running ``code`` (the script's module) and replace each name of ``values`` at the first
    line after it is in the module's namespace; the trace is removed once all are replaced. Returns the names
    still pending (empty once the script has assigned them all)."""
    pending = dict(values)

    def local(frame, event, arg):
        for name in [n for n in pending if n in frame.f_globals]:
            frame.f_globals[name] = pending.pop(name)
        if not pending:
            sys.settrace(None)
            return None
        return local

    sys.settrace(lambda frame, event, arg: local if frame.f_code is code else None)
    return pending


def _script_code(path: str, spec: dict) -> types.CodeType:
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    if spec.get("stop_at"):
        lines = source.splitlines(keepends=True)
        cut = [i for i, line in enumerate(lines) if line.strip() == spec["stop_at"]]
        if not cut:
            raise SystemExit(f"shim: {os.path.basename(path)} has no line {spec['stop_at']!r}")
        source = "".join(lines[: cut[0]])
    return compile(source, path, "exec")


def _cells(path: str, patterns: list[str]) -> list[tuple[int, str]]:
    """(index, source) of the chosen code cells of the notebook at ``path``."""
    with open(path, encoding="utf-8") as fh:
        cells = [c for c in json.load(fh)["cells"] if c.get("cell_type") == "code"]
    chosen, start = [], 0
    for pattern in patterns:
        found = [i for i in range(start, len(cells)) if re.search(pattern, "".join(cells[i]["source"]))]
        if not found:
            raise SystemExit(f"shim: no code cell of {os.path.basename(path)} matches {pattern!r}")
        chosen.append((found[0], "".join(cells[found[0]]["source"])))
        start = found[0] + 1
    return chosen


def _with_keywords(call, values: dict):
    def replaced(*args, **kwargs):
        return call(*args, **{**kwargs, **values})

    replaced.replaces = call  # type: ignore[attr-defined]
    return replaced


def _run(spec: dict, module: types.ModuleType) -> None:
    path, namespace = spec["script"], module.__dict__
    if not path.endswith(".ipynb"):
        code = _script_code(path, spec)
        pending = _set_after_assignment(code, spec["set"]) if spec.get("set") else {}
        exec(code, namespace)
        sys.settrace(None)
        if pending:
            raise SystemExit(f"shim: {os.path.basename(path)} never assigned {sorted(pending)}")
        return
    calls = spec.get("calls", {})
    for index, source in _cells(path, spec.get("cells", [])):
        for name, values in calls.items():
            if name in namespace and not hasattr(namespace[name], "replaces"):
                namespace[name] = _with_keywords(namespace[name], values)
        exec(compile(source, f"{path}[cell {index}]", "exec"), namespace)


def _save(spec: dict, namespace: dict) -> None:
    import numpy as np

    for name, file in spec.get("save", {}).items():
        if name not in namespace:
            raise SystemExit(f"shim: the script left no variable {name!r} to save")
        value = namespace[name]
        np.save(file, value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value))


def main(spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    path = os.path.abspath(spec["script"])
    spec["script"] = path
    for name in spec.get("stubs", []):
        if importlib.util.find_spec(name) is None:
            sys.modules[name] = types.ModuleType(name)
    _no_figures()
    module = types.ModuleType("__main__")  # the script's module, as runpy makes it (its pickles name __main__)
    module.__file__ = path
    sys.modules["__main__"], sys.argv, sys.path[0] = module, [path, *spec.get("argv", [])], os.path.dirname(path)
    mode = None
    if spec.get("seed") is not None or spec.get("cuda_to_cpu"):
        import torch

        if spec.get("seed") is not None:
            torch.manual_seed(int(spec["seed"]))
        if spec.get("cuda_to_cpu") and not torch.cuda.is_available():
            mode = cuda_to_cpu()
    if mode is None:
        _run(spec, module)
    else:
        with mode:
            _run(spec, module)
    _save(spec, module.__dict__)


if __name__ == "__main__":
    main(sys.argv[1])
