"""How a peer's script runs (docs/peers.md, "Running the peer's own script"): third-party code, so

- its files are checked first against the sha256 of the snapshot recorded in docs/peers.md ("Snapshot hashes"):
  every top-level ``.py`` / ``.ipynb`` file of DIR (what is copied and can be imported) must be one of the
  snapshot's, unchanged, unless the caller says ``verified=False``;
- each run is announced on stderr (what runs, from where, how far it is contained: ``contain.describe``);
- it runs in a scratch copy of those files, removed afterwards (the user's DIR is never written), with HOME and
  TMPDIR in it; where user namespaces work, every other mount is read-only to it, it has no network and its
  processes live in a pid namespace of their own (``contain``), elsewhere writes to DIR, the current folder and the
  home's top level are detected and refused;
- it runs as a subprocess in its own session and process group (``start_new_session``), under a time limit; at its
  end, on the limit, on Ctrl-C or on any error, the whole group is killed (SIGKILL), so no child it started
  outlives the command (one that left the group with ``setsid`` only where the pid namespace holds it). The script
  can read whatever the user can (what is and is not contained: ``contain``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from sdeformer.core._errors import ConfigError

from . import contain
from .jobs import Job

SHIM = Path(__file__).with_name("shim.py")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "peers.md"
ROW = re.compile(r"^\| (\w+) \| ([\w.-]+) \| ([0-9a-f]{64}) \|$")


def snapshot_hashes(docs: Path = DOCS) -> dict[str, dict[str, str]]:
    """{peer: {file: sha256}} from the table "Snapshot hashes" of docs/peers.md."""
    table: dict[str, dict[str, str]] = {}
    for line in docs.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line.strip())
        if m:
            table.setdefault(m[1], {})[m[2]] = m[3]
    return table


def copied(folder: Path) -> list[Path]:
    """The files a run copies from ``folder``: its top-level .py and .ipynb files."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".py", ".ipynb"))


def verify(name: str, folder: Path) -> None:
    """ConfigError naming DIR unless every file ``copied`` from ``folder`` is the snapshot's file of that name."""
    recorded = snapshot_hashes().get(name, {})
    for path in copied(folder):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if recorded.get(path.name) != digest:
            why = "no such file in it" if path.name not in recorded else f"sha256 {digest[:12]}..."
            raise ConfigError(
                "DIR",
                str(folder),
                f"{path.name} ({why}) does not match the snapshot of {name} recorded in docs/peers.md; refusing to run"
                " it (--unverified to run code you have checked yourself)",
            )


def announce(folder: Path, job: Job, timeout: float | None) -> None:
    limit = f"time limit {timeout:g} s" if timeout else "no time limit"
    print(
        f"run_peer: running third-party code: {folder / Path(job.spec['script']).name} (the peer's, not sdeformer's),"
        f" {contain.describe()}, {limit}",
        file=sys.stderr,
        flush=True,
    )


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # the session's group: the script and every child still in it


def run_script(folder: Path, job: Job, scratch: Path, timeout: float | None = None) -> float:
    """Run ``job``'s script from a copy of ``folder``'s top-level .py and .ipynb files in ``scratch``, in its own
    process group, killed entirely when it ends or after ``timeout`` seconds; its wall seconds. ConfigError with
    its exit code and the last line of its stderr when it fails, naming ``timeout`` when it ran past it."""
    for path in copied(folder):
        shutil.copyfile(path, scratch / path.name)
    (scratch / "shim.json").write_text(json.dumps(job.spec))
    env = {**os.environ, "MPLBACKEND": "Agg", **contain.environment(scratch)}
    watch = None if contain.available() else contain.Watch([folder, Path.cwd(), Path.home()])
    start = time.perf_counter()
    with open(scratch / "stdout.txt", "wb") as out, open(scratch / "stderr.txt", "wb") as err:
        command = contain.command([sys.executable, str(SHIM), "shim.json"], scratch)
        proc = subprocess.Popen(command, cwd=scratch, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:  # normal end, time limit, Ctrl-C: the whole group goes
            _kill_group(proc.pid)
            proc.wait()
    outside = watch.changes() if watch is not None else []
    if outside:
        shown = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
        raise ConfigError("DIR", str(folder), f"{job.spec['script']} wrote outside its scratch copy: {shown}")
    if code is None:
        raise ConfigError("timeout", timeout, f"{job.spec['script']} ran past it; stopped, every child with it")
    seconds = time.perf_counter() - start
    if code != 0:
        lines = [x for x in (scratch / "stderr.txt").read_text(errors="replace").splitlines() if x.strip()]
        last = lines[-1].strip() if lines else "(nothing on stderr)"
        raise ConfigError("DIR", str(folder), f"{job.spec['script']} exited with code {code}: {last}")
    return seconds
