"""Property-based fuzzing of command-line argument lists, config files and the Python API's seeds: never a
traceback; invalid input exits 2 with one line (ConfigError in Python); valid input gives finite output.

The default suite runs a fast profile; ``make test-slow`` (``-m slow``) runs the same properties deeper."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.config import ModelConfig, load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.core._rng import seed_list
from sdeformer.experiments import _simulate as sim

runner = CliRunner()
# every health check that still exists (return_value and not_a_test_method are deprecated: always errors)
QUIET = [h for name, h in HealthCheck.__members__.items() if name not in ("return_value", "not_a_test_method")]
FAST = settings(max_examples=15, deadline=None, suppress_health_check=QUIET)
DEEP = settings(max_examples=400, deadline=None, suppress_health_check=QUIET)

numbers = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["0", "-1", "1e308", "nan", "inf", "abc", "", "1.5", "64", "0x10"]),
)
activations = st.one_of(
    st.sampled_from(["relu", "tanh", "gelu", "silu", "sigmoid", "leaky_relu", "swish", "RELU", ""]),
    st.builds(lambda x: f"leaky_relu:{x}", numbers),
    st.text(max_size=12),
)


def check_cli(args: list[str]) -> dict | None:
    """The CLI's contract on ``args``: exit 0 with JSON whose numbers are finite, or exit 2 with one error line."""
    result = runner.invoke(app, args)
    assert "Traceback" not in result.output + result.stderr, result.output
    assert result.exit_code in (0, 2), (args, result.exit_code, repr(result.exception))
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        usage = "Usage:" in result.stderr  # click's own refusal of a malformed option value
        assert usage or len(errors) == 1, result.stderr
        return None
    out = json.loads(result.stdout)
    for value in out.values():
        for number in value if isinstance(value, list) else [value]:
            if isinstance(number, float):
                assert math.isfinite(number), (args, out)
    return out


@st.composite
def kernel_args(draw) -> list[str]:
    args = ["kernel", "--json", "--activation", draw(activations)]
    for flag in draw(st.sets(st.sampled_from(["--dim", "--bias-std", "--su", "--sw", "--beta"]), max_size=3)):
        value = draw(numbers) if flag != "--dim" else draw(st.one_of(st.integers(-3, 300), numbers))
        args += [flag, str(value)]
    return args


@st.composite
def simulate_args(draw) -> list[str]:
    args = ["simulate", "--json", "--tokens", "4", "--dim", "3", "--width", "8", "--layers", "5"]
    flags = ["--horizon", "--attention-scale", "--beta", "--su", "--sw", "--seed", "--save-every", "--activation"]
    for flag in draw(st.sets(st.sampled_from(flags), max_size=3)):
        args += [flag, str(draw(activations if flag == "--activation" else numbers))]
    return args


CONFIG_KEYS = ["tokens", "dim", "width", "layers", "horizon", "activation", "su", "sw", "bias_std", "mlp"]
CONFIG_KEYS += ["attention", "attention_scale", "beta", "seed", "dtype", "sampling", "save_every", "widht"]
values = st.one_of(
    st.integers(-5, 12),
    st.floats(-1e6, 1e6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.sampled_from(["relu", "tanh", "off", "softmax", "float64", "direct", "no", "yes", "12"]),
    st.lists(st.integers(0, 3), max_size=2),
)
configs = st.dictionaries(st.sampled_from(CONFIG_KEYS), values, max_size=8)


def _toml(data: dict) -> str:
    """``data`` as TOML (None has no TOML form: such keys are left out)."""

    def value(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    return "".join(f"{k} = {value(v)}\n" for k, v in data.items() if v is not None)


def check_config(tmp_path, data: dict, suffix: str) -> None:
    """A fuzzed config file: ConfigError, or a valid config whose (small) run has finite observables."""
    path = tmp_path / f"c{suffix}"
    path.write_text(yaml.safe_dump(data) if suffix == ".yaml" else _toml(data))
    try:
        cfg = ModelConfig.from_mapping(load_config_file(path))
    except ConfigError:
        return
    small = dict(tokens=min(cfg.tokens, 6), dim=min(cfg.dim, 6), width=min(cfg.width, 16), layers=min(cfg.layers, 6))
    cfg = cfg.replace(**small, save_every=min(cfg.save_every, small["layers"]))
    cfg = cfg.replace(horizon=min(cfg.horizon, 5.0), beta=min(cfg.beta, 5.0), su=min(cfg.su, 5.0), sw=min(cfg.sw, 5.0))
    cfg = cfg.replace(attention_scale=max(min(cfg.attention_scale, 5.0), -5.0))
    result = sim.simulate(cfg)
    assert np.isfinite(result.energy).all() and np.isfinite(result.mean_cos).all()


seeds = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=4),
    st.lists(
        st.one_of(st.integers(-3, 2**64), st.text(max_size=2), st.lists(st.integers(0, 3), max_size=2)), max_size=3
    ),
    st.none(),
    st.booleans(),
)


