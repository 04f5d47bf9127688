"""A wrong *particle* field against the right density, and the interaction part of the W_2 error (THEORY
sections 4-5; docs/spde.md section 9).

The density check of ``chaos.w2_check`` perturbs only the density, which is the push-forward of the particles'
own step: an error shared by the field and the step cannot be seen there. Here the density stays right and the
**particles** are driven by a field whose noise covariance is x (1 + s) (s in ``_power.SIGNED``), on the same
Brownian coefficients z (``CloudRoles``: one run, one z per step, each cloud with its own field and drift).

Per noise path r at the largest N, D_r = sup_t W_2^2(wrong cloud, mu) - sup_t W_2^2(right cloud, mu), the two
clouds started from the same points; a seed (a batch of ``runs`` paths with their own clouds) catches the wrong
field when mean D > ``SIGMAS`` s.e. of D (``chaos_power.paired``). The catch rate is counted over K independent
seeds (``_power.counted``); the false alarm rate is the same test on a second, independent i.i.d. cloud of the
right field (the right model re-sampled: D has mean 0); a QMC cloud has no independent twin (not measured).

The interaction part. Beside the interacting cloud X (its own empirical attention) the same initial points are
carried by the **limit flow** Y: the same field and z, the attention of the density mu_t instead of the
cloud's (the McKean-Vlasov particles of the synchronous coupling). Y_t is the initial sample carried by the flow
of the limit, so W_2^2(Y_t, mu_t) is the *carried initial error*, and the *interaction part* is the coupling
distance C(t) = (1/N) sum_i d(X_i, Y_i)^2 >= W_2^2(X_t, Y_t) (d geodesic): by the triangle inequality
W_2(X_t, mu_t) <= W_2(X_t, Y_t) + W_2(Y_t, mu_t). Each is reported as sup over the saved times, mean over the
paths of every seed with its s.e., with the log-log slope of sup_t C against N (bootstrap 95% over the paths).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from ...core._rng import derive_seeds
from ...dynamics._sde import LimitSDE
from ...noise._replay import ReplayedNoise
from ...observables import bootstrap_slope, loglog_slope
from ...spde._attention import MeasureAttention
from ...spde._diagnostics import TAIL_TOL
from ...spde._fields import SpectralField
from ...spde._initial import von_mises_fisher
from ...spde._solver import DensitySolver
from .._power import QUICK, REPORT, SIGNED, Plan, counted
from .chaos import DEGREE, _angles, _periodic, _solver, default_levels, density_quantile, tracked_run, w2_circle
from .chaos_power import paired

CHECK = "propagation_of_chaos_particle_field"
QUANTITY = "the particles' noise covariance (the density solver kept right)"


class CloudRoles(DensitySolver):
    """The density solver whose clouds each have a role ``(field, interacting)``, in the order they are given to
    ``run``: driven by ``field`` with the step's Brownian coefficients z, and by their own empirical attention
    (interacting) or by the density's attention Attn(mu_t, .) (the limit flow). The density itself is the
    right model's, unchanged."""

    def __init__(self, roles: Sequence[tuple[SpectralField, bool]], *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.attention is None:
            raise ValueError("CloudRoles: the limit flow needs the density's attention")
        self.roles, self._next, self._limit = tuple(roles), 0, None

    def map_points(self, x, attention, z, source):
        if attention is not self.particle_attention:  # the density's grid, first in every step: its drift
            assert isinstance(attention, MeasureAttention)  # the density's (the solver's own)
            self._limit = MeasureAttention(attention.attention, attention.moments)  # at any points
            return super().map_points(x, attention, z, source)
        field, interacting = self.roles[self._next]
        self._next = (self._next + 1) % len(self.roles)
        sde = LimitSDE(ReplayedNoise(field, (z,)), attention if interacting else self._limit)
        scheme = self.scheme_class(sde, 1, self.dt)
        scheme.step_checked = True
        return scheme.step(x, source)


def _cloud(theta: np.ndarray) -> torch.Tensor:
    t = torch.from_numpy(np.ascontiguousarray(theta))
    return torch.stack([t.cos(), t.sin()], -1)


def coupled_seed(sizes: Sequence[int], runs: int, seed: int, saves: int = 4, concentration: float = 1.0) -> dict:
    """One seed: ``runs`` noise paths, the right density, and per kind (i.i.d., QMC) and N the interacting and
    the limit-flow clouds (right field); at the largest N also the interacting clouds of the fields x (1 + s)
    and, for i.i.d., an independent twin. Returns per kind: ``total``, ``carried``, ``coupling``
    ``(sizes, runs)`` (sup over the saved times), ``wrong`` {s: (runs,)} and ``twin`` (runs,) at the largest
    N, and ``tail`` (runs,): the density's largest tail share."""
    right = _solver()
    fields = {s: _solver(1 + s).field for s in SIGNED}
    top = max(sizes)
    rng = np.random.default_rng(seed)
    c0 = von_mises_fisher(right.basis, concentration)
    c0_np = c0.numpy()
    roles, clouds, names = [], [], []
    for kind in ("iid", "qmc"):
        for n in sizes:
            if kind == "iid":
                theta = density_quantile(c0_np, rng.random(runs * n)).reshape(runs, n)
            else:
                theta = np.broadcast_to(density_quantile(c0_np, (np.arange(n) + 0.5) / n), (runs, n))
            extra = [(f"wrong{s:g}", fields[s]) for s in SIGNED] if n == top else []
            for name, field, interacting in [("right", right.field, True), ("limit", right.field, False)] + [
                (a, f, True) for a, f in extra
            ]:
                roles.append((field, interacting))
                clouds.append(_cloud(theta))
                names.append((kind, n, name))
        if kind == "iid":
            twin = density_quantile(c0_np, rng.random(runs * top)).reshape(runs, top)
            roles.append((right.field, True))
            clouds.append(_cloud(twin))
            names.append((kind, top, "twin"))
    solver = CloudRoles(roles, right.field, DEGREE, right.steps, right.horizon, beta=2.0)
    every = max(1, solver.steps // saves)
    traj, tail = tracked_run(solver, c0.expand(runs, -1).clone(), seed, every, clouds)
    dens = traj.x[0].numpy()  # (S, runs, P)
    levels = {n: default_levels(n) for n in sizes}  # each N on its own levels (``chaos.w2_circle``'s default)
    w2 = {key: np.zeros((dens.shape[0], runs)) for key in names}
    for s in range(dens.shape[0]):
        for r in range(runs):
            g = {n: _periodic(density_quantile(dens[s, r], t), t) for n, t in _midpoints(levels).items()}
            for (kind, n, name), cloud in zip(names, traj.x[1:]):
                w2[(kind, n, name)][s, r] = w2_circle(_angles(cloud[s, r]), dens[s, r], levels[n], g[n])
    index = {key: i for i, key in enumerate(names)}
    out: dict = {"tail": tail}
    for kind in ("iid", "qmc"):
        x = [traj.x[1 + index[(kind, n, "right")]] for n in sizes]
        y = [traj.x[1 + index[(kind, n, "limit")]] for n in sizes]
        out[kind] = {
            "total": np.stack([w2[(kind, n, "right")].max(0) for n in sizes]),
            "carried": np.stack([w2[(kind, n, "limit")].max(0) for n in sizes]),
            "coupling": np.stack([_coupling(a, b) for a, b in zip(x, y)]),
            "wrong": {s: w2[(kind, top, f"wrong{s:g}")].max(0) for s in SIGNED},
            "twin": w2[(kind, top, "twin")].max(0) if kind == "iid" else None,
        }
    return out


def _midpoints(levels: dict[int, int]) -> dict[int, np.ndarray]:
    return {n: (np.arange(m) + 0.5) / m for n, m in levels.items()}


def _coupling(x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """sup_t (1/N) sum_i d(x_i, y_i)^2, geodesic d, for clouds ``(S, runs, N, 2)`` -> ``(runs,)``."""
    cross = x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    angle = torch.atan2(cross, (x * y).sum(-1))  # (S, runs, N)
    return (angle**2).mean(-1).amax(0).numpy()


def _mean_se(a: np.ndarray) -> tuple[list[float], list[float]]:
    """Mean and s.e. over the last axis (the paths)."""
    return a.mean(-1).tolist(), (a.std(-1, ddof=1) / math.sqrt(a.shape[-1])).tolist()


def particle_field_check(quick: bool = False, seed: int = 0, runs: int = 32, plan: Plan | None = None) -> dict:
    """The wrong particle field's catch rates over K seeds and the interaction part (module docstring):
    N = 10^2 .. 10^4 (quick: 10^2, 10^3), ``runs`` paths per seed, K = ``plan.seeds`` (REPORT: 8; quick: 2).
    Returns ``records`` (one per kind, the fields of ``_power.Catch``) and ``interaction`` (per kind and N)."""
    plan = plan or (QUICK if quick else REPORT)
    sizes = (100, 1000) if quick else (100, 1000, 10000)
    seeds = derive_seeds(seed, plan.seeds)
    found = {k: coupled_seed(sizes, runs, k) for k in seeds}
    records, interaction = [], []
    for kind in ("iid", "qmc"):

        def caught(size: float, k: int, kind=kind) -> bool:
            part = found[k][kind]
            other = part["twin"] if size == 0 else part["wrong"][size]
            return paired({"sup_w2_last_paths": part["total"][-1]}, {"sup_w2_last_paths": other})["caught"]

        catch = counted(caught, seeds, false_alarms=kind == "iid")
        tests = {
            f"{s:g}": [round(paired({"sup_w2_last_paths": found[k][kind]["total"][-1]},
                                    {"sup_w2_last_paths": found[k][kind]["wrong"][s]})["z"], 2) for k in seeds]
            for s in SIGNED
        }  # fmt: skip
        resolved = sum(int((found[k]["tail"] <= TAIL_TOL).sum()) for k in seeds)
        fields = catch.fields()
        record = {"check": CHECK, "particles": kind, "N": max(sizes), "paths": runs, "quantity": QUANTITY}
        record |= fields | {"paired_z_per_seed": tests, "sign_only": False, "resolved_paths": resolved}
        record |= {"holds": resolved == runs * len(seeds) and fields["size_80"] is not None}
        if kind == "qmc":
            record["false_alarm_note"] = "not measured: a QMC cloud has no independent twin"
        if fields["size_80"] is None:
            said = ", ".join(f"{a}: {b:.2g}" for a, b in fields["catch_rate"].items())
            record["reason"] = f"no particle covariance error up to 20 % caught with P >= 0.8 ({said})"
        records.append(record)
        interaction.append(_interaction(kind, sizes, [found[k][kind] for k in seeds], runs))
    return {"records": records, "interaction": interaction, "seeds": len(seeds)}


def _interaction(kind: str, sizes: Sequence[int], parts: list[dict], runs: int) -> dict:
    """The carried initial error, the interaction part and their sum's measured total over all paths of all
    seeds, with the coupling's slope against N."""
    pooled = {name: np.concatenate([p[name] for p in parts], -1) for name in ("total", "carried", "coupling")}
    coupling = np.maximum(pooled["coupling"], np.finfo(float).tiny)
    row: dict = {"particles": kind, "N": list(sizes), "paths": pooled["total"].shape[-1], "seeds": len(parts)}
    for name, values in pooled.items():
        row[name], row[f"{name}_se"] = _mean_se(values)
    row["excess"], row["excess_se"] = _mean_se(pooled["total"] - pooled["carried"])
    row["coupling_slope"] = loglog_slope(sizes, coupling.mean(-1))
    row["coupling_slope_ci"] = list(bootstrap_slope(sizes, coupling))
    row["carried_slope"] = loglog_slope(sizes, pooled["carried"].mean(-1))
    return row
