"""The SPDE report's tables of the checks that carry a constant (docs/spde.md sections 8-9): the noise covariance
read from the degree energies, with its power, and propagation of chaos in W_2 on the circle and the sphere."""

from __future__ import annotations

import hashlib
import inspect
import sys

from ... import __version__
from ...checks._power import describe
from ...checks._spde import (
    chaos,
    chaos_independent,
    chaos_large,
    chaos_particles,
    chaos_scheme,
    chaos_sphere,
    covariance,
    sliced_sphere,
)
from ...io._report import Table

SETTING = "a setting"  # why a table column needs no uncertainty


def power_text(record: dict) -> str:
    """The power column: size_80 and the catch rates with K (``checks._power.describe``), and the reason where
    no size is caught with probability >= 0.8."""
    return describe(record) + (f": {record['reason']}" if record.get("reason") else "")


def covariance_table(report) -> Table:
    """The noise covariance scale read from E_l against 1 (``checks._spde.covariance``), the wrong models' readings
    with their own tolerances, and the smallest error caught."""
    rows = []
    for r in getattr(report, "covariance", []):
        wrong = "; ".join(f"x {1 + p['size']:g}: {p['measured']:.3f} (tol. {p['tolerance']:.3f})" for p in r["powers"])
        s = r["setting"]
        rows.append(
            [s["dim"], s["paths"], f"{r['measured']:.3f} +- {r['standard_error']:.3f}", f"{r['step_bias']:.3f}",
             f"{r['tolerance']:.3f}", wrong, power_text(r), r["verdict"]]
        )  # fmt: skip
    return Table(
        ["d", "paths", "covariance read (s.e.)", "step bias", "tolerance", "wrong models (own tolerance)",
         "smallest error caught", "verdict"],
        rows,
        "The noise covariance read from the degree energies (docs/spde.md section 8): the density at h and h/2 on "
        "one Brownian path; the wrong models (covariance x 1.1, x 1.2) re-run and judged with their own tolerance",
        from_runs=True,
        exact={"step bias": "coupled h, h/2: its s.e. is inside the tolerance", "tolerance": "3 s.e. + |step bias|"},
    )  # fmt: skip


DISTANCES = {"propagation_of_chaos_sphere": "3", "propagation_of_chaos_sphere_sliced": "3 (SSW)"}


def w2_table(report) -> Table:
    """sup_t W_2^2 per N with its interval, the initial and dynamics parts, the slope with its bootstrap
    interval beside r_d's, for the circle (``w2_check``) and the sphere (``sphere_check``)."""
    records = [*report.chaos.get("w2", []), *getattr(report, "sphere", {}).get("w2", []),
               *getattr(report, "sliced", {}).get("w2", [])]  # fmt: skip
    rows = [
        [DISTANCES.get(r.get("check"), "2"), r["particles"], f"{n:g}",
         f"{m:.3g} [{lo:.3g}, {hi:.3g}]", f"{i:.3g} ({ise:.2g})", f"{a:.3g} ({s:.2g})",
         f"{r['slope']:.3f} [{r['slope_ci'][0]:.3f}, {r['slope_ci'][1]:.3f}]", r["bound_slope"], power_text(r)]
        for r in records
        for n, m, (lo, hi), i, ise, a, s in zip(r["N"], r["sup_w2"], r["sup_w2_ci"], r["initial_w2"],
                                                r["initial_w2_se"], r["dynamics_added"], r["dynamics_added_se"])
    ]  # fmt: skip
    return Table(
        ["d", "particles", "N", "sup_t W2^2 (95% CI)", "initial part (s.e.)", "dynamics adds (s.e.)",
         "slope (95% CI)", "r_d slope", "smallest error caught"],
        rows,
        "Propagation of chaos: sup over saved times of W_2^2 between the particles and the density on the same "
        "noise path (circle: exact quantile form; sphere: POT's exact solver against the density's atoms; "
        "sphere SSW: the spherical sliced W_2^2, each great circle's W_2 exact, 16 great circles), over the paths' "
        "mean with 1.96 s.e.",
        from_runs=True,
        exact={"d": SETTING, "N": SETTING, "r_d slope": "closed form"},
    )  # fmt: skip