def check_seed(seed: object) -> None:
    """A seed is refused with ConfigError or gives seeds in [0, 2**63)."""
    for batch in ((), (2,)):
        try:
            out = seed_list(seed, batch)  # pyright: ignore[reportArgumentType]
        except ConfigError as exc:
            assert "seed" in str(exc) and "\n" not in str(exc)
            continue
        assert all(isinstance(s, int) and 0 <= s < 2**63 for s in out)
        if isinstance(seed, int) and batch == ():
            assert out == [seed]


@FAST
@given(kernel_args())
def test_fuzz_kernel_cli(args):
    check_cli(args)


@FAST
@given(simulate_args())
def test_fuzz_simulate_cli(args):
    check_cli(args)


@FAST
@given(configs, st.sampled_from([".yaml", ".toml"]))
def test_fuzz_config_files(tmp_path_factory, data, suffix):
    check_config(tmp_path_factory.mktemp("cfg"), data, suffix)


@FAST
@given(seeds)
def test_fuzz_seeds(seed):
    check_seed(seed)


@pytest.mark.slow
@DEEP
@given(kernel_args())
def test_fuzz_kernel_cli_deep(args):
    check_cli(args)


@pytest.mark.slow
@DEEP
@given(simulate_args())
def test_fuzz_simulate_cli_deep(args):
    check_cli(args)


@pytest.mark.slow
@DEEP
@given(configs, st.sampled_from([".yaml", ".toml"]))
def test_fuzz_config_files_deep(tmp_path_factory, data, suffix):
    check_config(tmp_path_factory.mktemp("cfg"), data, suffix)


@pytest.mark.slow
@DEEP
@given(seeds)
def test_fuzz_seeds_deep(seed):
    check_seed(seed)


# -- sweep specs and the sweep command line -------------------------------------------------------
# mostly valid sizes, so that runs happen too; 10**12 is refused on any machine (memory)
SIZES = st.sampled_from([2, 3, 4] * 8 + [-1, 0, 1, 2.5, 10**12, 2**63, "4", None, True])
SPEC_VALUES = st.one_of(
    st.sampled_from([0.5, 1.0, -1.0, 0.0, float("nan"), float("inf"), "relu", "tanh", "x", True, None, [], {}]),
    st.integers(-3, 6),
)
AXIS = st.one_of(
    st.lists(SPEC_VALUES, max_size=3),
    st.builds(lambda k, a, b, n: {k: [a, b, n]}, st.sampled_from(["linspace", "logspace", "range", "nope"]),
              st.sampled_from([0.5, 1, -1, 0]), st.sampled_from([2, 4.0, 1e300]), st.sampled_from([1, 2, 0, 10**9])),
    SPEC_VALUES,
)  # fmt: skip
SPEC_SEEDS = st.one_of(
    st.sampled_from([1, 2, 0, -1, 10**9, 2**63, True, "2", [], [0, 0], [2**63 - 1], [2**63], [-1], [1.5]]),
    st.builds(lambda s, c: {"start": s, "count": c}, st.sampled_from([0, 2**63 - 1, -1]), st.sampled_from([1, 2, 0])),
)
specs = st.fixed_dictionaries(
    {"base": st.fixed_dictionaries({"tokens": SIZES, "dim": SIZES, "width": SIZES, "layers": SIZES})},
    optional={
        "axes": st.dictionaries(st.sampled_from(["beta", "horizon", "su", "bias_std", "activation", "seed", "widht"]),
                                AXIS, max_size=2),
        "zipped": st.lists(st.dictionaries(st.sampled_from(["sw", "attention_scale"]), AXIS, max_size=2), max_size=1),
        "seeds": SPEC_SEEDS,
        "times": st.sampled_from(["final", "all", [0.0, 0.5], [-1.0], {"every": 2}, {"every": 0}, "never"]),
        "observables": st.sampled_from([["energy"], ["mean_cos", "clusters"], [], ["nope"], "energy"]),
        "batch": st.sampled_from([1, 2, 0, -1, 2.5]),
        "name": st.sampled_from(["s", "s", "s", "", "a/b", 3]),
    },
)  # fmt: skip


