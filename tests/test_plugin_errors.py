"""A plugin's own code failing: at its import (an exception or ``sys.exit``, any code) the plugin cannot be
imported; while a command runs (an exception or ``sys.exit`` in a part's method, or in a helper it calls) one
line names the plugin, the part, the call and the raising line, exit 2, no traceback; a sweep stops with the same
line. An exception with no plugin code in its traceback is not dressed up as one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sdeformer import plugins
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.registry import ATTENTIONS, OBSERVABLES
from sdeformer.sweeps import read

runner = CliRunner()
TINY = ["--tokens", "4", "--dim", "3", "--layers", "3"]

FAULTY = """
import sys
from sdeformer.registry import ATTENTIONS, OBSERVABLES
from sdeformer.sweeps import read


class Faulty:
    def __init__(self, beta):
        self.beta = beta

    @classmethod
    def from_config(cls, p):
        return cls(p.beta)

    def drift(self, x, source=None):
        return self._helper(x)

    def _helper(self, x):
        {fault}


def broken_order(x, beta, spec):
    return x.sum() / 0 + {{}}["missing"]


ATTENTIONS.register("{name}", Faulty, reads=("beta",))
OBSERVABLES.register("{name}_obs", broken_order)
"""


@pytest.fixture
def faulty(tmp_path):
    """Write a plugin whose attention's helper runs ``fault``; undo its registration afterwards."""
    made: list[tuple[str, str]] = []

    def make(fault: str, name: str = "faulty") -> str:
        path = tmp_path / f"{name}_plugin.py"
        path.write_text(FAULTY.format(fault=fault, name=name))
        made.append((name, str(path.resolve())))
        return str(path)

    yield make
    for name, path in made:
        ATTENTIONS.entries.pop(name, None)
        OBSERVABLES.entries.pop(f"{name}_obs", None)
        if path in plugins._loaded:
            plugins._loaded.remove(path)
        plugins._sources.pop(path, None)
        sys.modules.pop(f"sdeformer_plugin_{Path(path).stem}", None)


def _one_error(result) -> str:
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output + result.stderr
    assert len(errors) == 1, result.stderr
    return errors[0]


@pytest.mark.parametrize(
    "fault,raised",
    [
        ("raise ZeroDivisionError('tokens too close')", "ZeroDivisionError: tokens too close"),
        ("return x.reshape(7, 7)", "RuntimeError: shape '[7, 7]'"),
        ("sys.exit(0)", "SystemExit: 0"),
        ("raise KeyError('beta')", "KeyError: 'beta'"),
    ],
)
def test_a_run_time_error_in_a_plugin_is_one_line_naming_plugin_part_and_call(faulty, fault, raised):
    path = faulty(fault)
    result = runner.invoke(app, ["simulate", "--plugin", path, "--attention", "faulty", *TINY])
    line = _one_error(result)
    assert f"invalid plugin='{Path(path).resolve()}'" in line
    assert "attention 'faulty'" in line and "Faulty.drift()" in line  # the part and the call sdeformer made
    helper = Path(path).read_text().splitlines().index(f"        {fault}") + 1
    assert f"faulty_plugin.py:{helper}" in line and raised in line  # the raising line (in the helper) and the exception


def test_sys_exit_at_a_plugin_import_is_an_import_failure(tmp_path):
    for code in ("0", "3", "'bye'"):
        path = tmp_path / f"exits_{code.strip(chr(39))}.py"
        path.write_text(f"import sys\nsys.exit({code})\n")
        result = runner.invoke(app, ["simulate", "--plugin", str(path), *TINY, "--json"])
        line = _one_error(result)
        assert "plugin" in line and "cannot be imported (SystemExit" in line and result.stdout == ""
        with pytest.raises(ConfigError, match="cannot be imported"):
            plugins.load_plugins([str(path)])
        assert str(path.resolve()) not in plugins.loaded_plugins()


def _spec(tmp_path, base_extra: str, betas: str):
    """A tiny sweep spec (4 tokens, 3 layers, one seed, the energy observable) with ``base_extra`` in its base."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: plug\nbase: {{tokens: 4, dim: 3, layers: 3, bias_std: 0.1{base_extra}}}\naxes: {{beta: {betas}}}\n"
        "seeds: 1\nobservables: [energy]\n"
    )
    return spec


def test_a_failing_plugin_observable_stops_the_sweep_naming_the_plugin(faulty, tmp_path):
    path = faulty("return x * 0", name="obsfail")
    spec = _spec(tmp_path, "", "[1.0]")
    ok = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "a"), "--plugin", path, "--json"])
    assert ok.exit_code == 0, ok.output
    spec.write_text(spec.read_text().replace("[energy]", "[obsfail_obs]"))
    result = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "b"), "--plugin", path])
    line = _one_error(result)  # observables are computed for a whole task: the command stops, naming them
    assert "observable 'obsfail_obs'" in line and "broken_order()" in line and "KeyError: 'missing'" in line


def test_an_error_outside_plugin_code_is_not_attributed_to_a_plugin(faulty):
    plugins.load_plugins([faulty("return x")])  # loaded, but not in the traceback
    try:
        raise ValueError("a bug of sdeformer's own")
    except ValueError as exc:
        assert plugins.run_time_error(exc) is None


def test_a_sweep_records_a_failing_plugin_part_per_run_naming_it(faulty, tmp_path):
    """A run's simulation failing is recorded as that run's error (the sweep goes on): the line names the plugin;
    every run failed, so the command exits 1."""
    path = faulty("raise ArithmeticError('no')", name="sweepfail")
    spec = _spec(tmp_path, ", attention: sweepfail", "[1.0, 2.0]")
    result = runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "out"), "--plugin", path, "--json"])
    assert result.exit_code == 1, result.output
    errors = read(tmp_path / "out")["error"].tolist()
    assert len(errors) == 2 and all(
        f"invalid plugin='{Path(path).resolve()}'" in e
        and "attention 'sweepfail' failed in Faulty.drift()" in e
        and "ArithmeticError: no" in e
        for e in errors
    ), errors