def particle_field_table(report) -> Table:
    """The wrong particle field (``checks._spde.chaos_particles``): per kind, the paired test's catch rates over K
    seeds at the largest N, and per N the carried initial error beside the interaction part."""
    found = report.chaos.get("particle_field", {})
    parts = {r["particles"]: r for r in found.get("interaction", [])}
    rows = [
        [r["particles"], f"{n:g}", f"{c:.3g} ({cs:.2g})", f"{a:.3g} ({as_:.2g})", f"{e:.3g} ({es:.2g})",
         f"{p['coupling_slope']:.3f} [{p['coupling_slope_ci'][0]:.3f}, {p['coupling_slope_ci'][1]:.3f}]",
         power_text(r) if n == r["N"] else ""]
        for r in found.get("records", [])
        for p in [parts[r["particles"]]]
        for n, c, cs, a, as_, e, es in zip(p["N"], p["carried"], p["carried_se"], p["coupling"], p["coupling_se"],
                                           p["excess"], p["excess_se"])
    ]  # fmt: skip
    return Table(
        ["particles", "N", "carried initial error sup_t W2^2(Y, mu) (s.e.)",
         "interaction sup_t (1/N) sum d(X_i, Y_i)^2 (s.e.)", "sup_t W2^2(X, mu) - carried (s.e.)",
         "interaction slope (95% CI)", "wrong particle field: caught"],
        rows,
        "The particles' noise covariance x 0.8 .. 1.2 against the right density (paired test at the largest N, "
        "counted over K seeds), and the W_2^2 error split into the initial sample carried by the limit flow (Y: "
        "the same points, field and noise, the density's attention) and the interaction's part (X against Y)",
        from_runs=True,
        exact={"N": SETTING},
    )  # fmt: skip


def independent_table(report) -> Table:
    """The i.i.d. clouds against the independent density scheme (``checks._spde.chaos_independent``): sup_t
    W_2^2 to it and to the spectral solver's density, the paired z per wrong covariance over K seeds, the catch
    rates and the right model's false alarms."""
    r = report.chaos.get("independent")
    rows = [] if r is None else [
        [r["N"], r["paths"], r["catch_seeds"], r["steps"], f"{r['right_sup_w2']:.3g} ({r['right_sup_w2_se']:.2g})",
         f"{r['spectral_sup_w2']:.3g} ({r['spectral_sup_w2_se']:.2g})",
         f"{min(r['scheme_gap_z_per_seed']):.2f} .. {max(r['scheme_gap_z_per_seed']):.2f}",
         "; ".join(f"x {1 + float(s):g}: {min(z):.2f} .. {max(z):.2f}" for s, z in r["paired_z_per_seed"].items()),
         f"{r['false_alarm_rate']:g}", power_text(r)]
    ]  # fmt: skip
    return Table(
        ["N", "paths", "K", "steps", "sup_t W2^2 to the independent density (s.e.)",
         "sup_t W2^2 to the spectral density (s.e.)", "z, spectral - independent (per seed)",
         "paired z per seed, wrong covariance", "false alarms", "smallest error caught"],
        rows,
        "i.i.d. particles on the solver's step against a density computed by an independent scheme (finite volumes "
        "in angle, Wong-Zakai in time, the noise built from kappa): paired test at the largest N per seed, wrong "
        "models the independent density with its noise covariance x 0.8 .. 1.2, counted over K seeds",
        from_runs=True,
        exact={"false alarms": "a count over the K seeds"},
    )  # fmt: skip


def study_code() -> str:
    """A hash of the source of the report's SPDE checks and of this package's version: the cached parts of
    ``run._spde.run_and_write`` belong to it (a changed check or release recomputes them)."""
    from . import large_tables, study

    try:
        modules = (study, sys.modules[__name__], chaos, chaos_particles, chaos_sphere, sliced_sphere, covariance,
                   chaos_independent, chaos_scheme)  # fmt: skip
        modules += (chaos_large, large_tables)
        text = "".join(inspect.getsource(m) for m in modules) + __version__
    except (OSError, TypeError):  # no source files (a frozen install): the version alone
        text = __version__
    return hashlib.sha256(text.encode()).hexdigest()[:16]
