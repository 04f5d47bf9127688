"""sdeformer: deep transformers as interacting particles on the sphere driven by common noise.

Implements arXiv:2604.26898 (see docs/THEORY.md): the discrete stochastic transformer, its kernel
theory, diagnostics of synchronization, and the paper's experiments.
"""

from importlib.metadata import PackageNotFoundError, version

from . import kernel
from .activations import Activation, get_activation
from .attention import MultiHeadAttention, NoAttention, RandomBatchAttention, SoftmaxAttention, random_batch_attention
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

try:
    __version__ = version("sdeformer")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

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
