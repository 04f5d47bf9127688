"""sdeformer: deep transformers as interacting particles on the sphere driven by common noise.

Implements arXiv:2604.26898 (see docs/THEORY.md): the discrete stochastic transformer, its kernel
theory, diagnostics of synchronization, and the paper's experiments.
"""

from importlib.metadata import PackageNotFoundError, version

from .activations import Activation, get_activation
from .attention import MultiHeadAttention, NoAttention, RandomBatchAttention, SoftmaxAttention, random_batch_attention
from .diagnostics import (
    cluster_count,
    cosine_matrix,
    interaction_energy,
    mean_abs_cosine,
    mean_cosine,
    pairwise_cosines,
)
from .discrete import StochasticTransformer, Trajectory
from .errors import ConfigError
from .kernel import KernelTheory, kernel
from .noise import MLPNoise
from .nn import CommonNoise, InteractionEnergy, attach
from .rng import Streams, derive_seeds
from .sphere import project, tangent, uniform_sphere

try:
    __version__ = version("sdeformer")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0+unknown"

__all__ = [
    "CommonNoise", "InteractionEnergy", "attach",
    "Activation", "ConfigError", "KernelTheory", "MLPNoise", "MultiHeadAttention", "NoAttention",
    "SoftmaxAttention", "StochasticTransformer", "Streams", "Trajectory", "__version__", "cluster_count",
    "cosine_matrix", "derive_seeds", "get_activation", "interaction_energy", "kernel", "mean_abs_cosine",
    "mean_cosine", "pairwise_cosines", "project", "tangent", "uniform_sphere",
    "RandomBatchAttention", "random_batch_attention",
]
