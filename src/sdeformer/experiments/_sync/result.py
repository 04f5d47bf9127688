"""The result of the synchronization check (THEORY section 5): its settings (``SyncSettings``), the kernel
constants, eps, the ensembles' E E_beta(t) with 95% bands against the bound, the measured rates beside the
bound's rate, the power record and the verdicts."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...io._formats import to_jsonable
from .._results import Result
from .settings import SyncSettings

# a setting's verdict: the first of its models' in this order; "not resolved": the bound held, but it held for
# the power record's wrong model too (the check could not have seen that error)
VERDICTS = ("not applicable", "fails", "below resolution", "not resolved", "holds")


@dataclass(frozen=True)
class SyncPower:
    """The power record of a sync check: the SDE ensemble with the noise covariance cut by ``factor``, judged
    against the same bound; ``caught`` when its verdict is "fails"."""

    perturbation: str
    factor: float
    energy_mean: np.ndarray  # (S,)
    measured_rate: float
    verdict: str

    @property
    def caught(self) -> bool:
        return self.verdict == "fails"

    def to_json(self) -> dict[str, Any]:
        return {**{k: to_jsonable(v) for k, v in asdict(self).items()}, "caught": self.caught}


@dataclass(frozen=True)
class SyncResult(Result):
    """The check of one setting: the kernel constants, eps and how it was obtained, E E_beta(t) mean and 95%
    half-width ``(S,)`` per model ('sde', 'discrete'), the bound ``(S,)`` at times ``t`` ``(S,)``, the resolution
    floor, the measured rates (beside the bound's ``predicted_rate``), the power record (None where the theorem
    does not apply) and the verdicts (VERDICTS; ``bound_holds`` is None unless "holds" or "fails");
    ``not_applicable``: why the theorem does not apply, ``{part or condition: reason}`` (``architecture``), empty
    where it does."""

    settings: SyncSettings
    lambda_bar: float
    lambda_bar_prime: float
    lambda1: float
    odd_field: bool
    theorem_applies: bool
    not_applicable: dict[str, str]
    eps: float
    eps_method: str
    floor: float
    predicted_rate: float
    t: np.ndarray
    energy_mean: dict[str, np.ndarray]
    energy_ci: dict[str, np.ndarray]
    bound: np.ndarray
    measured_rate: dict[str, float]
    final_energy: dict[str, float]
    power: SyncPower | None
    verdict: str
    verdict_by: dict[str, str]
    bound_holds: bool | None
    wall_s: float
    measured_rate_se: dict[str, float] = field(default_factory=dict)  # jackknife over groups of runs

    def to_json(self) -> dict[str, Any]:
        """The settings' fields at the top level (``width`` "inf" for the infinite-width model), then the rest."""
        out = super().to_json()
        settings = {**asdict(self.settings), "width": "inf" if self.settings.width is None else self.settings.width}
        return {**settings, **{k: v for k, v in out.items() if k != "settings"}, "label": self.label}

    @property
    def label(self) -> str:
        return self.settings.label

    @property
    def power_text(self) -> str:
        """'would have caught: ...', 'NOT caught: ...' or 'no power record (not applicable)'."""
        if self.power is None:
            return "no power record (not applicable)"
        said = "would have caught" if self.power.caught else "NOT caught"
        return f"{said}: {self.power.perturbation} (rate {self.power.measured_rate:.3g}, {self.power.verdict})"

    @property
    def reasons_text(self) -> str:
        """' (norm: why; mask: why)' where the theorem does not apply, '' where it does."""
        if not self.not_applicable:
            return ""
        return " (" + "; ".join(f"{k}: {v}" for k, v in self.not_applicable.items()) + ")"

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"{self.label}: lambda_bar {self.lambda_bar:.4f}, bound rate eps+lambda_bar' = "
            f"{self.predicted_rate:.4f} beside the measured rate SDE {self.measured_rate['sde']:.4f} / discrete "
            f"{self.measured_rate['discrete']:.4f}, E E_beta(T) SDE {self.final_energy['sde']:.3g} / discrete "
            f"{self.final_energy['discrete']:.3g}, eps {self.eps:g} ({self.eps_method.split(':')[0]}), floor "
            f"{self.floor:.2g}, verdict: {self.verdict}{self.reasons_text}; power: {self.power_text}; "
            f"{self.wall_s:.1f} s"
        )
