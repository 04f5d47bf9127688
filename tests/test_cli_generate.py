"""The experiment commands generated from the registry (``cli._generate``): one ``--NAME`` per declared setting
with its type, doc, default and quick value; ``--plugin FILE`` on every generated command and on ``reproduce``;
bad input as one line naming the parameter (exit 2)."""

from __future__ import annotations

import json
import textwrap

import pytest
import typer
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.experiments import EXPERIMENTS

PLUGIN = '''
"""A test plugin: an experiment with declared settings that writes the settings it received as its result."""
import json
from pathlib import Path

from sdeformer.experiments import EXPERIMENTS, Context, Experiment
from sdeformer.io import Section
from sdeformer.params import Param

SETTINGS = (
    Param("width", int, 4, low=1, doc="cells per row"),
    Param("rate", float, 0.5, low=0.0, high=1.0, doc="fraction kept"),
    Param("label", str, "a", doc="a name"),
    Param("signed", bool, False, doc="signed cells"),
)


class Quick:
    def __init__(self):
        self.width = 2


def report(ctx: Context):
    folder = Path(ctx.out) / "echo"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "echo.json").write_text(json.dumps({"settings": ctx.settings, "quick": ctx.quick, "seed": ctx.seed}))
    return [Section("echo", ["the settings received"])]


if "echo" not in EXPERIMENTS.names():
    EXPERIMENTS.register(Experiment("echo", report, "echo the settings (a test plugin)", "echo", (), lambda *_: 0,
                                    f"{__name__}:SETTINGS", "echo/echo.json", f"{__name__}:Quick"))
'''


@pytest.fixture
def plugin(tmp_path):
    """The echo plugin's file; afterwards its load, its experiment and its command are undone, so that later tests
    (a folder claim records the loaded plugins) see the built-in registry only."""
    import sys

    from sdeformer import plugins
    from sdeformer.cli._common import GENERATED

    path = tmp_path / "echo_plugin.py"
    path.write_text(textwrap.dedent(PLUGIN))
    yield str(path)
    resolved = str(path.resolve())
    if resolved in plugins._loaded:
        plugins._loaded.remove(resolved)
    plugins._sources.pop(resolved, None)
    EXPERIMENTS.entries.pop("echo", None)
    GENERATED.pop("echo", None)
    sys.modules.pop("sdeformer_plugin_echo_plugin", None)


def _group():
    return typer.main.get_command(app)


def test_every_registered_experiment_is_listed_without_importing_its_module():
    """``sdeformer --help`` lists every registered experiment (a hand-written or a generated command); the
    generated ones are built when asked for (``ode --help`` imports the module of its settings)."""
    commands = _group().commands  # type: ignore[attr-defined]
    sub = {f"sweep {n}" for n in commands["sweep"].commands}  # sweep status, sweep plot: in their group
    assert set(EXPERIMENTS.names()) <= set(commands) | sub
    listed = CliRunner().invoke(app, ["--help"])
    assert listed.exit_code == 0 and all(name in listed.output for name in ("ode", "long-context", "context-chaos"))


def test_one_option_per_declared_setting_with_its_doc_default_and_quick_value():
    """``sdeformer ode --help``: each ``Param`` of ``_ode_settings.SETTINGS`` is an option, its doc the help, its
    default shown once and the quick size's value beside it where it differs (wrong model: a default repeated by
    hand, or a setting reachable only through ``--set``)."""
    from sdeformer.experiments._ode_settings import SETTINGS, OdeSettings

    text = " ".join(CliRunner().invoke(app, ["ode", "--help"]).output.split()).replace("\u00a0", " ")
    quick = OdeSettings.quick()
    for p in SETTINGS:
        shown = f"{p.default:g}" if isinstance(p.default, float) else str(p.default)
        tail = f"; quick: {getattr(quick, p.name)}" if getattr(quick, p.name) != p.default else ""
        assert f"--{p.name} " in text and f"{p.doc} [default: {shown}{tail}]" in text, p.name
        assert text.count(f"--{p.name} ") == 1
    assert "--json" not in text and "--plugin" in text  # ode has no summary: no --json


@pytest.mark.parametrize("name", [e.name for e in EXPERIMENTS if not e.command])
def test_every_generated_command_takes_plugin_out_seed_quick(name):
    text = CliRunner().invoke(app, [name, "--help"]).output
    assert all(f"--{o}" in text for o in ("plugin", "out", "seed", "quick", "force")), name


@pytest.mark.parametrize("name", [e.name for e in EXPERIMENTS if e.command])
def test_every_command_experiment_has_its_declared_options_json_and_plugin(name):
    """A command of its own (``Experiment.command``): one option per declared setting (wrong model: a setting
    declared but not reachable from the command line), ``--json`` and ``--plugin``."""
    text = CliRunner().invoke(app, [*name.split(), "--help"]).output
    declared = EXPERIMENTS[name].declared()[EXPERIMENTS[name].arguments :]
    assert all(f"--{p.name.replace('_', '-')}" in text for p in declared) and "--json" in text and "--plugin" in text


def test_a_plugin_experiment_runs_as_a_generated_command_with_its_options(plugin, tmp_path):
    """``sdeformer echo --plugin FILE --width 3 ...``: the plugin registers the experiment, its typed options
    reach the run as ``ctx.settings`` (only those given), ``--json`` prints the summary."""
    args = ["echo", "--plugin", plugin, "--out", str(tmp_path / "a"), "--width", "3", "--signed", "--json"]
    result = CliRunner().invoke(app, [*args, "--set", "label=b", "--seed", "5"])
    assert result.exit_code == 0, result.output
    echoed = json.loads(result.stdout[result.stdout.index("{") :])
    assert echoed == {"settings": {"width": 3, "signed": True, "label": "b"}, "quick": False, "seed": 5}
    shown = " ".join(CliRunner().invoke(app, ["echo", "--plugin", plugin, "--help"]).output.split())
    assert "cells per row [default: 4; quick: 2]" in shown.replace("\u00a0", " ")


def test_a_str_setting_given_a_number_keeps_its_text(plugin, tmp_path):
    """``--set label=3``: a declared ``str`` setting receives the text "3", not the YAML number 3 (which its
    check would refuse as "must be a str"); a number setting still reads its YAML scalar."""
    for label, text in (("3", "label=3"), ("3", 'label="3"'), ("x y", "label=x y")):
        out = str(tmp_path / text.replace('"', "q").replace(" ", "_"))
        args = ["echo", "--plugin", plugin, "--out", out, "--json", "--set", text, "--set", "rate=0.25"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        echoed = json.loads(result.stdout[result.stdout.index("{") :])
        assert echoed["settings"] == {"label": label, "rate": 0.25}


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--width", "0"], "width"), (["--rate", "2"], "rate"), (["--width", "x"], "--width"), (["--set", "no"], "set")],
)
def test_bad_input_is_one_line_naming_the_parameter(plugin, tmp_path, args, named):
    result = CliRunner().invoke(app, ["echo", "--plugin", plugin, "--out", str(tmp_path / "b"), *args])
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(errors) == 1 and named in errors[0], result.output


def test_reproduce_takes_the_same_plugin(plugin, tmp_path):
    result = CliRunner().invoke(app, ["reproduce", "--plugin", plugin, "echo", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "echo" / "echo.json").read_text())["settings"] == {}
