"""The registries (sdeformer.registry): every built-in part resolves, has its factory and the methods of the
capabilities it claims; the names the config, the command line and the docs use come from them; the batched
fields of a config follow the parts' declarations."""

import itertools

import pytest

import sdeformer as sdf
from sdeformer.config._blocks import batched_fields
from sdeformer.contracts import CAPABILITIES, missing
from sdeformer.core._errors import ConfigError
from sdeformer.registry import ATTENTIONS, CAPABILITY_NAMES, NOISES, OBSERVABLES, SOLVERS


def test_capability_names_are_the_contracts():
    assert tuple(CAPABILITIES) == CAPABILITY_NAMES


@pytest.mark.parametrize("registry", [NOISES, ATTENTIONS, SOLVERS], ids=lambda r: r.kind)
def test_every_builtin_resolves_and_honours_its_claims(registry):
    for entry in registry:
        cls = registry.check(entry)
        for claim in entry.claims:
            assert missing(cls, CAPABILITIES[claim]) == ()


def test_every_builtin_noise_and_attention_builds_from_a_config():
    for noise, attention in itertools.product(NOISES.names(), ATTENTIONS.names()):
        cfg = sdf.ModelConfig(tokens=4, dim=3, width=8, layers=2, noise=noise, attention=attention)
        model = cfg.build()
        traj = model.run(cfg.initial_tokens(), seed=0)
        assert traj.x.shape == (3, 4, 3), (noise, attention)


def test_unknown_names_are_refused_with_the_registry_names():
    with pytest.raises(ConfigError) as info:
        sdf.ModelConfig(noise="telepathy")
    assert info.value.parameter == "noise" and "quadratic" in str(info.value)
    with pytest.raises(ConfigError) as info:
        sdf.ModelConfig(attention="telepathy")
    assert info.value.parameter == "attention" and "sinkhorn" in str(info.value)
    with pytest.raises(ConfigError) as info:
        sdf.make_solver(sdf.LimitSDE(sdf.GaussianField()), 2, 1.0, "leapfrog")
    assert info.value.parameter == "scheme"


def _old_rule(cfg):
    """The grouping rule before the registries (blocks.batched_fields of release 2), to pin behaviour."""
    out = ["seed"]
    if cfg.noise == "mlp":
        out += ["su", "sw"]
    if cfg.attention in ("softmax", "off") and not cfg.causal:
        out += ["attention_scale"] if cfg.noise in ("gaussian", "value", "heads") else ["attention_scale", "beta"]
    return tuple(out)


def test_batched_fields_follow_the_declarations_as_before():
    release2 = (
        ("mlp", "gaussian", "value", "heads", "quadratic"),
        ("softmax", "off", "usa", "l2", "sinkhorn", "random"),
    )
    for noise, attention, causal in itertools.product(*release2, (False, True)):
        if causal and not ATTENTIONS[attention].causal:
            continue
        cfg = sdf.ModelConfig(noise=noise, attention=attention, causal=causal)
        assert batched_fields(cfg) == _old_rule(cfg), (noise, attention, causal)


def test_observables_registry_lists_the_sweep_columns():
    from sdeformer.sweeps import _observables as observables  # noqa: F401  (registers the built-ins)

    assert {"energy", "clusters", "all_within"} <= set(OBSERVABLES.names())


def test_the_command_line_help_lists_the_registry_names():
    from typer.testing import CliRunner

    from sdeformer.cli import app

    text = " ".join(CliRunner().invoke(app, ["simulate", "--help"]).output.split())
    for name in (*NOISES.names(), *ATTENTIONS.names()):
        assert name in text


def test_the_api_table_of_the_family_is_generated_from_the_registries():
    import runpy
    from pathlib import Path

    script = runpy.run_path(str(Path(__file__).resolve().parents[1] / "scripts" / "parts_table.py"))
    assert script["PAGE"].read_text() == script["render"](), "run python scripts/parts_table.py"
