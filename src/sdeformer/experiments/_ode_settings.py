"""The settings of the noise-free limit check (``experiments._ode``; THEORY section 3), declared once and
torch-free: ``sdeformer ode --help`` makes its options from ``SETTINGS`` without importing the experiment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..params import Param

if TYPE_CHECKING:
    from ..config import ModelConfig


@dataclass(frozen=True)
class OdeSettings:
    """The config's sizes and the depths (doubling from ``first``, ``depths`` of them), for 4 initial states."""

    tokens: int = 16
    dim: int = 4
    beta: float = 1.0
    horizon: float = 5.0
    first: int = 16
    depths: int = 6
    starts: int = 4

    @classmethod
    def quick(cls) -> OdeSettings:
        return cls(tokens=8, dim=3, first=32, depths=4)

    def config(self, layers: int, **changes: object) -> ModelConfig:
        from ..config import ModelConfig

        base = dict(tokens=self.tokens, dim=self.dim, beta=self.beta, horizon=self.horizon, mlp=False)
        return ModelConfig(**base, layers=layers, dtype="float64", **changes)  # type: ignore[arg-type]


SETTINGS = (
    Param("tokens", int, OdeSettings.tokens, low=2, doc="N tokens"),
    Param("dim", int, OdeSettings.dim, low=2, doc="d, token dimension"),
    Param("beta", float, OdeSettings.beta, low=1e-6, high=700.0, doc="Q^T K = beta I"),
    Param("horizon", float, OdeSettings.horizon, low=1e-6, doc="T"),
    Param("first", int, OdeSettings.first, low=2, doc="the smallest depth L0"),
    Param("depths", int, OdeSettings.depths, low=3, high=12, doc="depths L0, 2 L0, ... (the fit needs 3)"),
    Param("starts", int, OdeSettings.starts, low=1, doc="initial states"),
)
"""The experiment's declared settings (``sdeformer ode --NAME VALUE``); defaults: the report's size."""
