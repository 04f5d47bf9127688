"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Each command module registers its commands on the shared ``app`` when imported here.
"""

from __future__ import annotations

from .common import app
from . import foundation  # noqa: F401  (registers kernel, simulate, reproduce)
from . import theory  # noqa: F401  (registers rates, sync-check, lyapunov, phase)
from . import practice  # noqa: F401  (registers train, probe, report-practice)
from . import perf  # noqa: F401  (registers bench)


def main() -> None:
    app()
