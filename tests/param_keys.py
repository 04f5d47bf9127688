"""The configs and sweep specs whose run-folder keys and sweep-table keys ``tests/fixtures/param_keys.json``
records (written before the one parameter system replaced the flat fields; ``test_param_keys.py`` asserts them
unchanged). Run ``python tests/param_keys.py`` to print the keys of the current code."""

from __future__ import annotations

import json
from typing import Any

# name -> config mapping (as a config file or ``ModelConfig.from_mapping`` takes it)
CONFIGS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "small": {"tokens": 8, "dim": 4, "width": 64, "layers": 20, "horizon": 2.0},
    "noise_mlp_conditional": {"width": 128, "sampling": "conditional", "activation": "tanh"},
    "noise_gaussian": {"noise": "gaussian", "activation": "gelu", "su": 0.2, "sw": 0.1},
    "noise_value": {"noise": "value", "beta": 2.0},
    "noise_heads": {"noise": "heads"},
    "noise_quadratic": {"noise": "quadratic"},
    "noise_off": {"noise": "off"},
    "mlp_false": {"mlp": False},
    "share": {"share": 0.5},
    "norm_pre": {"norm": "pre"},
    "norm_mix": {"norm": "mix"},
    "norm_mix_0.3": {"norm": "mix:0.3"},
    "norm_peri": {"norm": "peri"},
    "norm_ngpt": {"norm": "ngpt"},
    "norm_ngpt_2": {"norm": "ngpt:2"},
    "norm_sqrt": {"norm": "sqrt"},
    "su_sw": {"su": 0.1, "sw": 0.3},
    "bias_std": {"bias_std": 0.25},
    "attention_usa": {"attention": "usa", "causal": True},
    "attention_alibi": {"attention": "alibi", "alibi": 0.5, "mask": "path"},
    "solver_euler": {"solver": "euler", "noise": "gaussian"},
    "rng_counter_float64": {"rng": "counter", "dtype": "float64", "seed": 7},
    "plugin_param": {"noise": "half_gaussian", "params": {"noise.fraction": 0.25}},
    "plugin_param_dotted": {"noise": "half_gaussian", "noise.fraction": 0.75, "su": 0.1},
}

SPECS: dict[str, dict[str, Any]] = {
    "smoke": {
        "name": "smoke",
        "base": {"tokens": 8, "dim": 4, "width": 64, "layers": 20, "horizon": 2.0, "su": 0.1, "sw": 0.1},
        "axes": {"activation": ["relu", "tanh"], "beta": {"linspace": [0.5, 2.0, 4]}},
        "seeds": 2,
        "times": [0.0, 1.0, 2.0],
    },
    "bias_std_norms": {
        "base": {"tokens": 6, "dim": 3, "width": 32, "layers": 100, "horizon": 1.0},
        "axes": {"bias_std": [0.0, 0.1], "norm": ["post", "mix:0.3", "ngpt:2"]},
        "zipped": [{"share": [0.5, 1.0], "noise": ["mlp", "gaussian"]}],
        "seeds": {"start": 3, "count": 2},
    },
    "plugin_axis": {
        "base": {"tokens": 6, "dim": 3, "layers": 10, "noise": "half_gaussian"},
        "axes": {"noise.fraction": [0.25, 0.5]},
        "seeds": 1,
    },
}


def keys() -> dict[str, Any]:
    """Per config: ``to_dict()`` (a run folder's recorded config), its ``config_hash`` (the run folder's and the
    cache's key) and ``point_hash`` (a sweep table's key); per spec: its resolved ``to_dict()`` and every run's
    (config hash, replicate, seed)."""
    from sdeformer.config import ModelConfig
    from sdeformer.io._formats import to_jsonable
    from sdeformer.io._hashing import config_hash
    from sdeformer.sweeps._points import expand, point_hash
    from sdeformer.sweeps._spec import parse_spec

    out: dict[str, Any] = {"configs": {}, "specs": {}}
    for name, data in CONFIGS.items():
        cfg = ModelConfig.from_mapping(data)
        d = to_jsonable(cfg.to_dict())
        out["configs"][name] = {"to_dict": d, "config_hash": config_hash(d), "point_hash": point_hash(cfg)}
    for name, data in SPECS.items():
        spec = parse_spec(data)
        runs = [[r.config_hash, r.replicate, r.config.seed] for r in expand(spec)]
        out["specs"][name] = {"to_dict": to_jsonable(spec.to_dict()), "runs": runs}
    return out


if __name__ == "__main__":
    import sys
    from pathlib import Path

    from sdeformer import plugins

    plugins.load_plugins([str(Path(__file__).with_name("plugin_parts.py"))])
    json.dump(keys(), sys.stdout, indent=1, sort_keys=True)
    print()
