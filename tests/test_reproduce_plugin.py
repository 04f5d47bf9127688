"""An experiment with its figure written as one plugin file outside ``src/`` and run by ``sdeformer reproduce
--plugin FILE NAME`` (examples/plugins/cosine_experiment.py; docs/extending.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sdeformer.cli import app

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugins" / "cosine_experiment.py"


@pytest.fixture(autouse=True)
def _unload():
    """Undo the plugin's load, experiment and command after each test (a folder claim records loaded plugins)."""
    import sys

    from sdeformer import plugins
    from sdeformer.cli._common import GENERATED
    from sdeformer.experiments import EXPERIMENTS

    yield
    if str(PLUGIN) in plugins._loaded:
        plugins._loaded.remove(str(PLUGIN))
    plugins._sources.pop(str(PLUGIN), None)
    EXPERIMENTS.entries.pop("mean-cosine", None)
    GENERATED.pop("mean-cosine", None)
    sys.modules.pop("sdeformer_plugin_cosine_experiment", None)


def test_a_plugin_experiment_runs_into_the_report(tmp_path):
    result = CliRunner().invoke(
        app, ["reproduce", "--plugin", str(PLUGIN), "mean-cosine", "--quick", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "index.html").read_text()
    assert "Mean cosine against depth" in page and (tmp_path / "mean_cosine.png").stat().st_size > 1000


def test_an_unknown_experiment_is_one_line_naming_the_part(tmp_path):
    """Without the plugin its experiment is unknown: exit 2, one line naming ``part`` (the wrong model: a name
    checked before the plugins load would refuse the plugin's experiment too)."""
    result = CliRunner().invoke(app, ["reproduce", "no-such-experiment", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "part" in errors[0]


def test_a_plugin_experiment_is_a_command_of_its_own_with_plugin(tmp_path):
    """``sdeformer mean-cosine --plugin FILE``: the file is loaded before the command name is looked up, and the
    experiment runs as a generated command (the same report as ``reproduce --plugin FILE mean-cosine``)."""
    result = CliRunner().invoke(app, ["mean-cosine", "--plugin", str(PLUGIN), "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "Mean cosine against depth" in (tmp_path / "index.html").read_text()
