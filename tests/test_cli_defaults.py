"""The command line's defaults are the library's: options that a torch-free ``--help`` must spell out again
(``sdeformer probe``) hold the values of the settings they stand for, and the job options are written once."""

from __future__ import annotations

import dataclasses

import typer
from typer.core import TyperGroup

from sdeformer.cli import app
from sdeformer.cli._checks import DEFAULT_JOBS


def _defaults(command: str) -> dict:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return {p.name: p.default for p in group.commands[command].params}


def test_probe_options_default_to_the_probe_settings():
    from sdeformer.practice._probe import ProbeNoise

    cli = _defaults("probe")
    shared = [f for f in dataclasses.fields(ProbeNoise) if f.name in cli]
    assert {f.name for f in shared} >= {"samples", "dt", "activation", "width", "bias_std", "threshold", "seed"}
    assert {f.name: cli[f.name] for f in shared} == {f.name: f.default for f in shared}


def test_the_job_options_of_every_check_are_the_same():
    for command in ("rates", "sync-check", "phase"):
        cli = _defaults(command)
        assert {k: cli[k] for k in ("executor", "workers", "scheduler")} == dataclasses.asdict(DEFAULT_JOBS), command


def test_simulate_has_one_option_per_declared_config_field_with_its_declared_help():
    """The model's options are derived from ``params.FIELDS`` (``cli._fields``): one per field, its docs line and
    default in the help, unset (the config's value) by default; and the config's defaults are the declared ones."""
    from sdeformer.cli._fields import field_help
    from sdeformer.config import ModelConfig
    from sdeformer.params import FIELDS

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    options = {p.name: p for p in group.commands["simulate"].params}
    for name, declared in FIELDS.items():
        assert options[name].default is None and FIELDS[name].doc in field_help(name)
        assert getattr(ModelConfig(), name) == declared.default
    assert "[2048]" in field_help("width") and "softmax, off" in field_help("attention")
