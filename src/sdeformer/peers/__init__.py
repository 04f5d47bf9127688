"""The field's public experiments as one call each (docs/peers.md): ``run(name, **options)`` runs a peer's
published experiment at its default settings with its conventions built in and returns one JSON-able dict
(the peer's statistic per cell); ``write(name, result, folder)`` writes it in the peer's own table layout;
``compare(name, result, path)`` reads the file the peer's script writes (safe formats only: ``peers._files``) and
counts the cells that agree; ``peers.NAME(**options)`` is ``run(NAME, **options)``. Running the peer's own script is
a repository tool, not part of the package (``tools/run_peer.py``: it runs third-party code).

One module per peer (``litm``, ``dotm``, ``bruno``, ``simuformer``, ``glpr``); each has ``run``, ``write`` and
``compare``. No library module imports this package (the root reaches it lazily as ``sdeformer.peers``); it
imports the library.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_exports
from ..core._errors import ConfigError

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._phase import FixedStep, StackedHeads, median_clusters, pair_fraction, run_segments, span_dimension
    from ._published_radius import PublishedRadius

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)


NAMES = ("litm", "dotm", "bruno", "simuformer", "glpr")


def module(name: str) -> ModuleType:
    """The preset module of peer ``name``; ConfigError naming ``peer`` for an unknown one."""
    if name not in NAMES:
        raise ConfigError("peer", name, f"one of {list(NAMES)}")
    return importlib.import_module(f"{__name__}._{name}")


def run(name: str, **options: Any) -> dict:
    """The peer's experiment (its options as keywords; None: the peer's default), on one torch thread as the peers'
    scripts run and as docs/peers.md times them: their tensors are small, and a second thread only adds a barrier
    per operation (6.9 ms a softmax of 5 x 5 against 1.4 us, when the other core is busy)."""
    from ..core._threads import torch_threads

    with torch_threads(1):
        return module(name).run(**{k: v for k, v in options.items() if v is not None})


def litm(**options: Any) -> dict:
    """lost-in-the-middle's t_crit curve or (``part="particles"``) its particle run: ``run("litm", ...)``."""
    return run("litm", **options)


def dotm(**options: Any) -> dict:
    """dotm's ``staircase.py`` or (``part="kinetic"``) ``kinetic.py``: ``run("dotm", ...)``."""
    return run("dotm", **options)


def bruno(**options: Any) -> dict:
    """Bruno et al.'s mode growth rates or (``part="pde"``) their notebook's PDE: ``run("bruno", ...)``."""
    return run("bruno", **options)


def simuformer(**options: Any) -> dict:
    """simuformer's ``runner.py`` sweep: ``run("simuformer", ...)``."""
    return run("simuformer", **options)


def glpr(**options: Any) -> dict:
    """GLPR's ``phase-diagrams.py`` sweep: ``run("glpr", ...)``."""
    return run("glpr", **options)


def write(name: str, result: dict, folder: Path) -> list[Path]:
    """The peer's output files, in its layout, under ``folder`` (created)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return module(name).write(result, Path(folder))


def compare(name: str, result: dict, path: Path) -> dict:
    """Cells equal / total and the largest difference against the file the peer's script wrote at ``path`` (a
    regular file: a FIFO or a device is refused before it is opened)."""
    from ._files import check_regular

    check_regular(Path(path))
    return module(name).compare(result, Path(path))


def printable(result: dict) -> dict:
    """``result`` without its arrays (bruno's published tables ``U``: written by ``write``, too large to print)."""
    return _without_arrays(result)


def _without_arrays(value: Any) -> Any:
    import numpy as np

    if isinstance(value, dict):
        return {k: _without_arrays(v) for k, v in value.items() if not isinstance(v, np.ndarray)}
    if isinstance(value, list):
        return [_without_arrays(v) for v in value]
    return value


def cells(ours, theirs, tol: float) -> dict:
    """{"equal", "total", "max_diff"} of two equal-length sequences of numbers: a cell is equal when both are the
    same number (an infinity of the same sign included), both NaN, or within ``tol``; ``max_diff`` is the largest
    |ours - theirs|, infinite where a NaN or an infinity meets anything else."""
    import numpy as np

    a, b = np.asarray(ours, float), np.asarray(theirs, float)
    if a.ndim >= 2 and b.ndim >= 2 and a.shape != b.shape:  # a transposed table is not compared cell by cell
        raise ConfigError("compare", f"a {b.shape} table", f"the peer's table is {b.shape}, ours {a.shape}")
    a, b = a.ravel(), b.ravel()
    if a.shape != b.shape:
        raise ConfigError("compare", f"{b.size} cells", f"the peer's table has {b.size} cells, ours {a.size}")
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)  # NaN where either is NaN or both are the same infinity
        ok = (a == b) | (np.isnan(a) & np.isnan(b)) | (diff <= tol)
    gap = np.where(np.isnan(diff), np.where(ok, 0.0, np.inf), diff)
    return {"equal": int(ok.sum()), "total": int(a.size), "max_diff": float(gap.max()) if a.size else 0.0}
