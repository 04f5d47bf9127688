"""The synchronization theorem's verdict per cell of the phase diagram, and its agreement with the measured P(sync)
(THEORY sections 2 and 5; the rule is ``architecture``'s, the diagram ``experiments._phase``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...core._kernel import kernel_theory
from .architecture import NOT_APPLICABLE, cell_verdict, kernel_reasons
from .eps import certified_eps

if TYPE_CHECKING:
    from .._phase import PhaseResult


def cell_grid(
    activations: Sequence[str],
    dims: Sequence[int],
    bias_stds: Sequence[float],
    scales: Sequence[float],
    beta: float,
    parts: Mapping[str, str],
) -> tuple[np.ndarray, np.ndarray]:
    """(the verdict of every cell ``(A, D, B, S)``, ``architecture.CELL_VERDICTS``; lambda_bar ``(A, D, B)``) of the
    grid, for the architecture ``parts``' reasons (``architecture.part_reasons``; empty for the paper's model) and
    the kernel conditions of each cell with the certified eps of V = s I."""
    theories = [[[kernel_theory(a, d, bias_std=b, beta=beta) for b in bias_stds] for d in dims] for a in activations]
    lam = np.array([[[k.lambda_bar for k in row] for row in plane] for plane in theories])  # (A, D, B)
    shape = (len(activations), len(dims), len(bias_stds), len(scales))
    cells = [(theories[a][d][b], scales[s]) for a, d, b, s in np.ndindex(shape)]
    verdict = np.array([cell_verdict({**parts, **kernel_reasons(k, certified_eps(s))}, k, s) for k, s in cells])
    return verdict.reshape(shape), lam


def agreement_with_kernel(result: PhaseResult, finite_time: bool = False) -> float:
    """Fraction of the noise-only cells (attention scale 0) with a verdict (not "not applicable") where 'P(sync)
    >= 1/2' matches it ("synchronizes": not odd, lambda_bar < 0 and lambda_bar' < 0; "does not": odd or
    lambda_bar >= 0); with ``finite_time`` a predicted synchronization also needs lambda_bar T < log(threshold /
    E_beta(0)) (the decay near synchrony is at rate lambda_bar, so a finite horizon needs that much). nan without
    scale 0 or where no cell has a verdict (a part breaks the theorem's assumptions)."""
    if 0.0 not in result.scales:
        return float("nan")
    zero = result.scales.index(0.0)
    verdict = np.asarray(result.verdict)[..., zero]  # (A, D, B)
    judged = verdict != NOT_APPLICABLE
    if not judged.any():
        return float("nan")
    predicted = verdict == "synchronizes"
    if finite_time:
        need = np.log(result.threshold / np.asarray(result.initial_energy))[:, :, None]  # (A, D, 1)
        predicted &= np.asarray(result.lambda_bar) * result.horizon < need
    observed = np.asarray(result.probability)[..., zero] >= 0.5  # (A, D, B)
    return float((observed == predicted)[judged].mean())
