"""The accuracy side of the SPDE cost comparison (docs/spde.md section 10): every contender's total error at T,
time-step error included, against a fine reference on the same Brownian path.

The reference is the density at degree ``REFERENCE_K`` in ``STEPS x REFINE`` steps; every contender runs
``STEPS`` steps, each step fed the sum of the ``REFINE`` fine steps' Brownian coefficients over sqrt(REFINE)
(``Refined``: exactly standard normal, and the noise is linear in them, so both follow one Brownian path). The
error is the first-8-mode distance at T (``low_mode_distance``) per path, mean and s.e. over ``paths`` paths:
for the density at degree K (spatial cut + the scheme's strong error at ``STEPS`` steps), and for clouds of N
particles, i.i.d. draws of the start and its deterministic quantile (QMC) points (sampling + strong error).
The reference's own error is its distance to the same reference at half the refinement (``reference_error``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from sdeformer.checks._spde.chaos import density_quantile
from sdeformer.core._rng import Streams
from sdeformer.spde._diagnostics import cloud_coefficients, low_mode_distance
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver
from sdeformer.theory._coupled import Recorder

STEPS, HORIZON, BETA = 20, 0.5, 2.0
REFERENCE_K, REFINE = 48, 64


def make_solver(modes: int, steps: int = STEPS) -> DensitySolver:
    field = mlp_noise(2, "relu", 0.5, 0.5, modes=3, scale=0.5)
    return DensitySolver(field, modes, steps, HORIZON, beta=BETA)


class Refined:
    """The coarse run's source: its k-th draw is the sum of the matching draws of ``ratio`` consecutive fine
    steps over sqrt(ratio) (``calls`` draws per step, in the same order on every step)."""

    def __init__(self, draws: list[torch.Tensor], ratio: int, calls: int, batch: tuple[int, ...]):
        self.draws, self.ratio, self.calls, self.batch, self.k = draws, ratio, calls, batch, 0

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        step, pos = divmod(self.k, self.calls)
        self.k += 1
        fine = [self.draws[(step * self.ratio + i) * self.calls + pos] for i in range(self.ratio)]
        return (torch.stack(fine).sum(0) / math.sqrt(self.ratio)).to(dtype)


def reference(paths: int, refine: int = REFINE, seed: int = 0) -> tuple[torch.Tensor, list[torch.Tensor], int]:
    """The fine reference's final coefficients ``(paths, P)``, its draws and the draws per step."""
    fine = make_solver(REFERENCE_K, STEPS * refine)
    rec = Recorder(Streams(seed, (paths,)))
    c0 = von_mises_fisher(fine.basis, 1.0).expand(paths, -1).clone()
    final = fine.run(c0, saveat=fine.steps, streams=rec).final
    calls, left = divmod(len(rec.draws), fine.steps)
    if left:
        raise RuntimeError("the reference drew a different number of normals per step")
    return final, rec.draws, calls


def _error(basis, a: torch.Tensor, b: torch.Tensor) -> dict:
    size = make_solver(8).basis.size
    e = low_mode_distance(basis, a[..., :size], b[..., :size]).numpy()
    return {"mean": float(e.mean()), "se": float(e.std(ddof=1) / math.sqrt(e.size)) if e.size > 1 else 0.0}


def coupled_errors(degrees: Sequence[int], sizes: Sequence[int], paths: int = 8, seed: int = 0) -> dict:
    """Errors at T against the fine reference: ``density`` per K, ``iid`` and ``qmc`` per N (module docstring)."""
    ref, draws, calls = reference(paths, REFINE, seed)
    basis8 = make_solver(8).basis

    def coarse(k: int, particles: tuple[torch.Tensor, ...] = ()):
        solver = make_solver(k)
        c0 = von_mises_fisher(solver.basis, 1.0).expand(paths, -1).clone()
        source = Refined(draws, REFINE, calls, (paths,))
        return solver, solver.run(c0, saveat=STEPS, particles=particles, streams=source).final

    out: dict = {"density": {}, "iid": {}, "qmc": {}}
    for k in degrees:
        _, final = coarse(k)
        out["density"][k] = _error(basis8, final, ref)
    c_start = von_mises_fisher(make_solver(8).basis, 1.0).numpy()
    rng = np.random.default_rng(seed + 1)
    for n in sizes:
        iid = density_quantile(c_start, rng.random(paths * n)).reshape(paths, n)
        qmc = np.broadcast_to(density_quantile(c_start, (np.arange(n) + 0.5) / n), (paths, n))
        clouds = tuple(torch.from_numpy(np.ascontiguousarray(t)) for t in (iid, qmc))
        solver, final = coarse(8, tuple(torch.stack([t.cos(), t.sin()], -1) for t in clouds))
        for kind, x in zip(("iid", "qmc"), final[1:]):
            out[kind][n] = _error(basis8, cloud_coefficients(solver.basis, x), ref)
    return out


def reference_error(paths: int = 8, seed: int = 0) -> dict:
    """The reference's own error: the distance of the STEPS x REFINE / 2 step run (coupled) to it."""
    ref, draws, calls = reference(paths, REFINE, seed)
    half = make_solver(REFERENCE_K, STEPS * REFINE // 2)
    c0 = von_mises_fisher(half.basis, 1.0).expand(paths, -1).clone()
    final = half.run(c0, saveat=half.steps, streams=Refined(draws, 2, calls, (paths,))).final
    return _error(make_solver(8).basis, final, ref)


def tail_calibration(
    thresholds: Sequence[float] = (5e-4, 1e-3, 1.2e-3, 1.5e-3, 2e-3), paths: int = 8, truth: int = 128
) -> dict:
    """The resolution flag's threshold against the error it predicts (docs/spde.md section 6): degrees 16-48
    against degree ``truth`` on the same paths, the tail share at every step; per threshold, the largest
    first-8-mode error at a step whose running tail share is below it, over the steps at which the truth's own
    running tail share is below 1e-3."""
    from sdeformer.spde._diagnostics import tail_share

    worst = dict.fromkeys(thresholds, 0.0)
    for scale, steps in ((1.0, 80), (0.5, 40)):
        field = mlp_noise(2, "relu", 0.5, 0.5, modes=3, scale=scale)

        def run(m: int):
            s = DensitySolver(field, m, steps, 2.0, beta=BETA)
            return s, s.run(von_mises_fisher(s.basis, 1.0).expand(paths, -1).clone(), seed=0, saveat=1).x

        top, ref = run(truth)
        ok = np.maximum.accumulate(tail_share(top.basis, ref).numpy(), 0) <= 1e-3
        for m in (16, 24, 32, 48):
            s, x = run(m)
            err = low_mode_distance(s.basis, x, ref[..., : s.basis.size]).numpy()
            tail = np.maximum.accumulate(tail_share(s.basis, x).numpy(), 0)
            for t in thresholds:
                keep = ok & (tail <= t)
                worst[t] = max(worst[t], float(err[keep].max()) if keep.any() else 0.0)
    return {"worst_error": worst, "paths": paths, "truth_degree": truth}
