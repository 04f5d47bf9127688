"""Run a sweep into a folder, resumably, and report its state.

``OUT/sweep.json`` holds the resolved spec; ``OUT/table/`` the Parquet parts (see ``table``). A run is recorded
once its task's part exists, so after a crash (even ``kill -9``) the same command skips every recorded run
and redoes only the rest: nothing is lost or duplicated and no partial or damaged part is ever read (a damaged
one is moved into ``OUT/damaged/`` and its runs rerun). Runs recorded with ``status=error`` are skipped too
unless ``retry_failed``.

The folder is claimed as the other commands claim theirs: the same spec resumes; another spec is refused,
naming what differs, unless ``force`` (its runs are added: the recorded ones are kept and skipped), and never
when it records other observables or times (one table, one record); a non-empty folder that holds no sweep is
refused unless ``force``. One writer at a time (``lock.writer``); the spec's size and memory are checked
(``limits``) before anything is expanded or written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core._errors import ConfigError
from ..io._checksums import Damaged
from ..io._damage import damaged_files, recover
from ..io._formats import read_json, write_json
from ..io._hashing import differences
from ..io._inputs import input_digests
from . import _limits as limits, _table as table
from ._executors import LocalExecutor
from ._lock import LOCK_FILE, writer
from ._points import Run, expand_points, make_run
from ._provenance import SPEC_FILE, claim_hash, folder_claims
from ._spec import Spec, parse_spec
from ._task import Task, make_tasks


def _claim(spec: Spec) -> dict[str, Any]:
    """What ties a folder to a spec: everything but its name and batch size (they change no run's numbers); the
    seeds as a list (``seeds: 8`` and ``[0, ..., 7]`` are one spec)."""
    claim = {k: v for k, v in spec.to_dict().items() if k not in ("name", "batch")}
    inputs = input_digests(claim)  # its plugins' and token files' content: an edited one is another spec
    return {**claim, "seeds": list(spec.seeds), **({"inputs": inputs} if inputs else {})}


def _prepare(out: Path, spec: Spec, force: bool) -> None:
    """Claim ``out`` for ``spec`` (see the module docstring) and save the spec."""
    path = out / SPEC_FILE
    if path.exists() and force:
        recover(path, read_json, out)  # a damaged spec file is moved aside and rewritten
    claims, unstamped = {claim_hash(_claim(spec))}, False
    if path.exists():
        held = folder_claims(out)  # the specs it was claimed for; None: written before parts were stamped
        unstamped = held[1] if held else bool(table.parts(out))
        saved = load_saved_spec(out)
        changed = held is not None and not claims <= held[0] and _claim(saved) == _claim(spec)
        if changed and not force:  # the same spec, but a plugin or token file it reads holds other bytes now
            raise ConfigError(
                "out", str(out), "holds this sweep's runs made from plugin or x0 files whose content has changed"
                " since; pass --force to recompute them there, or choose another folder",
            )  # fmt: skip
        claims |= held[0] if held and not changed else set()  # --force after a change: the old parts are foreign
        if saved.record != spec.record:
            raise ConfigError(
                "out", str(out), "holds a sweep that records other observables or times; use another folder"
            )
        if _claim(saved) != _claim(spec) and not force:
            raise ConfigError(
                "out",
                str(out),
                f"holds a sweep of another spec ({differences(_claim(saved), _claim(spec))}); "
                "pass --force to add this spec's runs to it, or choose another folder",
            )
    elif not force and any(p.name != LOCK_FILE for p in out.iterdir()):
        raise ConfigError("out", str(out), "is not empty and holds no sweep; pass --force to write there")
    from .. import __version__

    saved = {"spec": spec.to_dict(), "record": spec.record, "version": __version__, "claims": sorted(claims)}
    write_json(path, {**saved, "unstamped": unstamped}, checksum=True)


def check_fits(spec: Spec) -> None:
    """ConfigError, before any folder is made, when the spec's largest task cannot fit in memory (``limits``)."""
    runs = limits.count_runs(spec.groups, spec.seeds)
    limits.check_memory(spec.base, spec.groups, runs, spec.batch, spec.times)
    limits.check_device(spec.device)


@dataclass(frozen=True)
class Plan:
    """The number of runs of a spec, those still to run and their tasks."""

    total: int
    todo: list[Run]
    tasks: list[Task]


def plan(spec: Spec, out: str | Path, retry_failed: bool = False, force: bool = False) -> Plan:
    """Check the spec fits, claim ``out`` for it, move damaged parts aside and list what is left to run: runs
    not recorded (and failed ones if asked). The caller holds ``lock.writer(out)``. A recorded run costs a key
    and a dict look-up: only the runs to do get their config and seed (docs/specs.md, "Resuming large sweeps")."""
    out = Path(out)
    check_fits(spec)
    points = expand_points(spec)  # every point valid before the folder is claimed
    _prepare(out, spec, force)
    done = table.recorded(out)
    skip = {"done"} if retry_failed else {"done", "error"}
    todo = [make_run(h, r, c, k) for h, c, k in points for r in spec.seeds if done.get((h, r)) not in skip]
    return Plan(
        len(points) * len(spec.seeds), todo, make_tasks(todo, spec.batch, spec.device, claim_hash(_claim(spec)))
    )


def run(
    spec: Spec,
    out: str | Path,
    executor: Any = None,
    *,
    retry_failed: bool = False,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    planned: Plan | None = None,
) -> dict[str, Any]:
    """Run every run of ``spec`` not yet recorded in ``out`` (and the failed ones with ``retry_failed``),
    holding the folder's writer lock (a second writer is refused: ConfigError).

    ``executor``: a ``LocalExecutor`` (default) or ``DaskExecutor``; ``force``: claim a folder of another spec
    or a non-empty one (see the module docstring); ``progress(n)`` is called with the number of runs each
    finished task held; ``planned``: a ``plan`` made beforehand under the same lock (e.g. to size a progress
    bar). Returns counts: runs, skipped, ran, done, error, tasks, wall_s.
    """
    start = time.perf_counter()
    check_fits(spec)
    with writer(out):
        p = planned or plan(spec, out, retry_failed, force)
        counts = {"done": 0, "error": 0}
        for summary in (executor or LocalExecutor()).map(p.tasks, out, spec.observables):
            counts["done"] += summary["done"]
            counts["error"] += summary["error"]
            if progress is not None:
                progress(summary["runs"])
        if p.tasks:  # nothing written: nothing to compact
            table.compact(out)
    return {
        "runs": p.total,
        "skipped": p.total - len(p.todo),
        "ran": len(p.todo),
        **counts,
        "tasks": len(p.tasks),
        "wall_s": time.perf_counter() - start,
    }


def load_saved_spec(out: str | Path) -> Spec:
    """The spec saved in a sweep folder, verified (its sha256). Raises ConfigError, one line, if the folder holds no
    sweep or a damaged one (an edited or unreadable ``sweep.json``: ``run --force SPEC`` moves it aside and
    rewrites it)."""
    path = Path(out) / SPEC_FILE
    try:
        saved = read_json(path)
    except Damaged as damage:
        raise ConfigError(
            "out", str(out), f"{SPEC_FILE} is damaged ({damage.reason}); `sdeformer sweep run --force SPEC` rewrites it"
        ) from None
    except OSError:
        raise ConfigError("out", str(out), f"holds no sweep ({SPEC_FILE} missing)") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("spec"), dict):
        raise ConfigError(
            "out", str(out), f"{SPEC_FILE} holds no spec; rerun `sdeformer sweep SPEC --out` to rewrite it"
        )
    try:
        return parse_spec(saved["spec"], max_runs=None)  # accepted when it ran (perhaps with --max-runs)
    except ConfigError as exc:
        raise ConfigError("out", str(out), f"{SPEC_FILE} holds an invalid spec ({exc})") from None


def status(out: str | Path) -> dict[str, Any]:
    """Runs of the saved spec that are done, failed (status=error) or pending, the first error messages, the
    damaged parts found now (left out: their runs are pending) and those moved aside earlier (``damaged/``)."""
    spec = load_saved_spec(out)
    keys = [(h, r) for h, _, _ in expand_points(spec) for r in spec.seeds]
    df, damaged = table.load(out)
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
        "parts": len(table.parts(out)) - len(damaged),
        "errors": messages[:5],
        "damaged": [f"{d.path} ({d.reason})" for d in damaged],
        "moved_aside": [str(p) for p in damaged_files(out)],
    }
