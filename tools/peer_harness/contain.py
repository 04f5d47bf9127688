"""How far a peer's script is contained (docs/peers.md, "What is contained"), without root:

- **Contained** where unprivileged user namespaces work (``available``): the script runs under ``unshare --user
  --map-root-user --mount --net --pid --fork --kill-child --mount-proc`` through ``sandbox.py``, which makes every
  mount of the machine read-only in the script's own mount namespace except its scratch copy (bind-mounted
  writable; ``/proc`` and ``/sys`` left as they are), then runs it: a write anywhere else fails with "Read-only
  file system", it has no network (a new network namespace holds only a loopback interface, down), and every
  process it starts lives in its own pid namespace, which the kernel ends whole when the script's first process
  (killed with the harness's process group, or by ``--kill-child`` when ``unshare`` goes) ends: a child that left
  the process group (``setsid``) ends with it too.
- **Not contained** elsewhere: the script runs as the user; ``Watch`` records the entries (name, size, mtime) of
  DIR, the current folder and the user's home before the run and names, after it, every one that changed or
  appeared: the harness refuses the run's result in one line (``ConfigError`` naming DIR). Detection only, and
  only of those folders' top level.

In both cases HOME, TMPDIR and the caches the peers' libraries write (XDG_CACHE_HOME, MPLCONFIGDIR,
TORCHINDUCTOR_CACHE_DIR) point into the scratch copy (``environment``). Never contained: what the script reads
(it can read whatever the user can) and its CPU and memory use (only its time: ``process.run_script``); without
the namespaces, a child that leaves the process group itself (``setsid``) outlives it.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SANDBOX = Path(__file__).with_name("sandbox.py")
UNSHARE = ("--user", "--map-root-user", "--mount", "--net", "--pid", "--fork", "--kill-child", "--mount-proc")


@functools.cache
def available() -> bool:
    """True when ``unshare`` can make the namespaces and ``sandbox.py`` can make the mounts read-only here."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        probe = [unshare, *UNSHARE, sys.executable, str(SANDBOX), "--probe", tmp]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0 and not (Path(tmp).parent / "probe-outside").exists()


def command(argv: list[str], scratch: Path) -> list[str]:
    """``argv`` run contained in ``scratch`` when ``available``, else as it is."""
    if not available():
        return argv
    return [shutil.which("unshare") or "unshare", *UNSHARE, sys.executable, str(SANDBOX), str(scratch), "--", *argv]


def environment(scratch: Path) -> dict[str, str]:
    """HOME, TMPDIR and the libraries' caches in ``scratch`` (created)."""
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    cache = str(home / ".cache")
    return {
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "XDG_CACHE_HOME": cache,
        "MPLCONFIGDIR": str(home / ".config" / "matplotlib"),
        "TORCHINDUCTOR_CACHE_DIR": cache,
    }


def describe() -> str:
    """What the announcement says of the containment."""
    if available():
        return (
            "contained: it can write only in its scratch copy, no network, its processes end with it (user, mount, "
            "network and pid namespaces)"
        )
    return (
        "NOT contained (no user namespaces here): it runs with your permissions; writes to DIR, the current folder "
        "and your home's top level are detected after the run"
    )


class Watch:
    """The entries of some folders (name -> (size, mtime)), to name what changed in them during a run."""

    def __init__(self, folders: list[Path]):
        self.folders = [f.resolve() for f in folders if f.is_dir()]
        self.before = {f: _entries(f) for f in self.folders}

    def changes(self) -> list[str]:
        """The paths (in the watched folders) that appeared, changed or went since the snapshot."""
        found = []
        for folder, before in self.before.items():
            after = _entries(folder)
            found += [str(folder / n) for n in sorted(set(before) | set(after)) if before.get(n) != after.get(n)]
        return found


def _entries(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in folder.iterdir():
        try:
            st = path.lstat()
        except OSError:
            continue
        out[path.name] = (st.st_size, st.st_mtime_ns)
    return out
