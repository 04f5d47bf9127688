"""sdeformer: deep transformers as interacting particles on the sphere driven by common noise.

Implements arXiv:2604.26898 (see docs/THEORY.md): the discrete stochastic transformer, its kernel
theory, diagnostics of synchronization, and the paper's experiments.

Heavy imports (torch, numpy) are lazy: the names below load their module on first use (PEP 562), so that
``import sdeformer`` and ``sdeformer --help`` stay fast. The root holds what the README's example uses, the
registries, the error and the result type; every other public name lives in its package's face
(``sdeformer.noise.QuadraticForm``, ``sdeformer.dynamics.EulerMaruyama``, ``sdeformer.core.Streams``, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import lazy_exports

if TYPE_CHECKING:  # the root's names: the README's example, the registries, the error and the result type
    __version__: str
    from . import peers, real
    from .attention._softmax import SoftmaxAttention
    from .config import ModelConfig, run_sweep
    from .core._errors import ConfigError
    from .core._kernel import kernel_theory
    from .core._sphere import uniform_sphere
    from .dynamics._discrete import StochasticTransformer
    from .dynamics._loop import SaveAt, Trajectory
    from .dynamics._sde import LimitSDE, make_solver
    from .experiments._registry import EXPERIMENTS
    from .noise import PartialNoise, ValueNoise
    from .noise._fields import GaussianField
    from .noise._mlp import MLPNoise
    from .observables import cluster_count, interaction_energy
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
