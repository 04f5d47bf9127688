"""What the field's experiments share: a result cached in its folder for its settings, and a fitted slope."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .._results import Result, read_cached_json, write_cached_json

R = TypeVar("R", bound=Result)
Z95 = 1.959963984540054


def cached(path: Path, settings: Any, kind: type[R], compute: Callable[[], R]) -> R:
    """The result at ``path`` when it was written for these ``settings`` (a dataclass), else ``compute()``,
    written there."""
    key = dataclasses.asdict(settings)
    held = read_cached_json(path, key)
    if held is not None:
        held.pop("config_hash")
        return kind(**held)
    result = compute()
    write_cached_json(path, key, result)
    return result


def log_slope(x: list[float], y: list[float]) -> tuple[float, float, float]:
    """The least-squares slope of log y on log x and its 95 % interval (from the residuals; t quantile)."""
    from scipy.stats import t as student

    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    (slope, icpt), cov = np.polyfit(lx, ly, 1, cov="unscaled")
    resid = ly - (slope * lx + icpt)
    dof = len(lx) - 2
    se = math.sqrt(float(resid @ resid) / dof * cov[0, 0])
    half = float(student.ppf(0.975, dof)) * se
    return float(slope), float(slope - half), float(slope + half)
