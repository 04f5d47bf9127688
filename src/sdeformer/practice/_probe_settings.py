"""The probe's settings (``ProbeNoise``), declared once and torch-free: the options of ``sdeformer probe``
(its ``--help`` imports no torch)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..params import setting


@dataclass(frozen=True)
class ProbeNoise:
    """The probe's noise and measurement settings (``probe``'s keyword arguments): ``samples`` noise draws, the
    step ``dt``, the field's activation, width and bias stds (sU = sW = ``bias_std`` unless ``su`` / ``sw`` are
    given), beta of E_beta, the cluster ``threshold`` and the ``seed``; those declared with ``setting`` are the
    options of ``sdeformer probe``."""

    samples: int = setting(8, "noise draws averaged per scale")
    dt: float = setting(1.0, "dt of each block's noise (horizon T = 6 dt)")
    activation: str = setting("gelu", "activation of the noise MLP")
    width: int = setting(1536, "width m of the noise MLP")
    bias_std: float = setting(0.1, "sU = sW of the noise MLP (0: GELU field with lambda_bar > 0 at d=384)")
    su: float | None = setting(None, "hidden bias std sU alone [--bias-std]")
    sw: float | None = setting(None, "output bias std sW alone [--bias-std]")
    beta: float = 1.0
    threshold: float = setting(None, "cosine above which tokens join one cluster [observables.PROBE_CLUSTER_COS]")
    seed: int = setting(0, "noise seed")

    def __post_init__(self) -> None:
        if self.threshold is None:  # the library's cluster cosine, read when a probe is configured (it imports torch)
            from ..observables import PROBE_CLUSTER_COS

            object.__setattr__(self, "threshold", PROBE_CLUSTER_COS)

    def record(self, text: str, scales: Sequence[float]) -> dict:
        """The settings that determine a probe record, sU and sW resolved from ``bias_std``."""
        return {
            "text": text,
            "scales": [float(s) for s in scales],
            "samples": int(self.samples),
            "dt": float(self.dt),
            "activation": self.activation,
            "width": int(self.width),
            "su": float(self.bias_std if self.su is None else self.su),
            "sw": float(self.bias_std if self.sw is None else self.sw),
            "beta": float(self.beta),
            "threshold": float(self.threshold),
            "seed": int(self.seed),
        }
