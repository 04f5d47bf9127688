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
    from . import kernel
    from .activations import Activation, get_activation
    from .attention import (
        MultiHeadAttention,
        NoAttention,
        RandomBatchAttention,
        SoftmaxAttention,
        random_batch_attention,
    )
    from .attention_variants import L2Attention, RandomMatrixAttention, SinkhornAttention, UnnormalizedAttention
    from .clusters import antipodal_pairs, one_cluster
    from .diagnostics import (
        cluster_count,
        cosine_matrix,
        interaction_energy,
        mean_abs_cosine,
        mean_cosine,
        pairwise_cosines,
        wasserstein2_sq,
    )
    from .discrete import StochasticTransformer
    from .errors import ConfigError
    from .fields import GaussianField, RandomFeatureField
    from .kernel import KernelTheory, kernel_theory
    from .loop import Observer, Trajectory
    from .mlp_noise import MLPNoise
    from .models import PartialNoise, QuadraticForm, ResampledHeads, Scaled, ValueNoise
    from .nn import CommonNoise, InteractionEnergy, attach
    from .protocols import LimitField, NoiseField, RandomSource, ReplayableField
    from .replay import BrownianPath, ReplayedNoise
    from .rng import Streams, derive_seeds
    from .sde import EulerMaruyama, LimitSDE, ProjectedEulerMaruyama, make_solver
    from .sphere import project, tangent, uniform_sphere

# public name -> the submodule that defines it (``kernel`` is the submodule itself)
_LAZY: dict[str, str] = {
    "kernel": "kernel",
    "Activation": "activations",
    "get_activation": "activations",
    "MultiHeadAttention": "attention",
    "NoAttention": "attention",
    "RandomBatchAttention": "attention",
    "SoftmaxAttention": "attention",
    "random_batch_attention": "attention",
    "L2Attention": "attention_variants",
    "RandomMatrixAttention": "attention_variants",
    "SinkhornAttention": "attention_variants",
    "UnnormalizedAttention": "attention_variants",
    "antipodal_pairs": "clusters",
    "one_cluster": "clusters",
    "cluster_count": "diagnostics",
    "cosine_matrix": "diagnostics",
    "interaction_energy": "diagnostics",
    "mean_abs_cosine": "diagnostics",
    "mean_cosine": "diagnostics",
    "pairwise_cosines": "diagnostics",
    "wasserstein2_sq": "diagnostics",
    "StochasticTransformer": "discrete",
    "ConfigError": "errors",
    "GaussianField": "fields",
    "RandomFeatureField": "fields",
    "KernelTheory": "kernel",
    "kernel_theory": "kernel",
    "Observer": "loop",
    "Trajectory": "loop",
    "MLPNoise": "mlp_noise",
    "PartialNoise": "models",
    "QuadraticForm": "models",
    "ResampledHeads": "models",
    "Scaled": "models",
    "ValueNoise": "models",
    "CommonNoise": "nn",
    "InteractionEnergy": "nn",
    "attach": "nn",
    "LimitField": "protocols",
    "NoiseField": "protocols",
    "RandomSource": "protocols",
    "ReplayableField": "protocols",
    "BrownianPath": "replay",
    "ReplayedNoise": "replay",
    "Streams": "rng",
    "derive_seeds": "rng",
    "EulerMaruyama": "sde",
    "LimitSDE": "sde",
    "ProjectedEulerMaruyama": "sde",
    "make_solver": "sde",
    "project": "sphere",
    "tangent": "sphere",
    "uniform_sphere": "sphere",
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
    value = module if module_name == name else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "L2Attention",
    "PartialNoise",
    "QuadraticForm",
    "RandomMatrixAttention",
    "ResampledHeads",
    "Scaled",
    "SinkhornAttention",
    "UnnormalizedAttention",
    "ValueNoise",
    "antipodal_pairs",
    "one_cluster",
    "Activation",
    "BrownianPath",
    "CommonNoise",
    "ConfigError",
    "EulerMaruyama",
    "GaussianField",
    "InteractionEnergy",
    "KernelTheory",
    "LimitField",
    "LimitSDE",
    "MLPNoise",
    "MultiHeadAttention",
    "NoAttention",
    "NoiseField",
    "Observer",
    "ProjectedEulerMaruyama",
    "RandomBatchAttention",
    "RandomFeatureField",
    "RandomSource",
    "ReplayableField",
    "ReplayedNoise",
    "SoftmaxAttention",
    "StochasticTransformer",
    "Streams",
    "Trajectory",
    "__version__",
    "attach",
    "cluster_count",
    "cosine_matrix",
    "derive_seeds",
    "get_activation",
    "interaction_energy",
    "kernel",
    "kernel_theory",
    "make_solver",
    "mean_abs_cosine",
    "mean_cosine",
    "pairwise_cosines",
    "project",
    "random_batch_attention",
    "tangent",
    "uniform_sphere",
    "wasserstein2_sq",
]
