"""Two species of tokens: an encoder and a decoder with cross-attention (BEYOND section 9).

Encoder tokens Y ``(..., Ny, d)`` follow self-attention among themselves; decoder tokens X ``(..., Nx, d)``
follow causal self-attention among themselves plus cross-attention to all of Y (two softmaxes, as in the
decoder block of an encoder-decoder transformer). One layer, the generic layer of BEYOND section 0 on the joint
state:

    (Y, X) <- LN((Y, X) + h D(Y, X)),   then   LN(. + xi)

with the noise xi either ``"shared"`` (one field evaluated at all Ny + Nx tokens: common noise across the
species) or ``"own"`` (an independent draw of the field for each species: ``SpeciesNoise``). The state is the
tuple (X, Y) and runs through ``loop.integrate``. Either model equals the one-species model of the joint tokens
[Y; X] with ``cross = Ny`` and ``cross_noise`` = the mode (``ModelConfig(cross=..., cross_noise=...)``, whose
noise ``species_noise`` splits for "own"), so configs, batched runs and sweeps cover both.
``species_observables`` measures each species and the two together.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..attention._masks import MaskedAttention
from ..contracts import AttentionDrift, NoiseField, RandomSource, require
from ..core._errors import ConfigError
from ..core._rng import Seeds, Streams
from ..core._sphere import project
from ..core._validate import positive_float, positive_int
from ..observables import CLUSTER_COS, cluster_count, cosine_matrix, interaction_energy
from ._loop import SaveAt, Trajectory, check_tokens, integrate

NOISE_MODES = ("shared", "own")


class SpeciesNoise:
    """Own noise (BEYOND section 9): an independent draw of ``field`` for each species of the joint tokens
    [Y; X], the first ``encoder`` tokens (Y) then the rest (X), in that order from the run's source.
    ``(..., N, d) -> (..., N, d)``. Raises ConfigError for a field that is no NoiseField or encoder < 1."""

    def __init__(self, field: NoiseField, encoder: int):
        require(field, NoiseField, "noise")
        self.field, self.encoder = field, positive_int("cross", encoder)

    def increment(self, y: torch.Tensor, dt: float, source: RandomSource) -> torch.Tensor:
        k = self.encoder
        encoder = self.field.increment(y[..., :k, :], dt, source)  # (..., K, d)
        return torch.cat([encoder, self.field.increment(y[..., k:, :], dt, source)], dim=-2)  # (..., N, d)

    def __repr__(self) -> str:
        return f"SpeciesNoise({self.field!r}, encoder={self.encoder})"


def check_species_noise(mode: Any, encoder: int) -> None:
    """A config's ``cross_noise`` (``mode``): one of NOISE_MODES, and "own" only with two species (``encoder`` =
    K > 0 encoder tokens, the config's ``cross``). Raises ConfigError naming ``cross_noise``."""
    if not isinstance(mode, str) or mode not in NOISE_MODES:
        raise ConfigError("cross_noise", mode, f"one of {list(NOISE_MODES)}")
    if mode == "own" and not encoder:
        raise ConfigError("cross_noise", mode, "own noise needs two species: cross = K > 0 encoder tokens")


def species_noise(field: NoiseField | None, encoder: int, mode: str) -> NoiseField | None:
    """The noise of a layer: ``field`` itself, but split per species (``SpeciesNoise``) where there are two
    species (``encoder`` = K > 0 encoder tokens) with ``mode`` "own"."""
    if field is None or not encoder or mode == "shared":
        return field
    return SpeciesNoise(field, encoder)


