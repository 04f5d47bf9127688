"""lost-in-the-middle (arXiv 2605.09213; borjanG/2026-lost-in-the-middle): the recency threshold t_crit of the
retrieval profile of causal ALiBi attention on the circle (BEYOND section 7; ``attention.retrieval``).

The peer's ``generate_u_shape_numerology_data.py`` writes t_crit(beta) at beta = 0.1 j, j = 1..48 (lambda = 1,
M = 8, n_max = 20) as ``beta t_crit`` rows (6 and 12 decimals) and prints it at beta = 1, 2, 3. Its time is the
paper's kernel unit (weights normalized over positions only); sdeformer's softmax attention is slower by
beta I_0(beta) (``retrieval.mode_rates``), so both are reported. Its lambda is the ALiBi bias per unit of
rescaled position, N times sdeformer's per-token ``alibi`` slope (``retrieval.paper_lambda``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import ive

from ..attention.retrieval import threshold
from ..core.errors import ConfigError
from . import cells

CURVE = [0.1 * j for j in range(1, 49)]  # the peer's threshold curve grid
FILE = "u_shape_numerology_lambda1_tcrit.dat"


def run(beta=(1.0, 2.0, 3.0), lam: float = 1.0, m: float = 8.0, n_max: int = 20, tokens: int = 64) -> dict:
    """t_crit at each ``beta`` in the paper's time and in sdeformer's softmax time, the peer's curve, and the
    ALiBi slope per token (sdeformer's ``alibi``) of the peer's ``lam`` at ``tokens`` positions."""
    betas = [float(b) for b in np.atleast_1d(beta)]
    rows = [
        {
            "beta": b,
            "t_crit_paper": threshold(b, lam, m, n_max, kernel="paper"),
            "t_crit_softmax": threshold(b, lam, m, n_max, kernel="softmax"),
            "time_ratio": b * float(ive(0, b)) * float(np.exp(b)),
        }
        for b in betas
    ]
    curve = [[b, threshold(b, lam, m, n_max, kernel="paper")] for b in CURVE]
    return {
        "peer": "litm",
        "settings": {"lam": lam, "M": m, "n_max": n_max, "tokens": tokens},
        "t_crit": rows,
        "curve": curve,
        "alibi_slope_per_token": lam / tokens,
    }


def write(result: dict, folder: Path) -> list[Path]:
    """The peer's ``u_shape_numerology_lambda1_tcrit.dat`` layout."""
    path = folder / FILE
    path.write_text("beta t_crit\n" + "".join(f"{b:.6f} {t:.12f}\n" for b, t in result["curve"]), encoding="ascii")
    return [path]


def compare(result: dict, path: Path) -> dict:
    """Cells (beta, t_crit per row) equal to the peer's printed digits (half a unit in the 12th decimal)."""
    lines = path.read_text(encoding="ascii").split("\n")
    if not lines or lines[0].split() != ["beta", "t_crit"]:
        raise ConfigError("compare", str(path), "the peer's 'beta t_crit' table")
    theirs = [[float(v) for v in line.split()] for line in lines[1:] if line.strip()]
    return cells(result["curve"], theirs, 5e-13 + 1e-15)
