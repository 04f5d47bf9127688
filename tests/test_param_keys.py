"""Existing run folders and sweep tables still resume: the keys of a representative set of configs and specs
(every noise and norm, mix:0.3 and ngpt:2, su/sw and bias_std, a plugin's parameter, sweep axes) are those
recorded in ``fixtures/param_keys.json`` before the flat config fields became the parts' declared parameters
(``param_keys.py`` lists them). A change of ``to_dict``, the config hash or the sweep's run seeds fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from param_keys import CONFIGS, SPECS, keys

RECORDED = json.loads(Path(__file__).with_name("fixtures").joinpath("param_keys.json").read_text())


@pytest.fixture(scope="module")
def current(plugin_parts):
    return keys()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_keys_unchanged(current, name):
    assert current["configs"][name] == RECORDED["configs"][name]


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep_keys_unchanged(current, name):
    assert current["specs"][name] == RECORDED["specs"][name]


def test_the_keys_tell_the_configs_apart():
    """A fixture whose configs collapsed to one hash would guard nothing: noise off, stored as mlp false, is
    the one pair of equal configs; every sweep point has its own hash (smoke 2 x 4, the norms 2 x 3 x 2, 2)."""
    hashes = {k: v["config_hash"] for k, v in RECORDED["configs"].items()}
    assert hashes["noise_off"] == hashes.pop("mlp_false")
    assert len(set(hashes.values())) == len(hashes)
    assert len({r[0] for spec in RECORDED["specs"].values() for r in spec["runs"]}) == 2 * 4 + 2 * 3 * 2 + 2