class TwoSpecies:
    """Encoder-decoder token dynamics (module docstring). ``attention``: a drift of the joint tokens [Y; X]
    that knows the split (default ``MaskedAttention(beta, scale, cross=Ny)``, built at the first step);
    ``noise``: a NoiseField or None; ``mode``: "shared" or "own". Raises ConfigError for bad sizes, mode or
    parts."""

    def __init__(
        self,
        layers: int,
        horizon: float,
        *,
        noise: NoiseField | None = None,
        mode: str = "shared",
        attention: AttentionDrift | None = None,
        beta: float = 1.0,
        scale: float = 1.0,
    ):
        self.layers, self.horizon = positive_int("layers", layers), positive_float("horizon", horizon)
        if mode not in NOISE_MODES:
            raise ConfigError("species noise", mode, f"one of {list(NOISE_MODES)}")
        if noise is not None:
            require(noise, NoiseField, "noise")
        if attention is not None:
            require(attention, AttentionDrift, "attention")
        self.noise, self.mode, self.attention, self.beta, self.scale = noise, mode, attention, beta, scale

    @property
    def dt(self) -> float:
        return self.horizon / self.layers

    def _attention(self, encoder: int) -> AttentionDrift:
        if self.attention is None:
            self.attention = MaskedAttention(self.beta, self.scale, cross=encoder)
        return self.attention

    def step(self, state: tuple[torch.Tensor, torch.Tensor], source: RandomSource) -> tuple[torch.Tensor, torch.Tensor]:
        """One layer of the state (X ``(..., Nx, d)``, Y ``(..., Ny, d)``)."""
        x, y = state
        ny = y.shape[-2]
        z = torch.cat([y, x], dim=-2)  # (..., Ny + Nx, d)
        z = project(z + self.dt * self._attention(ny).drift(z, source))
        if self.noise is not None:
            noise = self.noise if self.mode == "shared" else SpeciesNoise(self.noise, ny)
            z = project(z + noise.increment(z, self.dt, source))
        return z[..., ny:, :], z[..., :ny, :]

    def run(
        self,
        x0: torch.Tensor,
        y0: torch.Tensor,
        seed: Seeds = 0,
        saveat: SaveAt | int | None = None,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> Trajectory:
        """Run all layers from LN(X0) ``(..., Nx, d)`` and LN(Y0) ``(..., Ny, d)`` (equal batch shapes and d);
        ``x`` of the result is the tuple (X ``(S, ..., Nx, d)``, Y ``(S, ..., Ny, d)``). Raises ConfigError for
        bad tokens or saveat."""
        check_tokens(x0, "x0")
        check_tokens(y0, "y0")
        if x0.shape[:-2] != y0.shape[:-2] or x0.shape[-1] != y0.shape[-1]:
            raise ConfigError("y0", tuple(y0.shape), f"needs the batch shape and d of x0 {tuple(x0.shape)}")
        source = Streams(seed, tuple(x0.shape[:-2]), x0.device)
        return integrate(self.step, (project(x0), project(y0)), self.dt, self.layers, source=source, saveat=saveat)


def cross_energy(x: torch.Tensor, y: torch.Tensor, beta: float) -> torch.Tensor:
    """1/(2 Nx Ny) sum_ij (e^beta - e^{beta <x_i, y_j>}) ``(...)``: zero when every decoder token sits on every
    encoder token."""
    g = (project(x) @ project(y).transpose(-1, -2)).clamp(max=1.0)  # (..., Nx, Ny)
    return (-torch.expm1(beta * (g - 1))).mean((-1, -2)) * math.exp(beta) / 2


def species_observables(
    x: torch.Tensor, y: torch.Tensor, beta: float, threshold: float = CLUSTER_COS
) -> dict[str, torch.Tensor]:
    """Per species and across them, each ``(...)``: energies (``energy_x``, ``energy_y``, ``energy_xy``),
    cluster counts (``clusters_x``, ``clusters_y``, ``clusters_joint``) and ``attached``, the fraction of
    decoder tokens within cosine ``threshold`` of some encoder token."""
    joint = torch.cat([y, x], dim=-2)
    cos_xy = cosine_matrix(joint)[..., y.shape[-2] :, : y.shape[-2]]  # (..., Nx, Ny)
    return {
        "energy_x": interaction_energy(x, beta),
        "energy_y": interaction_energy(y, beta),
        "energy_xy": cross_energy(x, y, beta),
        "clusters_x": cluster_count(x, threshold),
        "clusters_y": cluster_count(y, threshold),
        "clusters_joint": cluster_count(joint, threshold),
        "attached": (cos_xy.amax(-1) > threshold).to(x.dtype).mean(-1),
    }
