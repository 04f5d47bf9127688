"""What the practice page may claim (docs/practice.md): records tied to the settings that produced them, and
differences to the baseline called "better" or "worse" only when a corrected test says so.

Records: output files tied to the settings that produced them (nothing computed is lost).

Folders are tied to a config by ``io._claims.claim_run_folder`` (a ``run.json`` marker). The practice commands
that write one JSON record into a shared folder (``probe --out FILE``, ``infer-practice``'s
``RESULTS/inference.json``) cannot claim the folder: several records of different settings live side by side
there (``make practice`` writes four probes into ``results/practice``). Each record is tied to its own
settings instead: the settings are read back from the record, and another command's settings are refused
unless ``force``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from ..core._errors import ConfigError
from ..io._atomic import ensure_writable
from ..io._checksums import Damaged
from ..io._damage import move_aside
from ..io._formats import read_json
from ..io._hashing import config_hash


def claim_record(
    path: str | Path,
    settings: dict,
    settings_of: Callable[[dict], dict | None],
    what: str,
    *,
    force: bool = False,
    name: str = "out",
) -> Path:
    """Check, before any work, that the JSON record ``path`` may be (re)written with ``settings``.

    A missing file, or one whose ``settings_of(record)`` equals ``settings`` (by ``config_hash``), is fine.
    ``settings_of`` returns None for a record of this kind that carries no settings (written before records
    did): it is taken over. It raises KeyError (or TypeError, ...) for a file that is no such record. A record
    of other settings, or a file that is no such record, raises ConfigError naming ``name`` and the user's
    path unless ``force``. Also checks the folder is writable (``io._atomic.ensure_writable``)."""
    path = Path(path)
    ensure_writable(path.parent, name)
    if force or not path.exists():
        return path
    damage = None
    try:
        try:
            record: Any = read_json(path)
        except Damaged as exc:  # a record edited after it was written, or another file put in its place
            damage, record = exc, json.loads(path.read_bytes())
        held = settings_of(record) if isinstance(record, dict) else False
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        held = False
    if held is False:
        raise ConfigError(name, str(path), f"exists and is not a {what} record; pass --force to overwrite it")
    if held is not None and config_hash(held) != config_hash(settings):
        raise ConfigError(
            name,
            str(path),
            f"holds a {what} of other settings ({config_hash(held)}, these {config_hash(settings)}); "
            "pass --force to overwrite it, or choose another file",
        )
    if damage is not None:  # a record of these settings that fails its checksum: kept aside, recomputed
        move_aside(damage, path.parent)
    return path


# -- differences to the baseline: Welch's test, Holm's correction ---------------------------------------------

ALPHA = 0.05  # family-wise error rate of the "better" / "worse" verdicts (Holm over every comparison shown)


@dataclass(frozen=True)
class Welch:
    """Welch's test of a difference of means: t, the Welch-Satterthwaite degrees of freedom and the two-sided
    p-value (t and p are nan when the standard error is 0)."""

    delta: float
    t: float
    df: float
    p: float


def welch(m1: float, s1: float, n1: int, m0: float, s0: float, n0: int) -> Welch:
    """Welch's t-test of mean m1 (std s1, ddof 1, n1 seeds) against m0 (s0, n0)."""
    v1, v0 = s1 * s1 / n1, s0 * s0 / n0
    if v1 + v0 == 0:
        return Welch(m1 - m0, math.nan, math.nan, math.nan)
    df = (v1 + v0) ** 2 / (v1 * v1 / (n1 - 1) + v0 * v0 / (n0 - 1))
    t = (m1 - m0) / math.sqrt(v1 + v0)
    return Welch(m1 - m0, t, df, float(2 * stats.t.sf(abs(t), df)))


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (family-wise error control over all of ``pvalues``): the k-th smallest
    of m becomes max over j <= k of min(1, (m - j + 1) p_(j)); nan stays nan and is not counted."""
    ranked = sorted((p, k) for k, p in pvalues.items() if not math.isnan(p))
    m, out, running = len(ranked), {k: math.nan for k in pvalues}, 0.0
    for i, (p, k) in enumerate(ranked):
        running = max(running, min(1.0, (m - i) * p))
        out[k] = running
    return out


def verdict(delta: float, p_adjusted: float, higher_is_better: bool, alpha: float = ALPHA) -> str:
    """'better' / 'worse' than the baseline when the Holm-adjusted p is below ``alpha``, else 'no clear
    difference'."""
    if math.isnan(p_adjusted) or p_adjusted >= alpha:
        return "no clear difference"
    return "better" if (delta > 0) == higher_is_better else "worse"


def seeds_to_resolve(delta: float, std: float, comparisons: int, alpha: float = ALPHA, power: float = 0.8) -> int:
    """Seeds per arm for a two-sided test at alpha / comparisons (Holm's first step, its strictest) to detect a
    true difference ``delta`` with probability ``power``, both arms with spread ``std``: the smallest n with
    P(|T| > t_crit) >= power, T noncentral t with 2n - 2 degrees of freedom and noncentrality
    |delta| / (std sqrt(2/n))."""
    level = alpha / comparisons
    for n in range(2, 10_000):
        df, nc = 2 * n - 2, abs(delta) / (std * math.sqrt(2.0 / n))
        crit = stats.t.isf(level / 2, df)
        if stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc) >= power:
            return n
    return 10_000
