"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Each command module registers its commands on the shared ``app`` when imported here.
"""

from __future__ import annotations

from . import (
    bench,  # noqa: F401  (registers bench)
    checks,  # noqa: F401  (registers rates, sync-check, lyapunov, phase)
    model,  # noqa: F401  (registers kernel, simulate)
    practice,  # noqa: F401  (registers train, probe, report-practice)
    reproduce,  # noqa: F401  (registers reproduce)
    sweep,  # noqa: F401  (registers sweep: run (default), status, plot)
)
from .common import app


def main() -> None:
    app()
