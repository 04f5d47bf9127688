"""The settings several commands share, declared once as ``params.Param``s (torch-free: ``--help`` stays fast):
the output folder, ``--force``, ``--threads`` and the job options (``--executor``, ``--workers``, ``--scheduler``),
the executor those make (``executor``) and the commands' terminal table (``table``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...params import Param

FORCE_HELP = "write into OUT even if it holds another config's run"
EXECUTOR_HELP = "local (this process) or dask (the check's jobs on Dask workers)"


def out(default: Path | None, doc: str) -> Param:
    """``--out``: the command's output folder (None: none written)."""
    return Param("out", Path, default, doc=doc)


def force(doc: str = FORCE_HELP) -> Param:
    """``--force``: write into a folder tied to other settings."""
    return Param("force", bool, False, doc=doc)


def threads(doc: str = "torch CPU threads") -> Param:
    return Param("threads", int, 1, doc=doc)


def jobs(executor_help: str = EXECUTOR_HELP) -> tuple[Param, ...]:
    """--executor, --workers and --scheduler of a command that runs jobs (``sweeps``)."""
    return (
        Param("executor", str, "local", doc=executor_help),
        Param("workers", int, 2, doc="worker processes of the local Dask cluster (one thread each)"),
        Param("scheduler", str, None,
              doc="address of a running Dask scheduler (tcp://host:port), with --executor dask"),
    )  # fmt: skip


def executor(s: dict[str, Any]) -> Any:
    """The sweep executor of the job settings in ``s``: ConfigError for a bad choice; the local one leaves torch's
    threads to the jobs (each sets its own)."""
    from ...sweeps import LocalExecutor, make_executor

    ex = make_executor(s["executor"], s["workers"], s["scheduler"])
    if isinstance(ex, LocalExecutor):
        ex.threads = None
    return ex


ARCHITECTURE = ("norm", "alibi", "mask", "causal", "cross")  # BEYOND sections 6-9


def field_help(name: str) -> str:
    """The ``--help`` line of config field ``name``: its docs line, the registered names where it names a part (a
    plugin's too, for noise and attention) and its default in brackets (none where unset)."""
    from ...params import FIELDS
    from ...registry import ATTENTIONS, NOISES, NORMS, SOLVERS

    parts = {"attention": ATTENTIONS, "noise": NOISES, "norm": NORMS, "solver": SOLVERS}
    text, default = FIELDS[name].doc, FIELDS[name].default
    if name in parts:
        text += f": {parts[name].choices()}" + (" or a plugin's" if name in ("attention", "noise") else "")
    if default == "" or default is None:
        return text
    shown = (
        ("on" if default else "off")
        if isinstance(default, bool)
        else f"{default:g}"
        if isinstance(default, float)
        else default
    )
    return f"{text} [{shown}]"


def fields(names: Any = None) -> tuple[Param, ...]:
    """Config fields (``params.FIELDS``; all by default) as settings, unset by default (the config's value): a
    value given overrides the config."""
    from dataclasses import replace

    from ...params import FIELDS

    return tuple(replace(FIELDS[n], default=None, doc=field_help(n)) for n in (names or FIELDS))


def table(title: str | None, columns: tuple[str, ...], rows: list[list[str]], left: int = 0) -> None:
    """A rich table on stdout: ``columns`` right-justified but the first ``left``, one row per ``rows``."""
    from rich.console import Console
    from rich.table import Table

    out = Table(title=title)
    for i, col in enumerate(columns):
        out.add_column(col) if i < left else out.add_column(col, justify="right")
    for row in rows:
        out.add_row(*row)
    Console().print(out)
