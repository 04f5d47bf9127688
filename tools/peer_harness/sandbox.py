"""Run inside ``unshare --user --map-root-user --mount --net`` (``contain.py``): ``python sandbox.py SCRATCH -- COMMAND
...`` bind-mounts SCRATCH on itself (writable), remounts every other mount of this mount namespace read-only
(their nosuid, nodev, noexec and atime flags kept, as a user namespace requires; ``/proc`` and ``/sys`` left as
they are), enters SCRATCH and runs COMMAND in place of itself. ``python sandbox.py --probe DIR`` confines to DIR
and exits 0 when DIR is writable and its parent is not. Standard library only.
"""

from __future__ import annotations

import ctypes
import os
import sys

MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC = 1, 32, 4096, 16384
KEPT = 2 | 4 | 8 | 1024 | 2048 | 4096  # nosuid, nodev, noexec, noatime, nodiratime, relatime (= the ST_ flags)
LEFT = ("/proc", "/sys")  # pseudo file systems: their writable files are the kernel's, not the user's


def _mount(source: str, target: str, flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), None, flags, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), target)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        return [line.split()[4].encode().decode("unicode_escape") for line in fh]


def confine(scratch: str) -> None:
    """Every mount read-only but ``scratch`` (see the module docstring); OSError if one cannot be."""
    scratch = os.path.realpath(scratch)
    _mount(scratch, scratch, MS_BIND | MS_REC)
    for point in _mount_points():
        inside = point == scratch or point.startswith(scratch + "/")
        if inside or any(point == p or point.startswith(p + "/") for p in LEFT) or not os.path.isdir(point):
            continue
        flags = os.statvfs(point).f_flag & KEPT
        _mount("none", point, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    os.chdir(scratch)  # the folder as mounted now (the old working directory is the read-only one beneath)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--probe"]:  # --probe DIR: DIR writable, its parent not
        confine(argv[1])
        open("probe", "w").close()
        try:
            open(os.path.join(os.path.dirname(os.path.realpath(argv[1])), "probe-outside"), "w").close()
        except OSError:
            return 0
        return 1
    scratch, dashes, *command = argv
    if dashes != "--" or not command:
        print("usage: sandbox.py SCRATCH -- COMMAND ...", file=sys.stderr)
        return 2
    confine(scratch)
    os.execv(command[0], command)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
