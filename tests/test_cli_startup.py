"""Start-up cost of the command line: ``--help`` must not import torch, numpy or matplotlib (lazy imports)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hang_guard import HANG_S

from sdeformer.experiments import EXPERIMENTS

HEAVY = ("torch", "matplotlib", "numpy")

_PROBE = """
import sys
from typer.testing import CliRunner
from sdeformer.cli import app
result = CliRunner().invoke(app, {args!r})
assert result.exit_code == 0, result.output
print(','.join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        *([c, "--help"] for c in ("reproduce", "sweep", "ode")),
        *([*e.name.split(), "--help"] for e in EXPERIMENTS if e.command),  # every command's settings: torch-free
    ],
)
def test_help_imports_no_heavy_module(args: list[str]) -> None:
    code = _PROBE.format(args=args, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=HANG_S)
    assert out.stdout.strip() == "", f"`sdeformer {' '.join(args)}` imported {out.stdout.strip()}"


def test_package_import_is_lazy_but_complete() -> None:
    code = (
        "import sys, sdeformer as sdf\n"
        "assert 'torch' not in sys.modules, 'import sdeformer loaded torch'\n"
        "from sdeformer import kernel_theory, ConfigError\n"
        "missing = [n for n in sdf.__all__ if not hasattr(sdf, n)]\n"
        "assert not missing, missing\n"
        "assert sdf.kernel_theory is kernel_theory and 'torch' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=HANG_S)


def test_unknown_attribute_is_an_attribute_error() -> None:
    import sdeformer

    with pytest.raises(AttributeError, match="no_such_name"):
        _ = sdeformer.no_such_name  # type: ignore[attr-defined]


def _commands(group, prefix=""):  # (name, click command) of every leaf command, the generated ones built
    import click

    for name, cmd in group.commands.items():
        cmd = cmd.build() if hasattr(cmd, "build") else cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd


def test_every_option_shows_its_default() -> None:
    import click
    import typer

    from sdeformer.cli import app

    missing = []
    for name, cmd in _commands(typer.main.get_command(app)):
        ctx = click.Context(cmd, info_name=name)
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                record = param.get_help_record(ctx)
                if record is None or "default:" not in record[1]:
                    missing.append(f"{name} --{param.name}")
    assert not missing, f"options without a shown default: {missing}"
    assert len(list(_commands(typer.main.get_command(app)))) >= 10
