"""Figures of the density solver (THEORY section 4; docs/spde.md): the circle's space-time density with the
coupled particles over it, the sphere's density snapshots in Mollweide projection beside the coupled cloud, and
the particles' error against N. Each function reads a run's arrays (``experiments._spde.run``) and writes one PNG
atomically; the experiments never import this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.colors import PowerNorm

from ._names import FIGURES
from ._save import plt, save_figure

if TYPE_CHECKING:
    from ..experiments._spde.run import SpdeReport, SpdeRun

SNAPSHOTS = 4
TRACKS = 60  # particles drawn over the circle's density
FLOOR = 1e-18  # lower end of the log axes


def _unresolved_time(a: dict[str, np.ndarray]) -> float | None:
    bad = np.flatnonzero(~a["resolved"].astype(bool))
    return float(a["t"][bad[0]]) if bad.size else None


def circle_figure(a: dict[str, np.ndarray], path: Path) -> Path:
    """Space-time density rho(theta, t) / rho_uniform with the coupled particles' angles drawn over it."""
    t, theta, rho = a["t"], a["axis0"], a["density"] * 2 * np.pi  # (S,), (G,), (S, G)
    ok = a["resolved"].astype(bool)
    shown = np.where(ok[:, None], rho, np.nan)  # below resolution: not drawn (grey)
    fig, (ax, side) = plt.subplots(1, 2, figsize=(9.0, 4.2), gridspec_kw={"width_ratios": [3, 1.2]})
    ax.set_facecolor("0.8")
    norm = PowerNorm(0.5, vmin=0.0, vmax=float(np.nanmax(shown)))  # square-root scale: the low densities show
    mesh = ax.pcolormesh(t, theta, np.clip(shown, 0.0, None).T, shading="nearest", cmap="magma", norm=norm)
    fig.colorbar(mesh, ax=ax, label="density / uniform density (square-root scale)")
    if "points" in a:
        pts = a["points"][:, :TRACKS]  # (S, tracks, 2)
        ang = np.arctan2(pts[..., 1], pts[..., 0])
        ax.scatter(
            np.repeat(t, ang.shape[1]), ang.reshape(-1), s=1.0, c="cyan", lw=0, label=f"{ang.shape[1]} particles"
        )
        ax.legend(loc="upper right", fontsize=7, markerscale=6)
    cut = _unresolved_time(a)
    if cut is not None:
        ax.axvline(cut, color="white", ls="--", lw=1.2)
        side.axvline(cut, color="k", ls="--", lw=1.0, label="below resolution from here")
    ax.set(xlabel="time t", ylabel="angle theta", ylim=(-np.pi, np.pi))
    ax.set_title("density (grey: below resolution) and particles, one noise path", fontsize=9)
    side.semilogy(t, np.maximum(a["tail"], FLOOR), label="spectral tail share")
    if "distance_low" in a:
        side.semilogy(t, np.maximum(a["distance_low"], FLOOR), label="cloud-density distance (l <= 8)")
    side.set(xlabel="time t", ylabel="value", title="resolution and distance")
    side.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def sphere_figure(a: dict[str, np.ndarray], path: Path) -> Path:
    """Density snapshots (Mollweide projection, top) beside the coupled cloud at the same times (bottom)."""
    t, lat, lon, rho = a["t"], a["axis0"], a["axis1"], a["density"] * 4 * np.pi  # (S, nlat, nlon)
    idx = np.unique(np.linspace(0, len(t) - 1, SNAPSHOTS).round().astype(int))
    fig = plt.figure(figsize=(3.2 * len(idx), 4.6))
    vmax = np.quantile(rho[idx], 0.995)
    cut = _unresolved_time(a)
    for col, i in enumerate(idx):
        ax: Any = fig.add_subplot(2, len(idx), col + 1, projection="mollweide")
        ax.pcolormesh(lon, lat, rho[i], shading="nearest", cmap="magma", vmin=min(0.0, rho[idx].min()), vmax=vmax)
        flag = "" if cut is None or t[i] < cut else " (below resolution)"
        ax.set_title(f"density, t = {t[i]:.2f}{flag}", fontsize=8)
        ax.set_xticklabels([])
        ax.set_yticklabels([])
        cloud: Any = fig.add_subplot(2, len(idx), len(idx) + col + 1, projection="mollweide")
        if "points" in a:
            p = a["points"][i]
            cloud.scatter(np.arctan2(p[:, 1], p[:, 0]), np.arcsin(np.clip(p[:, 2], -1, 1)), s=1.5, c="C0", lw=0)
        cloud.set_title(f"particles, t = {t[i]:.2f}", fontsize=8)
        cloud.set_xticklabels([])
        cloud.set_yticklabels([])
    fig.suptitle("the 2-sphere: density (top) and the coupled cloud (bottom), longitude x latitude", fontsize=9)
    return save_figure(fig, path)


