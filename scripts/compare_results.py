"""Compare every array and number of two result folders (npz arrays, csv text, numbers in json), by path.

    python scripts/compare_results.py OLD_DIR NEW_DIR

Prints one line per difference (with max |difference| for arrays) or missing file, then a count. Used to show
that a refactor leaves ``sdeformer reproduce ...`` outputs unchanged (timings, versions and paths are skipped).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

SKIPPED = ("seconds", "wall", "time_s", "version", "elapsed", "created", "_s", "path", "out")


def leaves(x: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) for the leaves of a JSON document; lists of numbers become arrays."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, f"{prefix}.{k}")
    elif isinstance(x, list) and x and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x):
        yield prefix, np.array(x, float)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{prefix}[{i}]")
    else:
        yield prefix, x


def pairs(f: Path, g: Path) -> list[tuple[str, Any, Any]]:
    """The comparable (key, old, new) values of two files of one kind."""
    if f.suffix == ".npz":
        x, y = np.load(f, allow_pickle=False), np.load(g, allow_pickle=False)
        return [(k, x[k], y[k] if k in y.files else None) for k in x.files]
    if f.suffix == ".csv":
        return [("csv", f.read_text(), g.read_text())]
    try:
        old, new = dict(leaves(json.loads(f.read_text()))), dict(leaves(json.loads(g.read_text())))
    except ValueError:
        return []
    return [(k, v, new.get(k)) for k, v in old.items() if not any(s in k for s in SKIPPED)]


def equal(u: Any, v: Any) -> bool:
    if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
        return (
            isinstance(u, np.ndarray)
            and isinstance(v, np.ndarray)
            and np.array_equal(u, v, equal_nan=u.dtype.kind == "f")
        )
    if isinstance(u, float) and isinstance(v, float) and u != u and v != v:
        return True  # nan (a value the run could not identify) on both sides
    return u == v


def main(a: Path, b: Path) -> int:
    same = diff = missing = 0
    for f in sorted(a.rglob("*")):
        if f.suffix not in (".npz", ".csv", ".json") or "damaged" in f.parts:
            continue
        g = b / f.relative_to(a)
        if not g.exists():
            print("MISSING", f.relative_to(a))
            missing += 1
            continue
        for key, u, v in pairs(f, g):
            if equal(u, v):
                same += 1
                continue
            diff += 1
            numeric = isinstance(u, np.ndarray) and isinstance(v, np.ndarray) and u.shape == v.shape
            detail = f"max|d|={np.nanmax(np.abs(u - v)):.3g}" if numeric and u.dtype.kind in "fiu" else f"{u} vs {v}"
            print(f"DIFF {f.relative_to(a)}:{key} {detail[:120]}")
    print(f"same {same}, different {diff}, missing {missing}")
    return 1 if diff or missing else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
