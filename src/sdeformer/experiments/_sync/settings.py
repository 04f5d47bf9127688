"""The settings of the synchronization check (THEORY section 5), written once: one frozen dataclass used by
``check.sync_check``, the ``sync-check`` command, the result (``SyncResult.settings``) and the report.

Each setting is declared with its one-line doc (``params.setting``: the ``sync-check`` command's options;
``HELP`` lists them; the architecture parts ``norm``, ``alibi``, ``mask``, ``causal``, ``cross`` take
``simulate``'s, ``experiments._commands.options.fields``); ``SyncSettings.check()`` is
the cheap input check a command runs before it claims its folder. The parts (BEYOND sections 6-9) are those of
``architecture``: the check's models run with them, and its verdict is "not applicable" where they break the
theorem's assumptions. No torch at import (the command line's ``--help``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from ...core._errors import ConfigError
from ...params import params_of, setting
from .architecture import DEFAULTS as PARTS, given, model_config

if TYPE_CHECKING:
    import torch

    from ...config import ModelConfig
    from ...core._kernel import KernelTheory

CHUNK = 32  # runs per chunk (one job per chunk and model)
KERNEL_COPIES = 16  # N x N float64 arrays per run of the infinite-width field at its peak (``memory_estimate``)
POWER_FACTOR = 4.0  # the power record: the same check on the SDE with the noise covariance cut this many times
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class SyncSettings:
    """Every setting of one synchronization check, each declared with its doc (``setting``: the ``sync-check``
    command's options; the architecture parts take ``simulate``'s)."""

    activation: str = setting("relu", "MLP activation")
    dim: int = setting(64, "token dimension d")
    bias_std: float = setting(0.1, "sU = sW")
    beta: float = setting(1.0, "inverse temperature (Q^T K = beta I, and E_beta)")
    attention_scale: float = setting(1.0, "s in V = s I (+1 attractive, 0 off, -1 repulsive)")
    runs: int = setting(64, "ensemble size R")
    tokens: int = setting(64, "N tokens")
    steps: int = setting(2000, "time steps (= layers of the discrete model)")
    horizon: float = setting(10.0, "T")
    width: int | None = setting(None, "MLP width of the discrete model (default: infinite)")
    seed: int = setting(0, "root seed")
    dtype: str = setting("float32", "float32 or float64 (sets the resolution floor)")
    chunk: int = setting(CHUNK, "runs per job (does not change the numbers)")
    power_factor: float = setting(
        POWER_FACTOR, "the power record's wrong model: the noise covariance cut this many times"
    )
    norm: str = PARTS["norm"]  # the architecture parts (BEYOND sections 6-9), as in config.ModelConfig
    alibi: float = PARTS["alibi"]
    mask: str = PARTS["mask"]
    causal: bool = PARTS["causal"]
    cross: int = PARTS["cross"]

    def __post_init__(self) -> None:
        if not isinstance(self.dtype, str):  # a torch dtype is accepted for its name
            object.__setattr__(self, "dtype", str(self.dtype).removeprefix("torch."))

    @classmethod
    def of(cls, values: dict[str, Any]) -> SyncSettings:
        """The settings among ``values`` (e.g. a command's options): the keys that name a field, not None."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names and v is not None})

    def check(self) -> SyncSettings:
        """The input checks (cheap: before a command claims its folder); the settings with their numbers as int /
        float. Raises ConfigError naming the parameter."""
        from ...core._validate import fits_in_memory, positive_float, positive_int, seed as check_seed

        for name in ("runs", "tokens", "steps", "chunk"):
            positive_int(name, getattr(self, name))
        positive_float("horizon", self.horizon)
        positive_float("power_factor", self.power_factor)
        if self.width is not None:
            positive_int("width", self.width)
        if int(self.runs) < 2:
            raise ConfigError("runs", self.runs, "need at least 2 runs for a confidence band")
        if int(self.tokens) < 2:
            raise ConfigError("tokens", self.tokens, "need at least 2 tokens (E_beta of one token is 0: no rate)")
        if not math.isfinite(self.attention_scale):
            raise ConfigError("attention_scale", self.attention_scale, "must be finite")
        if self.dtype not in DTYPES:
            raise ConfigError("dtype", self.dtype, " or ".join(DTYPES))
        check_seed("seed", self.seed)
        self.theory()
        cfg = self.model()  # the parts, checked as simulate checks them
        ints = {k: int(getattr(self, k)) for k in ("runs", "tokens", "steps", "chunk")}
        sizes = (ints["runs"], ints["tokens"], self.dim)
        fits_in_memory("runs/tokens/dim", sizes, memory_estimate(cfg, ints, self.width))
        return SyncSettings(**{**asdict(self), **ints, "horizon": float(self.horizon), "alibi": cfg.alibi})

    def parts(self) -> dict[str, Any]:
        """The architecture parts set off their defaults (``architecture.given``)."""
        return given(asdict(self))

    def model(self) -> ModelConfig:
        """The model of the check as a ``config.ModelConfig`` (its parts and the attention that reads them; the
        noise is the check's own). Raises ConfigError naming a bad part."""
        sizes = dict(tokens=self.tokens, dim=self.dim, layers=self.steps, horizon=self.horizon, seed=self.seed)
        sizes |= dict(activation=self.activation, su=self.bias_std, sw=self.bias_std, dtype=self.dtype)
        return model_config(self.parts(), beta=self.beta, attention_scale=self.attention_scale, **sizes)

    def theory(self) -> KernelTheory:
        """The kernel constants of the setting (THEORY section 2)."""
        from ...core._kernel import kernel_theory

        return kernel_theory(self.activation, self.dim, bias_std=self.bias_std, beta=self.beta)

    @property
    def torch_dtype(self) -> torch.dtype:
        import torch

        return getattr(torch, self.dtype)

    @property
    def label(self) -> str:
        """Short setting label, e.g. 'relu d=64 sigma=0.1 s=+1' (then the parts set, e.g. 'norm=pre')."""
        parts = "".join(f" {k}={v}" for k, v in self.parts().items())
        return f"{self.activation} d={self.dim} sigma={self.bias_std:g} s={self.attention_scale:+g}{parts}"

    def numbers(self) -> dict[str, Any]:
        """The settings the energies depend on (not the chunk size; the parts only where set, so a default run's
        key is the one it had before the parts existed), for a folder's or a cache's key."""
        out = {k: v for k, v in asdict(self).items() if k != "chunk" and k not in PARTS}
        return out | self.parts()


HELP = {p.name: p.doc for p in params_of(SyncSettings)}  # the declared settings' docs, by name


def memory_estimate(cfg: ModelConfig, sizes: dict[str, int], width: int | None = None) -> int:
    """Bytes of the check at its peak, before anything is allocated: the starts of every run (R, N, d), and per
    run of one chunk at once a step's tensors (the MLP's draws (m, d) and hidden layer (N, m) at finite width, the
    attention (N, N), a few (N, d)) and ``KERNEL_COPIES`` N x N float64 arrays of the infinite-width field (its
    kernel, factor and their temporaries: 1.46 GB measured for 4 runs of N = 2000, 2.3 GB estimated)."""
    n, d, m = sizes["tokens"], cfg.dim, width or 0
    item = 8 if cfg.dtype == "float64" else 4
    per_run = item * (3 * m * d + 4 * n * m + 4 * n * n + 8 * n * d) + KERNEL_COPIES * 8 * n * n
    return item * sizes["runs"] * n * d + min(sizes["runs"], sizes["chunk"]) * per_run
