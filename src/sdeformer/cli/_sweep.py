"""``sdeformer sweep``: run a sweep spec into a Parquet table (locally or on Dask), report its state, plot it.

``sdeformer sweep SPEC --out DIR`` is short for ``sdeformer sweep run SPEC --out DIR`` (its usage line says so);
``status DIR`` and ``plot DIR`` read the folder. ``run`` holds the folder's writer lock, claims it for the spec
(``--force`` to add another spec's runs) and refuses a spec over ``--max-runs`` runs or the memory available,
before anything is expanded. See :mod:`sdeformer.sweeps`.
"""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from ..experiments._registry import EXPERIMENTS
from ._common import app
from ._generate import experiment_command


class DefaultRunGroup(TyperGroup):
    """A group whose first argument, when it names no subcommand, is the spec of ``run``; its usage shows that
    bare form first."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx, formatter):  # type: ignore[no-untyped-def]
        formatter.write_usage(ctx.command_path, "SPEC --out DIR [OPTIONS]")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="       ")


sweep_app = typer.Typer(
    cls=DefaultRunGroup,
    no_args_is_help=True,
    add_completion=False,
    help="Sweeps: SPEC (YAML/TOML) -> tidy Parquet table, resumable, local or on Dask. `sweep SPEC --out DIR` is "
    "short for `sweep run SPEC --out DIR`; `sweep status DIR` and `sweep plot DIR` read the folder.",
)
app.add_typer(sweep_app, name="sweep")


for _name in ("run", "status", "plot"):  # registered experiments (experiments._commands.sweep)
    sweep_app.command(_name)(experiment_command(EXPERIMENTS[f"sweep {_name}"]))
