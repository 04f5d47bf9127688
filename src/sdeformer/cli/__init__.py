"""The ``sdeformer`` command line: a thin layer over :mod:`sdeformer.experiments`.

Each command module registers its commands on the shared ``app`` when imported here.
"""

from __future__ import annotations

from .common import app
from . import foundation  # noqa: F401  (registers kernel, simulate, reproduce)


def main() -> None:
    app()
