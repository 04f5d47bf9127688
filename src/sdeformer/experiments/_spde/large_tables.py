"""The SPDE report's tables of propagation of chaos to N = 10^6 on the circle and of the interaction energy's
fluctuation along the dynamics (``checks._spde.chaos_large``; docs/spde.md section 9, "To a million particles")."""

from __future__ import annotations

from pathlib import Path

from ...io._report import Figure, Table
from ...plots._names import FIGURES
from .tables import SETTING

LARGE_FIGURE = Figure(
    Path(FIGURES["spde"]["large"]),
    "Circle to N = 10^6: sup_t W_2^2 against N with 95% intervals, the fitted slope and r_d's; the energy's sd "
    "over clouds along the dynamics against N (dotted: the i.i.d. law at mu_t), with the slopes' intervals.",
)


def large_tables(report) -> list[Table]:
    """The two tables of ``checks._spde.chaos_large``'s part of the report (empty without it)."""
    return [large_w2_table(report), energy_table(report)]


def _interval(lo: float, hi: float) -> str:
    return f"[{lo:.3f}, {hi:.3f}]"


def large_w2_table(report) -> Table:
    """sup_t W_2^2 of i.i.d. clouds against the density per N (10^2 .. 10^6), with its interval, the initial
    part, and the fitted slope with its bootstrap interval beside r_d's."""
    r = getattr(report, "large", {}).get("w2")
    rows = []
    if r:
        slope = f"{r['slope']:.3f} {_interval(*r['slope_ci'])}"
        verdict = "holds" if r["holds"] else "does not hold"
        rows = [
            [f"{n:g}", f"{m:.3g} [{lo:.3g}, {hi:.3g}]", f"{i:.3g} ({ise:.2g})", r["paths"], slope, r["bound_slope"],
             verdict]
            for n, m, (lo, hi), i, ise in zip(r["N"], r["sup_w2"], r["sup_w2_ci"], r["initial_w2"],
                                              r["initial_w2_se"])
        ]  # fmt: skip
    return Table(
        ["N", "sup_t W2^2 (95% CI)", "initial part (s.e.)", "paths", "slope (95% CI)", "r_d slope", "verdict"],
        rows,
        "Propagation of chaos on the circle to a million particles: i.i.d. clouds and the density on the same "
        "noise path (one cloud per N and path), W_2 exact by quantiles at 4 levels per particle; slope's interval "
        "by bootstrap over the paths; it holds when every path is resolved and the interval lies below r_d's",
        from_runs=True,
        exact={"N": SETTING, "paths": SETTING, "r_d slope": "closed form"},
    )


def energy_table(report) -> Table:
    """The sd of E_beta over independent clouds on one noise path per saved time and N, beside the i.i.d. law at
    mu_t, and the sd's slope with its bootstrap interval against -1/2."""
    rows = [
        [f"{r['t']:.3g}", f"{n:g}", f"{sd:.3g} [{lo:.3g}, {hi:.3g}]", f"{ref:.3g}", f"{sd / ref:.2f}",
         f"{r['slope']:.3f} {_interval(*r['slope_ci'])}", r["predicted_slope"], r["clouds"] * r["paths"],
         "holds" if r["holds"] else "does not hold"]
        for r in getattr(report, "large", {}).get("energy", [])
        for n, sd, (lo, hi), ref in zip(r["N"], r["sd"], r["sd_ci"], r["iid_sd"])
    ]  # fmt: skip
    return Table(
        [
            "t",
            "N",
            "sd of E_beta (95% CI)",
            "i.i.d. law at mu_t",
            "ratio",
            "slope (95% CI)",
            "predicted slope",
            "clouds",
            "verdict",
        ],
        rows,
        "The interaction energy's fluctuation along the dynamics: independent i.i.d. clouds driven on one noise "
        "path (pooled over paths), against the i.i.d. law at the density mu_t (exact at t = 0: theory.energy_law) "
        "and the fluctuation theorem's slope -1/2; a time holds when every sd is above round-off and the slope's "
        "interval contains -1/2 and not -1",
        from_runs=True,
        exact={
            "t": SETTING,
            "N": SETTING,
            "clouds": SETTING,
            "predicted slope": "closed form",
            "i.i.d. law at mu_t": "closed form at the measured mu_t (quadrature)",
        },  # fmt: skip
        uncertainty={"ratio": "sd of E_beta (95% CI)"},
    )
