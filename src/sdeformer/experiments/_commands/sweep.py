"""The commands ``sweep status DIR`` (done, failed and pending runs of a sweep folder) and ``sweep plot DIR`` (a
heat map or curves from its table); ``sweep run`` is the command line's own (``sdeformer.sweeps``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param

STATUS = (Param("out", Path, ..., doc="sweep folder"),)
PLOT = (
    Param("folder", Path, ..., doc="sweep folder"),
    Param("x", str, ..., doc="config field (or t) on the x axis"),
    Param("y", str, ..., doc="config field (heat map) or observable (curves)"),
    Param("color", str, None, doc="heat map: observable; curves: field, one curve each"),
    Param("time", float, None, doc="time t of the rows (default: each run's last)"),
    Param("below", float, None, doc="plot P(observable < BELOW) instead of the mean"),
    Param("where", list[str], [], doc="FIELD=VALUE filter (repeatable)"),
    Param("out", Path, None, doc="PNG path (default FOLDER/plots/<x>-<y>-<color>.png)"),
)


def status(s: dict[str, Any]) -> dict:
    from ...sweeps import status as read_status

    return read_status(s["out"])


def show_status(result: dict, _s: dict[str, Any]) -> None:
    print(
        f"{result['name']}: {result['runs']} runs: done {result['done']}, failed {result['failed']}, "
        f"pending {result['pending']} ({result['parts']} parts)"
    )
    for message in result["errors"]:
        print(f"  error: {message}")
    for part in result["damaged"]:
        print(f"  damaged (left out; the next `sweep run` moves it aside and reruns it): {part}")
    for path in result["moved_aside"]:
        print(f"  damaged, moved aside (kept for inspection; its runs were rerun or are pending): {path}")


def _where(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError("where", item, "FIELD=VALUE")
        out[name.strip()] = value.strip()
    return out


def plot(s: dict[str, Any]) -> dict:
    from ...plots._sweep import plot as draw
    from ...sweeps import read
    from ...sweeps._runner import load_saved_spec

    folder, x, y, color = s["folder"], s["x"], s["y"], s["color"]
    spec = load_saved_spec(folder)
    path = s["out"] or folder / "plots" / f"{'-'.join(p for p in (x, y, color) if p)}.png"
    where = _where(s["where"])
    return draw(read(folder), path, x, y, color, time=s["time"], below=s["below"], where=where, title=spec.name)


def show_plot(result: dict, _s: dict[str, Any]) -> None:
    print(f"{result['kind']} of {result['runs']} runs -> {result['path']}")
