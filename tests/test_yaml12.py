"""Config and spec files read YAML 1.2 booleans: only true/false are booleans, so ``attention: off`` (a part's
name) stays a string, and ``mlp: off`` is refused in one line instead of read as false."""

from __future__ import annotations

import pytest

import sdeformer as sdf
from sdeformer.config import load_config_file
from sdeformer.core._errors import ConfigError
from sdeformer.sweeps import parse_spec


def test_off_names_the_attention_and_true_false_are_booleans(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("attention: off\nmlp: false\ncausal: False\ntokens: 4\ndim: 3\n")
    data = load_config_file(path)
    assert data == {"attention": "off", "mlp": False, "causal": False, "tokens": 4, "dim": 3}
    assert sdf.ModelConfig.from_mapping(data).attention == "off"
    path.write_text("mlp: off\n")
    with pytest.raises(ConfigError, match="mlp"):
        sdf.ModelConfig.from_mapping(load_config_file(path))


def test_a_spec_sweeps_over_attention_off(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: a\nbase: {tokens: 4, dim: 3}\naxes: {attention: [softmax, off]}\nseeds: 1\n")
    spec = parse_spec(load_config_file(path))
    assert [v for name, v in spec.groups[0]] == [("softmax", "off")]
