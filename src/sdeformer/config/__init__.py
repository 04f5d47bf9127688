"""Validated, frozen configs for the discrete model (docs/design.md: one place for bad-input errors), and the one
place where a config becomes built parts.

``ModelConfig`` holds every parameter of THEORY section 1; ``load_config_file`` reads TOML or YAML and rejects
keys that do not exist; ``ModelConfig.build()`` returns the model (its parts built from the registries; the
dynamics' time loop takes built parts, never a config). ``run_sweep`` / ``run_group`` / ``sweep_measure`` group
many configs into batched runs (``batched_fields``: what may differ inside one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ..core._config_files import load_config_file, token_starts
    from ._batches import run_group, run_sweep, sweep_measure
    from ._blocks import batched_fields
    from ._model import DEFAULTS, DTYPES, LATER_FIELDS, NOISE_OFF, ModelConfig, refuse_unread

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
