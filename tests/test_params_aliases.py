"""One parameter system (docs/config.md): the built-in parts declare their parameters as plugins do
(``noise.width``, ``noise.su``, ``norm.fraction``, ...), the flat names stay aliases through one table that keeps
the run hashes, a value the chosen part does not read is refused in one line naming the part, a part's own
``str`` / ``bool`` parameters can be swept, and ``bias_std`` (su = sw) is one rule."""

from __future__ import annotations

import pytest

from sdeformer.config import ModelConfig
from sdeformer.core._errors import ConfigError
from sdeformer.io._hashing import config_hash
from sdeformer.noise._fields import GaussianField
from sdeformer.params import ALIASES, FIELDS, expand_shorthands
from sdeformer.registry import ATTENTIONS, NOISES, NORMS, Param
from sdeformer.sweeps import LocalExecutor, parse_spec, read, run

M = ModelConfig.from_mapping


def test_the_built_in_parts_declare_the_fields_they_read():
    """Each noise and attention declares exactly the table's fields it reads (a part declaring a field it does
    not read, or missing one, fails; its own parameters, such as positional's frequency, come on top); the MLP
    takes su, sw batched; Mix-LN and nGPT declare their parameter."""
    for registry in (NOISES, ATTENTIONS):
        for entry in registry:
            kind = registry.kind
            read = {k.partition(".")[2] for k, f in ALIASES.items() if k.startswith(kind) and f in entry.reads}
            aliased = {p.name for p in entry.params if f"{kind}.{p.name}" in ALIASES}  # a part's own may add more
            assert aliased == read, entry.name
    mlp = {p.name: p for p in NOISES["mlp"].params}
    assert [name for name, p in mlp.items() if p.batched] == ["su", "sw"]
    assert mlp["width"].default == FIELDS["width"].default and mlp["sampling"].kind is str
    assert [(p.name, p.default) for p in (*NORMS["mix"].params, *NORMS["ngpt"].params)] == [
        ("fraction", 0.25),
        ("alpha", 1.0),
    ]
    assert NORMS["post"].params == () and NOISES["quadratic"].params == ()


@pytest.mark.parametrize(
    ("named", "flat"),
    [
        ({"noise.width": 64}, {"width": 64}),
        ({"noise.su": 0.1, "noise.sw": 0.2}, {"su": 0.1, "sw": 0.2}),
        (
            {"noise.sampling": "conditional", "noise.activation": "tanh"},
            {"sampling": "conditional", "activation": "tanh"},
        ),
        ({"attention.scale": -1.0}, {"attention_scale": -1.0}),
        ({"attention": "alibi", "attention.alibi": 0.5}, {"attention": "alibi", "alibi": 0.5}),
        ({"norm": "mix", "norm.fraction": 0.3}, {"norm": "mix:0.3"}),
        ({"norm": "ngpt", "norm.alpha": 2}, {"norm": "ngpt:2"}),
        ({"norm": "ngpt", "norm.alpha": 2.0}, {"norm": "ngpt:2"}),
    ],
)
def test_both_names_give_one_config_and_one_hash(named, flat):
    a, b = M(named), M(flat)
    assert a == b and config_hash(a.to_dict()) == config_hash(b.to_dict())
    fields, dotted = {k: v for k, v in named.items() if "." not in k}, {k: v for k, v in named.items() if "." in k}
    assert ModelConfig(**fields, params=tuple(dotted.items())) == b  # the Python constructor takes them too
    for key, value in named.items():
        if "." in key:
            assert a.value(key) == pytest.approx(value)


def test_the_values_read_under_both_names():
    cfg = M({"norm": "mix:0.3", "width": 32})
    assert cfg.value("norm.fraction") == 0.3 and cfg.value("noise.width") == 32 == cfg.width
    assert M({"norm": "mix"}).value("norm.fraction") == 0.25  # the declared default
    assert ModelConfig(params=(("noise.su", 0.2),)).su == 0.2
    assert ModelConfig(norm="ngpt", params=(("norm.alpha", 2),)).norm == "ngpt:2"


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"noise.width": 8, "width": 16}, "give either noise.width or width"),
        ({"norm": "mix:0.3", "norm.fraction": 0.4}, "give either norm.fraction or norm"),
        ({"noise.su": -1.0}, r"invalid noise\.su=-1\.0"),
        ({"norm": "mix", "norm.fraction": 2.0}, r"invalid norm\.fraction=2\.0"),
        ({"noise": "gaussian", "width": 8}, r"^invalid width=8: not read by noise 'gaussian' \(it reads noise\.su"),
        ({"noise": "value", "su": 0.1}, "su=0.1: not read by noise 'value' .it reads no parameter"),
        ({"noise": "gaussian", "sampling": "conditional"}, "sampling.*not read by noise 'gaussian'"),
        ({"norm": "post", "norm.fraction": 0.3}, "norm.fraction=0.3: not read by norm 'post'"),
        ({"norm": "ngpt", "norm.fraction": 0.3}, "not read by norm 'ngpt' .it reads norm.alpha"),
        ({"attention": "off", "attention_scale": 2.0}, "attention_scale=2.0: not read by attention 'off'"),
    ],
)
def test_a_value_no_part_reads_is_refused_in_one_line(data, match):
    with pytest.raises(ConfigError, match=match) as info:
        M(data)
    assert "\n" not in str(info.value)


