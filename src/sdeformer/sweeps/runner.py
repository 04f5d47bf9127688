"""Run a sweep into a folder, resumably, and report its state.

``OUT/sweep.json`` holds the resolved spec; ``OUT/table/`` the Parquet parts (see ``table``). A run is recorded
once its task's part exists, so after a crash (even ``kill -9``) the same command skips every recorded run
and redoes only the rest: nothing is lost or duplicated and no partial part is ever read. Runs recorded with
``status=error`` are skipped too unless ``retry_failed``. A folder records one set of observables and times;
its axes may grow between calls (the new points run, the old ones are skipped).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from ..io.store import write_json
from . import table
from .executors import LocalExecutor
from .points import Run, expand
from .spec import Spec, parse_spec
from .task import Task, make_tasks

SPEC_FILE = "sweep.json"


def _prepare(out: Path, spec: Spec) -> None:
    """Check that ``out`` records what ``spec`` records; save the spec."""
    path = out / SPEC_FILE
    if path.exists():
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError("out", str(out), f"unreadable {SPEC_FILE} ({exc})") from None
        if saved.get("record") != spec.record:
            raise ConfigError(
                "out", str(out), "holds a sweep that records other observables or times; use another folder"
            )
    from .. import __version__

    write_json(path, {"spec": spec.to_dict(), "record": spec.record, "version": __version__})


@dataclass(frozen=True)
class Plan:
    """The runs of a spec, those still to run and their tasks."""

    runs: list[Run]
    todo: list[Run]
    tasks: list[Task]


def plan(spec: Spec, out: str | Path, retry_failed: bool = False) -> Plan:
    """Save the spec in ``out`` and list what is left to run: runs not recorded (and failed ones if asked)."""
    out = Path(out)
    runs = expand(spec)
    _prepare(out, spec)
    table.compact(out)
    recorded = table.run_status(table.read(out))
    todo = [r for r in runs if r.key not in recorded or (retry_failed and recorded[r.key] == "error")]
    return Plan(runs, todo, make_tasks(todo, spec.batch))


def run(
    spec: Spec,
    out: str | Path,
    executor: Any = None,
    *,
    retry_failed: bool = False,
    progress: Callable[[int], None] | None = None,
    planned: Plan | None = None,
) -> dict[str, Any]:
    """Run every run of ``spec`` not yet recorded in ``out`` (and the failed ones with ``retry_failed``).

    ``executor``: a ``LocalExecutor`` (default) or ``DaskExecutor``; ``progress(n)`` is called with the
    number of runs each finished task held; ``planned``: a ``plan`` made beforehand (e.g. to size a progress
    bar). Returns counts: runs, skipped, ran, done, error, tasks, wall_s.
    """
    start = time.perf_counter()
    p = planned or plan(spec, out, retry_failed)
    counts = {"done": 0, "error": 0}
    for summary in (executor or LocalExecutor()).map(p.tasks, out, spec.observables):
        counts["done"] += summary["done"]
        counts["error"] += summary["error"]
        if progress is not None:
            progress(summary["runs"])
    table.compact(out)
    return {
        "runs": len(p.runs),
        "skipped": len(p.runs) - len(p.todo),
        "ran": len(p.todo),
        **counts,
        "tasks": len(p.tasks),
        "wall_s": time.perf_counter() - start,
    }


def load_saved_spec(out: str | Path) -> Spec:
    """The spec saved in a sweep folder. Raises ConfigError if the folder holds no sweep."""
    path = Path(out) / SPEC_FILE
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise ConfigError("out", str(out), f"holds no sweep ({SPEC_FILE} missing)") from None
    except ValueError as exc:
        raise ConfigError("out", str(out), f"unreadable {SPEC_FILE} ({exc})") from None
    return parse_spec(saved["spec"])


def status(out: str | Path) -> dict[str, Any]:
    """Runs of the saved spec that are done, failed (status=error) or pending, and the first error messages."""
    spec = load_saved_spec(out)
    keys = [r.key for r in expand(spec)]
    df = table.read(out)
    recorded = table.run_status(df)
    done = sum(recorded.get(k) == "done" for k in keys)
    failed = sum(recorded.get(k) == "error" for k in keys)
    messages = sorted(set(df.loc[df["status"] == "error", "error"])) if not df.empty else []
    return {
        "name": spec.name,
        "runs": len(keys),
        "done": done,
        "failed": failed,
        "pending": len(keys) - done - failed,
        "parts": len(table.parts(out)),
        "errors": messages[:5],
    }
