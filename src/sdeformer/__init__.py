"""sdeformer: deep transformers as interacting particles on the sphere driven by common noise.

Implements arXiv:2604.26898 (see docs/THEORY.md): the discrete stochastic transformer, its kernel
theory, diagnostics of synchronization, and the paper's experiments.

Heavy imports (torch, numpy) are lazy: the names below load their module on first use (PEP 562), so that
``import sdeformer`` and ``sdeformer --help`` stay fast; ``from sdeformer import X`` works as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import lazy_exports

if TYPE_CHECKING:
    __version__: str
    from . import peers, real
    from .attention._softmax import (
        MultiHeadAttention,
        NoAttention,
        RandomBatchAttention,
        SoftmaxAttention,
        random_batch_attention,
    )
    from .attention._variants import L2Attention, RandomMatrixAttention, SinkhornAttention, UnnormalizedAttention
    from .config import ModelConfig
    from .contracts import AttentionDrift, LimitField, NoiseField, OnePoint, PairCovariance, RandomSource, Replayable
    from .core import _kernel as kernel
    from .core._activations import Activation, get_activation
    from .core._counter import CounterStreams
    from .core._errors import ConfigError
    from .core._kernel import KernelTheory, kernel_theory
    from .core._rng import Streams, derive_seeds, make_streams
    from .core._sphere import project, tangent, uniform_sphere
    from .dynamics._discrete import StochasticTransformer
    from .dynamics._engine import run_sweep
    from .dynamics._loop import Observer, SaveAt, Trajectory
    from .dynamics._norms import NGPT, MixLN, PeriLN, PostLN, PreLN, SqrtScaling
    from .dynamics._sde import EulerMaruyama, LimitSDE, ProjectedEulerMaruyama, make_solver
    from .experiments._registry import EXPERIMENTS
    from .nn import CommonNoise, InteractionEnergy, attach
    from .noise import PartialNoise, QuadraticForm, ResampledHeads, Scaled, ValueNoise
    from .noise._fields import GaussianField, RandomFeatureField
    from .noise._mlp import MLPNoise
    from .noise._replay import BrownianPath, ReplayedNoise
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
    from .sweeps._labelled import open_sweep

__all__, _lazy_getattr, __dir__ = lazy_exports(__name__, __file__, extra=("__version__",))


def __getattr__(name: str) -> Any:
    """The installed version, or a public name of the ``TYPE_CHECKING`` block imported on first access."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            globals()["__version__"] = version("sdeformer")
        except PackageNotFoundError:  # running from a source tree without installation
            globals()["__version__"] = "0+unknown"
        return globals()["__version__"]
    return _lazy_getattr(name)
