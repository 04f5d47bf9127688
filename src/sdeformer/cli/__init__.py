"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Every command but ``reproduce`` and ``sweep run`` (``cli._reproduce``, ``cli._sweep``) is a registered experiment
(``experiments.EXPERIMENTS``): a report experiment (``sdeformer ode``) or one with a command of its own
(``sdeformer train``, ``rates``, ``peer``, ...); ``cli._generate`` makes each from its entry, one option per
declared setting, listed by its doc and built when run, so ``sdeformer --help`` imports no torch, numpy or
matplotlib. ``show_all_defaults`` makes every ``--help`` show every option's default, as ``[default: X]`` at the
end of its help text (kept on one line: never broken inside the brackets).
"""

from __future__ import annotations

from . import _reproduce, _sweep
from ._common import app
from ._generate import experiment_commands, show_all_defaults

__all__ = ["app", "main", "show_all_defaults"]

experiment_commands()  # sdeformer NAME for each registered experiment
show_all_defaults()  # at import: ``sdeformer.cli.app`` (tests, ``python -m``) shows them too


def main() -> None:
    """The ``sdeformer`` entry point: the process-wide settings of the application (never of a library call or
    an import) are made here: the heap keeps freed blocks (``core._memory``), figures draw off screen."""
    import os

    from ..core._memory import keep_freed_memory

    keep_freed_memory()
    os.environ.setdefault("MPLBACKEND", "Agg")  # read by matplotlib when (and if) a command imports it
    app()