def error_figure(runs: dict[int, dict[str, np.ndarray]], path: Path) -> Path:
    """Sup over resolved times of the first-8-mode distance against N (log-log), with the fitted slope, the
    N^-1/2 line and the propagation-of-chaos bound slope, per dimension."""
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    for i, (dim, a) in enumerate(sorted(runs.items())):
        n, err = a["sizes"].astype(float), a["error"]  # (K,), (K, R)
        mean, se = err.mean(-1), err.std(-1, ddof=1) / np.sqrt(err.shape[-1])
        lo, hi = a["slope_ci"]
        label = f"d = {dim}: slope {float(a['slope']):.2f} [{lo:.2f}, {hi:.2f}]"
        ax.errorbar(n, mean, yerr=1.96 * se, fmt="o-", color=f"C{i}", capsize=3, label=label)
        ax.plot(n, mean[0] * (n / n[0]) ** -0.5, ":", color=f"C{i}", label="N^-1/2" if i == 0 else None)
        ax.plot(
            n,
            mean[0] * (n / n[0]) ** float(a["bound"]),
            "--",
            color="gray",
            lw=0.8,
            label=f"bound slope {float(a['bound']):.2f}" if i == 0 else None,
        )
    ax.set(xscale="log", yscale="log", xlabel="particles N", ylabel="sup_t distance, degrees 1..8")
    ax.set_title("particles against the density, one noise path", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def run_figure(run: SpdeRun, path: Path) -> Path:
    """The figure of one ``sdeformer spde`` run (circle or sphere by its dimension)."""
    draw = circle_figure if run.settings["dim"] == 2 else sphere_figure
    return draw(run.arrays, path)


def report_figures(report: SpdeReport, out: Path) -> list[Path]:
    """The report's figures into ``out`` (names ``FIGURES["spde"]``; the large-N one when the report has it)."""
    from ..io._formats import read_npz

    names = FIGURES["spde"]
    paths = []
    for key, folder in report.showcase.items():
        draw = circle_figure if key == "d2" else sphere_figure
        paths.append(draw(read_npz(out / folder / "spde.npz"), out / names[key]))
    conv = {int(p.stem[-1]): read_npz(p) for p in sorted(out.glob("convergence_d*.npz"))}
    paths.append(error_figure(conv, out / names["error"]))
    if getattr(report, "large", None):
        paths.append(large_figure(report.large, out / names["large"]))
    return paths


def _with_interval(ax, n, mean, ci, **style) -> None:
    lo, hi = np.asarray(ci, float).T
    ax.errorbar(n, mean, yerr=[np.asarray(mean) - lo, hi - np.asarray(mean)], capsize=3, marker="o", **style)


def large_figure(large: dict[str, Any], path: Path) -> Path:
    """Circle to N = 10^6 (``checks._spde.chaos_large``): sup_t W_2^2 against N with 95% intervals, the fitted
    slope and r_d's; the energy's sd over clouds against N at each saved time, with N^-1/2."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 4.0))
    w2 = large["w2"]
    n = np.asarray(w2["N"], float)
    fit = f"i.i.d., slope {w2['slope']:.3f} [{w2['slope_ci'][0]:.3f}, {w2['slope_ci'][1]:.3f}]"
    _with_interval(left, n, w2["sup_w2"], np.maximum(np.asarray(w2["sup_w2_ci"]), FLOOR), color="C0", label=fit)
    left.plot(n, w2["sup_w2"][0] * (n / n[0]) ** w2["bound_slope"], "--", color="gray", lw=0.8, label="r_d: N^-1/2")
    left.set(xscale="log", yscale="log", xlabel="particles N", ylabel="sup_t W_2^2(mu^N_t, mu_t)")
    left.set_title(f"particles against the density, {w2['paths']} noise paths", fontsize=9)
    for i, r in enumerate(large["energy"]):
        ne = np.asarray(r["N"], float)
        fit = f"t = {r['t']:.3g}: slope {r['slope']:.2f} [{r['slope_ci'][0]:.2f}, {r['slope_ci'][1]:.2f}]"
        _with_interval(right, ne * (1 + 0.04 * i), r["sd"], r["sd_ci"], color=f"C{i}", label=fit)
        right.plot(ne, r["iid_sd"], ":", color=f"C{i}", lw=0.8)
    right.set(xscale="log", yscale="log", xlabel="particles N", ylabel="sd of E_beta over clouds, one noise path")
    right.set_title("energy along the dynamics (dotted: i.i.d. law at mu_t; slope -1/2)", fontsize=9)
    for ax in (left, right):
        ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)