def check_sweep(tmp_path, spec: dict) -> None:
    """A fuzzed spec file through ``sweep run`` (at most 4 runs): exit 0 with finite recorded values, or exit 2
    with one line; never a traceback or another exit code; a refused spec leaves no folder."""
    base = {k: v for k, v in spec["base"].items() if v is not None}
    path, out = tmp_path / "spec.yaml", tmp_path / "out"
    path.write_text(yaml.safe_dump({**spec, "base": base}))
    result = runner.invoke(app, ["sweep", str(path), "--out", str(out), "--max-runs", "4", "--json"])
    assert "Traceback" not in result.output + result.stderr, result.output
    assert result.exit_code in (0, 2), (spec, result.exit_code, repr(result.exception))
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, result.stderr
        assert not out.exists() or (out / "sweep.json").exists(), sorted(out.iterdir())
        return
    from sdeformer.sweeps import read

    done = read(out)
    columns = [c for c in ("energy", "mean_cos", "clusters") if c in done.columns]
    rows = done.loc[done["status"] == "done"]
    if base.get("tokens") == 1 and "mean_cos" in columns:  # one token has no distinct pairs: their mean is nan
        assert rows["mean_cos"].isna().all()
        columns.remove("mean_cos")
    assert np.isfinite(rows[columns].to_numpy(dtype=float)).all()


PLOT_NAMES = st.sampled_from(["beta", "su", "sw", "bias_std", "t", "layer", "replicate", "energy", "nope", ""])


@st.composite
def plot_args(draw) -> list[str]:
    args = ["--x", draw(PLOT_NAMES), "--y", draw(PLOT_NAMES)]
    for flag in draw(st.sets(st.sampled_from(["--color", "--time", "--below", "--where"]), max_size=2)):
        if flag == "--color":
            args += [flag, draw(PLOT_NAMES)]
        elif flag == "--where":
            args += [flag, draw(st.sampled_from(["beta=0.5", "su=x", "nope=1", "=1", "bias_std=0.1", "beta"]))]
        else:
            args += [flag, str(draw(numbers))]
    return args


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    from sdeformer.sweeps import parse_spec, run

    out = tmp_path_factory.mktemp("plotted")
    base = {"tokens": 4, "dim": 3, "width": 8, "layers": 2, "horizon": 1.0}
    run(parse_spec({"base": base, "axes": {"beta": [0.5, 1.0], "bias_std": [0.0, 0.1]}, "times": "all"}), out)
    return out


def check_plot(folder, args: list[str]) -> None:
    result = runner.invoke(app, ["sweep", "plot", str(folder), *args, "--out", str(folder / "p.png"), "--json"])
    assert "Traceback" not in result.output + result.stderr, result.output
    assert result.exit_code in (0, 2), (args, result.exit_code, repr(result.exception))
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, result.stderr


SWEEP_FAST = settings(max_examples=30, deadline=None, suppress_health_check=QUIET)


@SWEEP_FAST
@given(specs)
def test_fuzz_sweep_specs(tmp_path_factory, spec):
    check_sweep(tmp_path_factory.mktemp("spec"), spec)


@SWEEP_FAST
@given(plot_args())
def test_fuzz_sweep_plot_cli(plotted, args):
    check_plot(plotted, args)


@pytest.mark.slow
@DEEP
@given(specs)
def test_fuzz_sweep_specs_deep(tmp_path_factory, spec):
    check_sweep(tmp_path_factory.mktemp("spec"), spec)


@pytest.mark.slow
@DEEP
@given(plot_args())
def test_fuzz_sweep_plot_cli_deep(plotted, args):
    check_plot(plotted, args)
