"""Sweep specs: parsing, expansion into runs, seeds derived from (seed, config hash), bad specs (one line, exit 2)."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

import sdeformer.cli._sweep  # noqa: F401  (registers `sdeformer sweep`)
from sdeformer.cli import app
from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import expand, load_spec, parse_spec
from sdeformer.sweeps._points import record_layers, save_every

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sweeps"
SMOKE = load_config_file(EXAMPLES / "smoke.yaml")


def test_smoke_spec_expands_to_its_documented_size():
    spec = load_spec(EXAMPLES / "smoke.yaml")
    runs = expand(spec)
    assert 100 <= len(runs) <= 200
    assert len({r.key for r in runs}) == len(runs)
    assert len({r.config.seed for r in runs}) == len(runs)
    assert all(r.layers == (0, 10, 20) and r.config.save_every == 10 for r in runs)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_example_specs_are_valid(path):
    spec = load_spec(path)
    assert spec.observables and spec.seeds


def test_run_seed_depends_on_seed_and_point_only():
    """Reordering axes, adding points or changing the batch size leaves every run's seed unchanged."""
    a = {r.key: r.config.seed for r in expand(parse_spec(SMOKE))}
    reordered = dict(SMOKE, axes=dict(reversed(list(SMOKE["axes"].items()))), batch=3)
    reordered["axes"]["beta"] = [2.0, 0.5, 1.0, 1.5, 3.0]
    b = {r.key: r.config.seed for r in expand(parse_spec(reordered))}
    assert len(b) > len(a) and all(b[k] == s for k, s in a.items())


def test_zipped_axes_and_ranges():
    spec = parse_spec(
        {
            "base": {"tokens": 4, "dim": 3, "width": 8, "layers": 4},
            "axes": {"dim": {"range": [3, 6]}, "beta": {"logspace": [0.1, 10, 3]}},
            "zipped": [{"su": [0.0, 0.1], "sw": [0.0, 0.2]}],
            "seeds": {"start": 5, "count": 2},
            "times": {"every": 2},
        }
    )
    runs = expand(spec)
    assert len(runs) == 3 * 3 * 2 * 2
    assert {(r.config.su, r.config.sw) for r in runs} == {(0.0, 0.0), (0.1, 0.2)}
    assert {r.config.beta for r in runs} == {0.1, 1.0, 10.0}
    assert {r.replicate for r in runs} == {5, 6}
    assert parse_spec(spec.to_dict()) == spec


def test_record_layers():
    cfg = expand(parse_spec({"base": {"layers": 10, "horizon": 2.0, "tokens": 4, "width": 8}}))[0].config
    assert record_layers(cfg, (0.0, 0.4, 2.0)) == (0, 2, 10) and save_every((0, 2, 10), 10) == 2
    assert record_layers(cfg, ("every", 4)) == (0, 4, 8, 10)
    assert record_layers(cfg, (0.3,)) == (2,)  # the peers' rule: the first layer whose time reaches t
    with pytest.raises(ConfigError, match="must be in"):
        record_layers(cfg, (2.5,))


BAD = [
    ({"axes": {"nonsense": [1, 2]}}, "nonsense"),
    ({"axes": {"beta": []}}, "at least one value"),
    ({"axes": {"dim": ["big"]}}, "axes.dim"),
    ({"axes": {"dim": [4.5]}}, "integer"),
    ({"axes": {"beta": [float("nan")]}}, "finite"),
    ({"axes": {"beta": [0.0]}}, "beta"),
    ({"axes": {"seed": [1, 2]}}, "seeds"),
    ({"axes": {"beta": {"linspace": [1, 2]}}}, "count"),
    ({"zipped": [{"su": [0.0, 0.1], "sw": [0.0]}]}, "same number"),
    ({"seeds": 0}, "seeds"),
    ({"observables": ["nonsense"]}, "observables"),
    ({"observables": [{"name": "clusters", "threshold": 2.0}]}, "threshold"),
    ({"observables": [{"name": "energy", "column": "beta"}]}, "clashes"),
    ({"times": [2.5]}, "must be in"),
    ({"batch": -1}, "batch"),
    ({"colour": 1}, "spec key"),
    ({"base": {"attention": "maybe"}}, "attention"),
]


@pytest.mark.parametrize("change,match", BAD, ids=[m for _, m in BAD])
def test_bad_specs_raise_one_line(change, match):
    with pytest.raises(ConfigError, match=match) as info:
        expand(parse_spec({**SMOKE, **change}))
    assert "\n" not in str(info.value)


def test_cli_bad_spec_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: {tokens: 4}\naxes: {beta: [.nan]}\n")
    result = CliRunner().invoke(app, ["sweep", str(bad), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "axes.beta" in result.output and len(result.output.strip().splitlines()) == 1
    toml = tmp_path / "bad.toml"
    toml.write_text("[axes]\nbeta = 'x'\n")
    assert CliRunner().invoke(app, ["sweep", "run", str(toml), "--out", str(tmp_path / "o")]).exit_code == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text("axes: [\n")
    result = CliRunner().invoke(app, ["sweep", str(broken), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "invalid spec=" in result.output
