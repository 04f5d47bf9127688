"""The power of the propagation-of-chaos checks (docs/spde.md section 9): a paired test at the largest N.

The wrong models are densities whose noise covariance is x (1 + s) for the signed sizes ``_power.SIGNED``,
run on the same Brownian coefficients and measured against the same particle clouds as the right density. On
each noise path r the paired difference D_r = sup_t W_2^2(cloud, wrong density) - sup_t W_2^2(cloud, right
density) at the largest N removes what the two share (the cloud's own sampling error); the wrong density is
caught when mean D > ``SIGMAS`` s.e. of D over the paths. Its catch probability is computed from the measured
mean and s.e. (a new set of paths gives mean D / s.e. about N(mean / s.e., 1)): P = Phi(mean / s.e. - SIGMAS),
``catch_seeds`` None, ``catch_basis`` saying so; a size_80 found so is confirmed by one re-run on a fresh seed
(``power_records``'s ``again``) or withdrawn. The right model's own criterion: every path resolved and, for
i.i.d. clouds in W_2 (what THEORY section 5's proposition covers), the 95% intervals of the slopes of sup_t
W_2^2 and of the part the dynamics adds below r_d's slope; QMC clouds and sliced distances are outside it and
are judged by resolution and the paired test alone (``compared_with_r_d`` false).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from statistics import NormalDist

import numpy as np

from .._power import SIGNED, Catch, size_80
from .._record import SIGMAS

BASIS = (
    f"computed: paired test at the largest N over the noise paths, P = Phi(mean D / s.e. - {SIGMAS:g}), D = sup_t "
    "W_2^2 to the wrong density - to the right one on the same path and cloud"
)


def falls(row: dict) -> bool:
    """Both slopes' 95% intervals below the slope of r_d(N), every path resolved."""
    return resolved(row) and max(row["slope_ci"][1], row["dynamics_slope_ci"][1]) < row["bound_slope"]


def resolved(row: dict) -> bool:
    return row.get("resolved_paths", row["paths"]) == row["paths"]


def _unresolved(row: dict, sizes: Sequence[int]) -> str:
    """Why the right model's record does not hold: a path below resolution, or the slopes' intervals."""
    if not resolved(row):
        return f"the density is below resolution on {row['paths'] - row['resolved_paths']} of {row['paths']} paths"
    return f"the slopes' 95% intervals reach the r_d slope at N = {sizes[0]}..{sizes[-1]}"


def paired(right: dict, wrong: dict) -> dict:
    """The paired difference at the largest N (module docstring): its mean, s.e., z and catch probability."""
    d = np.asarray(wrong["sup_w2_last_paths"]) - np.asarray(right["sup_w2_last_paths"])  # (runs,)
    mean, se = float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size))
    z = mean / se if se > 0 else (math.inf if mean > 0 else 0.0)
    return {"mean": mean, "se": se, "z": z, "caught": z > SIGMAS, "p_caught": NormalDist().cdf(z - SIGMAS)}


Rerun = Callable[[tuple[float, ...]], tuple[list[dict], dict[float, list[dict]]]]


def power_records(
    check: str,
    right: list[dict],
    wrong: dict[float, list[dict]],
    w2: bool = True,
    again: tuple[int, Rerun] | None = None,
) -> list[dict]:
    """Per particle kind (the rows of ``Chaos.rows``) the record of ``checks.json`` (module docstring): the
    paired test against each wrong density (``wrong``: signed size -> its rows), the catch rates, size_80 and
    smallest_error_caught; it holds when the right model's criterion holds and size_80 is found and confirmed.
    ``w2``: the distance is W_2 (False: a sliced distance, never compared with r_d). ``again``: (a fresh seed,
    ``rerun(sizes)``: the same measurement on it with the wrong densities of the signed ``sizes`` only, giving
    the right rows and size -> rows), run once for every record's confirmation (``confirmed``)."""
    tests = [{s: paired(row, w[i]) for s, w in wrong.items()} for i, row in enumerate(right)]
    catches = [Catch({s: t[s]["p_caught"] for s in SIGNED if s in t}, None, BASIS) for t in tests]
    catches = [replace(c, computed_size_80=size_80(c.rates)) for c in catches]
    named = sorted({e * c.smallest_error_caught for c in catches if c.smallest_error_caught for e in (1, -1)})
    if again is not None and named:
        seed, rerun = again
        fresh, fresh_wrong = rerun(tuple(named))
        catches = [_confirmed(c, r, fresh[i], fresh_wrong, i, w2, seed) for i, (c, r) in enumerate(zip(catches, right))]
    records = []
    for i, (row, catch) in enumerate(zip(right, catches)):
        with_r_d = w2 and row["particles"] == "iid"
        ok = falls(row) if with_r_d else resolved(row)
        fields = catch.fields()
        record = {"check": check, **{k: v for k, v in row.items() if k != "sup_w2_last_paths"}}
        record |= {"compared_with_r_d": with_r_d, "falls_faster_than_r_d": falls(row)}
        record |= {"paired_test": {f"{s:g}": t for s, t in tests[i].items()}}
        record |= {"caught": {s: t["caught"] for s, t in tests[i].items()}}
        record |= {"wrong_dynamics_slopes": {f"{s:g}": w[i]["dynamics_slope"] for s, w in wrong.items()}}
        record |= fields | {"power_basis": BASIS, "sign_only": False, "quantity": "the density's noise covariance"}
        record |= {"holds": ok and fields["size_80"] is not None}
        if not ok:
            record["reason"] = _unresolved(row, row["N"])
        elif catch.confirmed is False:
            record["reason"] = f"the computed size_80 was not confirmed by the re-run on seed {fields['confirm_seed']}"
        elif fields["size_80"] is None:
            said = ", ".join(f"{k}: {v:.2g}" for k, v in fields["catch_rate"].items())
            record["reason"] = f"no covariance error up to 20 % caught with P >= 0.8 by the paired test ({said})"
        records.append(record)
    return records


def _confirmed(
    catch: Catch, row: dict, fresh: dict, wrong: dict[float, list[dict]], i: int, w2: bool, seed: int
) -> Catch:
    """``catch`` with its confirming re-run (``fresh``: the right model's row on the fresh seed, ``wrong`` the
    wrong densities' rows there): the wrong densities at +- its size caught by the paired test, and the right
    model passing: its own criterion met and no wrong density significantly nearer (mean D < -SIGMAS s.e.)."""
    size = catch.smallest_error_caught
    if size is None:
        return catch
    tests = {e * size: paired(fresh, wrong[e * size][i]) for e in (1, -1)}
    criterion = falls(fresh) if w2 and row["particles"] == "iid" else resolved(fresh)
    rejected = not criterion or any(t["z"] < -SIGMAS for t in tests.values())
    said = {"seed": seed, "0": rejected} | {f"{s:g}": t["caught"] for s, t in tests.items()}
    return replace(catch, confirm=said | {"paired_test": {f"{s:g}": t for s, t in tests.items()}})
