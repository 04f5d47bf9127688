"""The command line's defaults are the library's: options that a torch-free ``--help`` must spell out again
(``sdeformer probe``) hold the values of the settings they stand for, and the job options are written once."""

from __future__ import annotations

import dataclasses

import typer
from typer.core import TyperGroup

from sdeformer.cli import app


def _defaults(command: str) -> dict:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    cmd = group.commands[command]
    build = getattr(cmd, "build", None)  # a command made when run (cli._generate.LazyCommand)
    cmd = build() if build is not None else cmd
    return {p.name: p.default for p in cmd.params}


def test_probe_options_are_the_probe_settings_with_their_declared_defaults():
    """``sdeformer probe``'s noise options are ``ProbeNoise``'s declared settings (``params.params_of``), each
    showing the dataclass's own default (wrong model: a default repeated by hand in the command)."""
    from sdeformer.params import params_of
    from sdeformer.practice._probe_settings import ProbeNoise

    probe = typer.main.get_command(app).commands["probe"].build()  # type: ignore[attr-defined]
    helps = {p.name: " ".join(p.help.split()).replace("\u00a0", " ") for p in probe.params if p.name != "help"}
    declared = {f.name: f.default for f in dataclasses.fields(ProbeNoise) if "doc" in f.metadata}
    assert set(declared) == {"samples", "dt", "activation", "width", "bias_std", "su", "sw", "threshold", "seed"}
    for p in params_of(ProbeNoise):
        shown = (
            p.doc.rsplit("[", 1)[1][:-1]
            if p.default is None
            else f"{p.default:g}"
            if isinstance(p.default, float)
            else p.default
        )
        assert helps[p.name].endswith(f"[default: {shown}]"), (p.name, helps[p.name])


def test_the_job_options_of_every_check_are_the_same():
    """rates, sync-check and phase show the same job options with the same defaults (written once)."""
    shown = {}
    for command in ("rates", "sync-check", "phase"):
        cmd = typer.main.get_command(app).commands[command].build()  # type: ignore[attr-defined]
        helps = {p.name: " ".join((p.help or "").split()) for p in cmd.params}
        shown[command] = [helps[k].rsplit("[default:", 1)[1] for k in ("executor", "workers", "scheduler")]
    assert shown["rates"] == shown["sync-check"] == shown["phase"], shown


def test_simulate_has_one_option_per_declared_config_field_with_its_declared_help():
    """The model's options are derived from ``params.FIELDS`` (``fields``): one per field, its docs line and
    default in the help, unset (the config's value) by default; and the config's defaults are the declared ones."""
    from sdeformer.config import ModelConfig
    from sdeformer.experiments._commands.options import field_help
    from sdeformer.params import FIELDS

    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    options = {p.name: p for p in group.commands["simulate"].build().params}  # type: ignore[attr-defined]
    for name, declared in FIELDS.items():
        assert options[name].default is None and FIELDS[name].doc in field_help(name)
        assert getattr(ModelConfig(), name) == declared.default
    assert "[2048]" in field_help("width") and "softmax, off" in field_help("attention")
