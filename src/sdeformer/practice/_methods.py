"""The training methods compared in the practice tasks (THEORY section 7), and the noise law they use.

- ``baseline``: plain training.
- ``noise-S``: ``CommonNoise`` after every block (residual stream), ``dt = 1 / L``, scale S, in training only.
  The noise law is GELU with bias stds sU = sW = 0.1, width m = 64 (at d = 32 and 64, lambda_bar < 0: a
  synchronizing law by the theorem; GELU without biases has lambda_bar > 0 there). The law's kernel does
  not depend on m; m = 64 keeps the per-sequence draw of the field cheap.
- ``neftune``: uniform embedding noise of strength alpha = 5 (Jain et al., NEFTune).
- ``stochdepth``: stochastic depth, drop probability rising linearly to 0.1 at the last block.
- ``energy+`` / ``energy-``: ``InteractionEnergy`` (beta = 1) of every block output, weight +0.1 (penalises
  token divergence: pushes towards synchronization) or -0.1 (rewards spread).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..core._errors import ConfigError

NOISE_LAW = {"activation": "gelu", "width": 64, "su": 0.1, "sw": 0.1}  # CommonNoise keyword arguments
ENERGY_BETA = 1.0


@dataclass(frozen=True)
class Method:
    name: str
    noise_scale: float = 0.0  # CommonNoise scale after every block (0 = off)
    neftune_alpha: float = 0.0  # NEFTune alpha (0 = off)
    drop_path: float = 0.0  # stochastic depth rate of the last block (0 = off)
    energy_weight: float = 0.0  # weight of E_beta of the block outputs in the loss (0 = off)

    def settings(self) -> dict:
        return asdict(self)


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("baseline"),
        Method("noise-0.1", noise_scale=0.1),
        Method("noise-0.3", noise_scale=0.3),
        Method("noise-1", noise_scale=1.0),
        Method("neftune", neftune_alpha=5.0),
        Method("stochdepth", drop_path=0.1),
        Method("energy+", energy_weight=0.1),
        Method("energy-", energy_weight=-0.1),
    )
}


def get_methods(names: str | list[str]) -> list[Method]:
    """Methods by name; ``"all"`` or a comma-separated list. Raises ConfigError for an unknown name."""
    if isinstance(names, str):
        names = list(METHODS) if names.strip() == "all" else [n.strip() for n in names.split(",") if n.strip()]
    out = []
    for n in names:
        if n not in METHODS:
            raise ConfigError("method", n, f"one of {list(METHODS)} or 'all'")
        out.append(METHODS[n])
    if not out:
        raise ConfigError("method", names, f"one of {list(METHODS)} or 'all'")
    return out
