"""The files ``--compare`` reads, in safe formats only (docs/peers.md, "What --compare reads"): NumPy ``.npy`` /
``.npz`` without pickles (``allow_pickle=False``), text tables, JSON, and the peers' result pickles through an
unpickler that rebuilds numbers, strings, plain containers, NumPy arrays and torch tensors and nothing else: any other
class or function a pickle names (``os.system``, ``builtins.eval``, ...) is refused in one line before it is called,
so a planted pickle runs no code. A damaged or truncated file is one line naming ``compare`` too.
"""

from __future__ import annotations

import importlib
import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from ..core._errors import ConfigError

NUMPY = ("_reconstruct", "scalar")  # numpy's array and scalar rebuilders, by either module name


def _tensor_storage(data: bytes):
    """A tensor's storage, as ``torch.storage._load_from_bytes`` reads it, but through torch's own restricted
    loader (``weights_only=True``) instead of a full unpickler."""
    import torch

    return torch.load(io.BytesIO(data), weights_only=True)


def _allowed() -> dict[tuple[str, str], Any]:
    """(module, name) -> the object a pickle may name: array and tensor rebuilders, containers, argparse's record."""
    import argparse
    import collections

    import torch

    multiarray = np.ndarray.__reduce__(np.zeros(0))[0].__module__  # numpy._core (2.x) or numpy.core (1.x)
    rebuild = importlib.import_module(multiarray)
    arrays = {(m, n): getattr(rebuild, n) for m in ("numpy.core.multiarray", "numpy._core.multiarray") for n in NUMPY}
    return {
        **arrays,
        ("numpy", "ndarray"): np.ndarray,
        ("numpy", "dtype"): np.dtype,
        ("torch._utils", "_rebuild_tensor_v2"): torch._utils._rebuild_tensor_v2,  # pyright: ignore[reportAttributeAccessIssue]
        ("torch.storage", "_load_from_bytes"): _tensor_storage,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("argparse", "Namespace"): argparse.Namespace,
    }


class ArrayUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose ``find_class`` knows the objects of ``_allowed`` only."""

    def find_class(self, module: str, name: str) -> Any:
        found = _allowed().get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"it names {module}.{name}, not an array, tensor or plain container")
        return found


def load_pickle(path: Path, what: str) -> Any:
    """The pickle at ``path`` through ``ArrayUnpickler``; ConfigError naming ``compare`` (``what``: the file the
    peer's script writes) for any other class, or a damaged file."""
    try:
        with open(path, "rb") as fh:
            return ArrayUnpickler(fh).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, RuntimeError) as exc:
        raise ConfigError("compare", str(path), f"{what}, read safely: refused ({exc})") from None


def load_array(path: Path, what: str, **kwargs) -> Any:
    """``np.load(path, allow_pickle=False)``; ConfigError naming ``compare`` for a pickled or damaged file."""
    try:
        return np.load(path, allow_pickle=False, **kwargs)
    except (OSError, ValueError, EOFError) as exc:
        raise ConfigError("compare", str(path), f"{what} ({exc})") from None


def check_shape(path: Path, theirs: Any, ours: Any) -> None:
    """ConfigError naming ``compare`` when the peer's table has another shape than ours (a transposed table, or
    one of other settings): never compared cell by cell."""
    mine, found = tuple(np.shape(ours)), tuple(getattr(theirs, "shape", np.shape(theirs)))
    if mine != found:
        raise ConfigError("compare", str(path), f"a table of shape {mine} (betas x checkpoints); this one is {found}")


COMPARE_MAX_BYTES = 4 * 2**30  # the largest file a peer's script writes: bruno's notebook U, 3.2 GB at its size


def check_regular(path: Path) -> None:
    """ConfigError naming ``compare`` unless ``path`` is a regular file of at most ``COMPARE_MAX_BYTES``: a FIFO
    would block its read, a device (``/dev/zero``) never end (checked by ``stat``, before it is opened)."""
    import stat

    try:
        info = Path(path).stat()
    except OSError as exc:
        raise ConfigError("compare", str(path), f"cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError("compare", str(path), "not a regular file (a folder, a FIFO or a device)")
    if info.st_size > COMPARE_MAX_BYTES:
        raise ConfigError("compare", str(path), f"larger than {COMPARE_MAX_BYTES // 2**30} GiB: no peer writes one")
