"""The config-to-parts step, in one place: the parts of one generic layer named by a ``ModelConfig``, built from
the registries (``registry``).

``x_i <- LN(LN(x_i + dt D_i(X)) + xi_i)`` (THEORY section 1; BEYOND section 0): ``cfg.noise`` names the field
xi in ``registry.NOISES``, ``cfg.share`` = rho its sharing fraction (BEYOND section 1; rho = 1 builds the field
itself, so the numbers are those of the common noise), ``cfg.attention`` the drift D in
``registry.ATTENTIONS`` (``cfg.causal`` a causal mask), ``cfg.norm`` where the layer normalizes around the two
(``registry.NORMS``, BEYOND section 6; Post-LN as written). ``parts`` builds the three once; ``model`` hands
them to the time loop (``dynamics``, which takes built parts only). ``ModelConfig.build`` builds one run;
``batches.build_batched`` a batch of runs, with the fields of ``batched_fields`` as ``(G,)`` tensors.
``cfg.solver`` names an SDE scheme (``registry.SOLVERS``): ``model`` then builds that solver of the limit SDE
(THEORY section 3), with the noise replaced by the limit field its registry entry declares (``noise_entry``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ..core._errors import ConfigError
from ..dynamics._discrete import StochasticTransformer
from ..dynamics._sde import LimitSDE, make_solver
from ..dynamics._species import species_noise
from ..noise._partial import PartialNoise
from ..params import ALIASES
from ..registry import ATTENTIONS, NOISES, NORMS, SOLVERS, Entry, Params


def noise_entry(cfg: Any) -> Entry:
    """The registry entry of ``cfg``'s noise: ``cfg.noise``, or for an SDE scheme (``cfg.solver``) the limit
    field it declares (``Entry.limit``; THEORY section 3: the MLP's is the Gaussian field of its kernel)."""
    entry = NOISES[cfg.noise]
    return NOISES[entry.limit] if cfg.solver and entry.limit else entry


def check_solver(cfg: Any) -> None:
    """Raise ConfigError (naming ``solver``) unless ``cfg.solver`` is a registered scheme whose needs the parts
    meet: its entry's ``check``, and a noise with a limit variance (the Ito correction of THEORY section 3); naming
    ``norm`` for a scheme with a radius (its limit's (theta, r) state is for ``LimitSDE`` in Python only)."""
    scheme = SOLVERS[cfg.solver]  # ConfigError for an unknown name
    if scheme.check is not None:
        scheme.check(cfg)
    entry = noise_entry(cfg)
    if cfg.mlp and "limit" not in entry.claims:
        raise ConfigError("solver", cfg.solver, f"needs a noise with a limit field; {cfg.noise!r} declares none")
    if not norm(cfg).on_sphere:  # Pre-, Peri-, Mix-LN: the limit's state is (theta, r) (BEYOND section 6)
        raise ConfigError(
            "norm",
            cfg.norm,
            f"with solver={cfg.solver!r}: this scheme's limit SDE carries a (theta, r) state that a config's runs"
            " (simulate, sweeps, the observables) do not take; use the discrete model (no solver) or, in Python,"
            " LimitSDE(field, attention, norm=...) with make_solver",
        )


class Parts(NamedTuple):
    """The built parts of one layer (``parts``): what the model's time loop receives, built once per run."""

    noise: Any  # a NoiseField or None (noise off)
    attention: Any  # an AttentionDrift
    norm: Any  # a NormScheme (BEYOND section 6)


def parts(
    cfg: Any, overrides: Mapping[str, Any] | None = None, seeds: Sequence[int] | None = None, **options: Any
) -> Parts:
    """The noise, attention and norm of ``cfg`` built from the registries, once (``overrides``: ``(G,)`` tensors
    of a batched run; ``seeds``: its runs' config seeds; ``options``: the noise's fast paths)."""
    return Parts(noise_field(cfg, overrides, **options), attention(cfg, overrides, seeds), norm(cfg))


def model(cfg: Any, built: Parts) -> Any:
    """The model of ``cfg`` from its built parts: the discrete ``StochasticTransformer`` (THEORY section 1), or
    the solver ``cfg.solver`` of the limit SDE with ``cfg.layers`` steps (THEORY section 3)."""
    if not cfg.solver:
        return StochasticTransformer(cfg.layers, cfg.horizon, *built)
    return make_solver(LimitSDE(*built), cfg.layers, cfg.horizon, cfg.solver)


def batched_fields(cfg: Any) -> tuple[str, ...]:
    """The config fields that may differ within one batched run of ``cfg``'s kind (the rest form its group):
    the seed, and every field that a part declares batched unless the other part reads it unbatched."""
    noise, attention = noise_entry(cfg), ATTENTIONS[cfg.attention]
    fields: list[str] = ["seed"]
    for part, other in ((noise, attention), (attention, noise)):
        fields += [f for f in part.batched_fields(cfg) if f not in other.reads or f in other.batched_fields(cfg)]
    for kind, part in (("noise", noise), ("attention", attention)):  # the parts' own batched parameters
        fields += [ALIASES.get(f"{kind}.{p.name}", f"{kind}.{p.name}") for p in part.params if p.batched]
    return tuple(dict.fromkeys(fields))


def noise_field(cfg: Any, overrides: Mapping[str, Any] | None = None, **options: Any) -> Any:
    """The noise field of ``cfg`` (None when ``cfg.mlp`` is off): the registered part, partly shared where
    ``share`` < 1 (BEYOND 2), split per species where ``cross_noise`` is "own" (BEYOND 9); ``overrides``: values
    replacing the config's (e.g. ``(G,)`` tensors of a batched run); ``options`` go to the part (e.g. the MLP's
    fast paths)."""
    if not cfg.mlp:
        return None
    entry = noise_entry(cfg)
    field = NOISES.build(
        entry.name, Params(cfg, overrides, kind="noise", **(options if entry.name == cfg.noise else {}))
    )
    return species_noise(field if cfg.share == 1.0 else PartialNoise(field, cfg.share), cfg.cross, cfg.cross_noise)


def attention(cfg: Any, overrides: Mapping[str, Any] | None = None, seeds: Sequence[int] | None = None) -> Any:
    """The attention drift of ``cfg``; ``overrides`` as in ``noise_field``; ``seeds``: the runs' config seeds of
    a batch (random attention draws one Q^T K, V per run)."""
    return ATTENTIONS.build(cfg.attention, Params(cfg, overrides, seeds=seeds, kind="attention"))


def column(configs: Sequence[Any], name: str, dtype: torch.dtype) -> torch.Tensor:
    """One config field (or a part's own parameter ``KIND.NAME``) over a batch of configs as a ``(G,)`` tensor."""
    return torch.tensor([c.value(name) for c in configs], dtype=dtype)


def norm(cfg: Any) -> Any:
    """The normalization scheme of ``cfg`` (``registry.NORMS``: ``NAME`` or ``NAME:PARAMETER``; BEYOND section 6)."""
    return NORMS.build(cfg.norm.partition(":")[0], Params(cfg, kind="norm"))
