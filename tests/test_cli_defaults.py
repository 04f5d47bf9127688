"""The command line's defaults are the library's: options that a torch-free ``--help`` must spell out again
(``sdeformer probe``) hold the values of the settings they stand for, and the job options are written once."""

from __future__ import annotations

import dataclasses

import typer
from typer.core import TyperGroup

from sdeformer.cli import app
from sdeformer.cli.checks import DEFAULT_JOBS


def _defaults(command: str) -> dict:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return {p.name: p.default for p in group.commands[command].params}


def test_probe_options_default_to_the_probe_settings():
    from sdeformer.practice.probe import ProbeNoise

    cli = _defaults("probe")
    shared = [f for f in dataclasses.fields(ProbeNoise) if f.name in cli]
    assert {f.name for f in shared} >= {"samples", "dt", "activation", "width", "bias_std", "threshold", "seed"}
    assert {f.name: cli[f.name] for f in shared} == {f.name: f.default for f in shared}


def test_the_job_options_of_every_check_are_the_same():
    for command in ("rates", "sync-check", "phase"):
        cli = _defaults(command)
        assert {k: cli[k] for k in ("executor", "workers", "scheduler")} == dataclasses.asdict(DEFAULT_JOBS), command