def test_only_set_values_are_refused_never_defaults():
    """The Gaussian field reads no width: the default width is no error, and neither is the width the user gave
    equal to it (a recorded config's ``to_dict`` holds every old field); a sweep point may carry a base's width."""
    cfg = M({"noise": "gaussian"})
    assert M(cfg.to_dict()) == cfg and M({"noise": "gaussian", "width": FIELDS["width"].default}) == cfg
    assert M({"noise": "gaussian", "width": 8}, strict=False).width == 8


def test_the_command_line_refuses_an_unread_option_with_exit_2():
    from typer.testing import CliRunner

    from sdeformer.cli import app

    result = CliRunner().invoke(app, ["simulate", "--noise", "gaussian", "--width", "8", "--layers", "2"])
    assert result.exit_code == 2 and "not read by noise 'gaussian'" in result.output


def test_bias_std_is_one_rule():
    assert expand_shorthands({"bias_std": 0.2}) == {"su": 0.2, "sw": 0.2}
    for given in ({"su": 0.1}, {"noise.sw": 0.1}):
        with pytest.raises(ConfigError, match="give either bias_std or su/sw"):
            expand_shorthands({"bias_std": 0.2, **given})
    assert ModelConfig(bias_std=0.2) == M({"bias_std": 0.2}) == M({"su": 0.2, "sw": 0.2})
    with pytest.raises(ConfigError, match="give either bias_std or su/sw"):
        ModelConfig(bias_std=0.2, su=0.1)
    spec = parse_spec({"base": {"tokens": 4, "dim": 3, "width": 8, "layers": 2}, "axes": {"bias_std": [0.0, 0.3]}})
    from sdeformer.sweeps._points import expand

    assert [(r.config.su, r.config.sw) for r in expand(spec)] == [(0.0, 0.0), (0.3, 0.3)]


def test_a_spec_warns_of_a_field_no_chosen_part_reads(capsys):
    """A warning, not a refusal: a spec saved before the check keeps its runs' keys and resumes."""
    base = {"tokens": 4, "dim": 3, "layers": 2, "width": 8}
    parse_spec({"base": base, "axes": {"noise": ["mlp", "gaussian"]}})  # width: read by the MLP points
    assert capsys.readouterr().err == ""
    parse_spec({"base": {**base, "noise": "gaussian"}})
    assert "warning: width=8: not read by noise 'gaussian' in this spec" in capsys.readouterr().err
    parse_spec({"base": {**base, "width": 2048}, "axes": {"noise": ["gaussian", "value"], "width": [16, 32]}})
    assert "width=16: not read by noise 'gaussian' or 'value'" in capsys.readouterr().err


class _Tagged(GaussianField):
    """The Gaussian field, its sign flipped when ``flip`` (the same law: a test of bool and str parameters)."""

    def __init__(self, flip: bool, tag: str):
        super().__init__("relu", 0.1, 0.1)
        self.sign, self.tag = (-1.0 if flip else 1.0), tag

    @classmethod
    def from_config(cls, p):
        return cls(p.flip, p.tag)

    def increment(self, y, dt, source):
        return self.sign * super().increment(y, dt, source)


@pytest.fixture
def tagged():
    NOISES.register(
        "tagged", _Tagged, random=True, claims=("limit", "one_point", "pair_covariance", "replayable"),
        params=(Param("flip", bool, False), Param("tag", str, "a")),
    )  # fmt: skip
    yield
    NOISES.entries.pop("tagged")


def test_str_and_bool_part_parameters_are_swept(tagged, tmp_path):
    """A spec sets a part's own bool and str parameters (an axis and the base; before, only numbers); the table
    records them in columns of their types; a value of another type is refused naming the parameter."""
    spec = parse_spec(
        {
            "base": {"tokens": 4, "dim": 3, "layers": 4, "noise": "tagged", "noise.tag": "b"},
            "axes": {"noise.flip": [False, True]},
            "seeds": 1,
            "observables": ["mean_cos"],
            "times": "final",
        }
    )
    run(spec, tmp_path, LocalExecutor())
    df = read(tmp_path)
    assert sorted(df["noise.flip"]) == [False, True] and set(df["noise.tag"]) == {"b"}
    assert df["noise.flip"].dtype == bool and df["noise.tag"].dtype != float
    assert set(df["status"]) == {"done"}
    from sdeformer.sweeps._points import expand

    with pytest.raises(ConfigError, match="invalid noise.flip='yes': must be a bool"):  # its declared type
        expand(parse_spec({"base": {"noise": "tagged"}, "axes": {"noise.flip": ["yes", "no"]}}))
