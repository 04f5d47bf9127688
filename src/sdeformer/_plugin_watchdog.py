"""A time limit on every call into a plugin's part, at no cost per call (docs/extending.md, "What sdeformer checks
at run time").

While a plugin's part is alive (``hold``, at its build by the registry; released when the part is collected), the
main thread gets a SIGALRM every ``tick`` seconds (a tenth of ``plugins.TIMEOUT_S``, at most 1 s). The handler
looks at the stack it interrupted for the innermost call sdeformer made into a registered plugin part: a frame of
the part's own code (``plugins._part``) whose caller is not the plugin's code. The same call, that is the same
frame object, seen running for longer than ``TIMEOUT_S`` is stopped: ``PluginStopped`` is raised inside it, naming
the plugin, the part and the call (the command line prints it as one line, exit 2). No wrapper is put on the
part's methods, so the time loop's calls run as they are; a call is stopped between ``TIMEOUT_S`` and
``TIMEOUT_S`` + one tick after it began.

Not armed (the calls then run without a limit): outside the main thread (Dask's and the thread executors' workers),
while another interval timer runs or SIGALRM has a handler of its own (neither is ever replaced), in a child that
``fork`` made (interval timers are not inherited). Not stopped: code that never returns to Python's interpreter
loop (a C extension's loop), a plugin that blocks or handles SIGALRM itself, or swallows BaseException.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

_held = 0  # parts alive that hold the watchdog
_armed: tuple[int, float] | None = None  # (process id, tick) while this process's timer runs
_seen: list[Any] = [None, 0.0]  # [the entry frame the last tick saw, the monotonic time it was first seen]
_owners: dict[str, str | None] = {}  # a code file -> the plugin that owns it (``plugins._owner``), cached


def hold(part: Any) -> None:
    """Keep the watchdog armed while ``part`` (a plugin's part) is alive; nothing for a part without weak
    references (``__slots__``) or outside the main thread."""
    global _held
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        weakref.finalize(part, _release)
    except TypeError:
        return
    _held += 1
    if _held == 1:
        _arm()


def _release() -> None:
    global _held
    _held = max(0, _held - 1)
    if _held == 0:
        _disarm()


def _free() -> bool:
    """True when SIGALRM and the real-time interval timer are nobody else's (a handler of ours left by a release
    outside the main thread, with its timer stopped, is free)."""
    return signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, _tick) and not any(
        signal.getitimer(signal.ITIMER_REAL)
    )


def _arm() -> None:
    global _armed
    from .plugins import TIMEOUT_S

    if _armed is not None and _armed[0] == os.getpid():
        return
    if threading.current_thread() is not threading.main_thread() or not _free():
        return
    tick = min(1.0, TIMEOUT_S / 10)
    _seen[:] = [None, 0.0]
    signal.signal(signal.SIGALRM, _tick)
    signal.setitimer(signal.ITIMER_REAL, tick, tick)
    _armed = (os.getpid(), tick)


def _disarm() -> None:
    """Stop the timer; in any thread, since a part's last reference may go in a worker thread's garbage
    collection (a timer left running there outlived the part, and ended the process once the interpreter's exit
    restored SIGALRM's default action). Only the main thread may put the default handler back."""
    global _armed
    if _armed is None or _armed[0] != os.getpid():
        _armed = None
        return
    _armed = None
    _seen[:] = [None, 0.0]
    if signal.getsignal(signal.SIGALRM) is _tick:  # a handler someone set since is theirs, with their timer
        signal.setitimer(signal.ITIMER_REAL, 0)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, signal.SIG_DFL)


@atexit.register
def _stop_at_exit() -> None:
    """No tick after the interpreter's exit has restored SIGALRM's default action (which ends the process)."""
    if signal.getsignal(signal.SIGALRM) is _tick:
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The watchdog stopped for the block (``plugins.limited`` runs its own one-shot limit), then re-armed."""
    was = _armed is not None and _armed[0] == os.getpid()
    if was:
        _disarm()
    try:
        yield
    finally:
        if was and _held:
            _arm()


def _tick(_signum: int, frame: Any) -> None:
    """SIGALRM: stop the plugin call that ``frame``'s stack is in if the same call has run past the limit."""
    from .plugins import TIMEOUT_S, PluginStopped

    entry = _entry(frame)
    now = time.monotonic()
    if entry is None or entry[0] is not _seen[0]:
        _seen[:] = [entry[0] if entry else None, now]
        return
    if now - _seen[1] <= TIMEOUT_S:
        return
    found, plugin, part = entry
    _seen[:] = [None, now]
    from .core._errors import ConfigError

    call = found.f_code.co_name
    why = f"{part}{call}() ran past the plugins' time limit of {TIMEOUT_S:g} s for one call"
    raise PluginStopped(str(ConfigError("plugin", plugin, why)), ConfigError("plugin", plugin, why))


def _entry(frame: Any) -> tuple[Any, str, str] | None:
    """(frame, plugin, ``"KIND 'NAME' "``) of the innermost call from outside a plugin into a plugin part's code."""
    from .plugins import _part

    while frame is not None:
        plugin = _owner(frame.f_code.co_filename)
        if plugin is not None and (frame.f_back is None or _owner(frame.f_back.f_code.co_filename) != plugin):
            part = _part(frame)
            if part:
                return frame, plugin, part
        frame = frame.f_back
    return None


def _owner(filename: str) -> str | None:
    from .plugins import _owner as owner

    if filename not in _owners:
        _owners[filename] = owner(filename) if filename and not filename.startswith("<") else None
    return _owners[filename]
