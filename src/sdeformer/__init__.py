"""sdeformer: deep transformers as interacting particles on the sphere driven by common noise.

Implements arXiv:2604.26898 (see docs/THEORY.md): the discrete stochastic transformer, its kernel
theory, diagnostics of synchronization, and the paper's experiments.

Heavy imports (torch, numpy) are lazy: the names below load their module on first use (PEP 562), so that
``import sdeformer`` and ``sdeformer --help`` stay fast; ``from sdeformer import X`` works as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from .attention.softmax import (
        MultiHeadAttention,
        NoAttention,
        RandomBatchAttention,
        SoftmaxAttention,
        random_batch_attention,
    )
    from .attention.variants import L2Attention, RandomMatrixAttention, SinkhornAttention, UnnormalizedAttention
    from .config import ModelConfig
    from .contracts import AttentionDrift, LimitField, NoiseField, OnePoint, PairCovariance, RandomSource, Replayable
    from .core import kernel
    from .core.activations import Activation, get_activation
    from .core.counter import CounterStreams
    from .core.errors import ConfigError
    from .core.kernel import KernelTheory, kernel_theory
    from .core.rng import Streams, derive_seeds, make_streams
    from .core.sphere import project, tangent, uniform_sphere
    from .dynamics.discrete import StochasticTransformer
    from .dynamics.engine import run_sweep
    from .dynamics.loop import Observer, SaveAt, Trajectory
    from .dynamics.norms import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling
    from .dynamics.sde import EulerMaruyama, LimitSDE, ProjectedEulerMaruyama, make_solver
    from .experiments.registry import EXPERIMENTS
    from .nn import CommonNoise, InteractionEnergy, attach
    from .noise import PartialNoise, QuadraticForm, ResampledHeads, Scaled, ValueNoise
    from .noise.fields import GaussianField, RandomFeatureField
    from .noise.mlp import MLPNoise
    from .noise.replay import BrownianPath, ReplayedNoise
    from .observables import (
        antipodal_pairs,
        cluster_count,
        cosine_matrix,
        interaction_energy,
        mean_abs_cosine,
        mean_cosine,
        one_cluster,
        pairwise_cosines,
        wasserstein2_sq,
    )
    from .registry import ATTENTIONS, NOISES, NORMS, OBSERVABLES, SOLVERS
    from .sweeps.labelled import open_sweep

# public name -> the submodule that defines it (``kernel`` is the submodule itself)
_LAZY: dict[str, str] = {
    "kernel": "core.kernel",
    "Activation": "core.activations",
    "get_activation": "core.activations",
    "MultiHeadAttention": "attention.softmax",
    "NoAttention": "attention.softmax",
    "RandomBatchAttention": "attention.softmax",
    "SoftmaxAttention": "attention.softmax",
    "random_batch_attention": "attention.softmax",
    "L2Attention": "attention.variants",
    "RandomMatrixAttention": "attention.variants",
    "SinkhornAttention": "attention.variants",
    "UnnormalizedAttention": "attention.variants",
    "antipodal_pairs": "observables",
    "one_cluster": "observables",
    "cluster_count": "observables",
    "cosine_matrix": "observables",
    "interaction_energy": "observables",
    "mean_abs_cosine": "observables",
    "mean_cosine": "observables",
    "pairwise_cosines": "observables",
    "wasserstein2_sq": "observables",
    "StochasticTransformer": "dynamics.discrete",
    "ConfigError": "core.errors",
    "GaussianField": "noise.fields",
    "RandomFeatureField": "noise.fields",
    "KernelTheory": "core.kernel",
    "kernel_theory": "core.kernel",
    "Observer": "dynamics.loop",
    "Trajectory": "dynamics.loop",
    "MLPNoise": "noise.mlp",
    "PartialNoise": "noise",
    "QuadraticForm": "noise",
    "ResampledHeads": "noise",
    "Scaled": "noise",
    "ValueNoise": "noise",
    "CommonNoise": "nn",
    "InteractionEnergy": "nn",
    "attach": "nn",
    "ModelConfig": "config",
    "AttentionDrift": "contracts",
    "OnePoint": "contracts",
    "PairCovariance": "contracts",
    "run_sweep": "dynamics.engine",
    "SaveAt": "dynamics.loop",
    "ATTENTIONS": "registry",
    "NOISES": "registry",
    "NORMS": "registry",
    "OBSERVABLES": "registry",
    "PostLN": "dynamics.norms",
    "PreLN": "dynamics.norms",
    "MixLN": "dynamics.norms",
    "PeriLN": "dynamics.norms",
    "NGPT": "dynamics.norms",
    "SqrtScaling": "dynamics.norms",
    "SOLVERS": "registry",
    "LimitField": "contracts",
    "NoiseField": "contracts",
    "RandomSource": "contracts",
    "Replayable": "contracts",
    "BrownianPath": "noise.replay",
    "ReplayedNoise": "noise.replay",
    "Streams": "core.rng",
    "CounterStreams": "core.counter",
    "make_streams": "core.rng",
    "derive_seeds": "core.rng",
    "EulerMaruyama": "dynamics.sde",
    "LimitSDE": "dynamics.sde",
    "ProjectedEulerMaruyama": "dynamics.sde",
    "make_solver": "dynamics.sde",
    "project": "core.sphere",
    "tangent": "core.sphere",
    "uniform_sphere": "core.sphere",
    "open_sweep": "sweeps.labelled",
    "EXPERIMENTS": "experiments.registry",
}


def __getattr__(name: str) -> Any:
    """Import the submodule defining ``name`` on first access and cache the name in the package namespace."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            globals()["__version__"] = version("sdeformer")
        except PackageNotFoundError:  # running from a source tree without installation
            globals()["__version__"] = "0+unknown"
        return globals()["__version__"]
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f".{module_name}", __name__)
    value = module if name == "kernel" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [  # the public names: the keys of _LAZY (tests/test_cli_startup.py checks both agree)
    "ATTENTIONS",
    "Activation",
    "AttentionDrift",
    "BrownianPath",
    "CommonNoise",
    "ConfigError",
    "CounterStreams",
    "EXPERIMENTS",
    "EulerMaruyama",
    "GaussianField",
    "InteractionEnergy",
    "KernelTheory",
    "L2Attention",
    "LimitField",
    "LimitSDE",
    "MLPNoise",
    "MixLN",
    "ModelConfig",
    "MultiHeadAttention",
    "NGPT",
    "NOISES",
    "NORMS",
    "NoAttention",
    "NoiseField",
    "OBSERVABLES",
    "Observer",
    "OnePoint",
    "PairCovariance",
    "PartialNoise",
    "PeriLN",
    "PostLN",
    "PreLN",
    "ProjectedEulerMaruyama",
    "QuadraticForm",
    "RandomBatchAttention",
    "RandomFeatureField",
    "RandomMatrixAttention",
    "RandomSource",
    "Replayable",
    "ReplayedNoise",
    "ResampledHeads",
    "SOLVERS",
    "SaveAt",
    "Scaled",
    "SinkhornAttention",
    "SoftmaxAttention",
    "SqrtScaling",
    "StochasticTransformer",
    "Streams",
    "Trajectory",
    "UnnormalizedAttention",
    "ValueNoise",
    "__version__",
    "antipodal_pairs",
    "attach",
    "cluster_count",
    "cosine_matrix",
    "derive_seeds",
    "get_activation",
    "interaction_energy",
    "kernel",
    "kernel_theory",
    "make_solver",
    "make_streams",
    "mean_abs_cosine",
    "mean_cosine",
    "one_cluster",
    "open_sweep",
    "pairwise_cosines",
    "project",
    "random_batch_attention",
    "run_sweep",
    "tangent",
    "uniform_sphere",
    "wasserstein2_sq",
]
