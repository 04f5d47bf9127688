"""The figure registry: the file name of every figure ``plots`` draws for a report part, keyed by experiment.

The plots own these names; the experiments import them from here to cite the figures in their report sections
(``sdeformer.plots.FIGURES``). This module imports nothing: the experiments read the names without loading
matplotlib. The grid's and the rates' figures are named by their results (``figure``: one per panel choice or
kind). ``SYNC_PANELS`` says which sync results (in the order of the theorems' sync settings: attention on,
then the noise-only ones) each sync figure draws.
"""

from __future__ import annotations

FIGURES: dict[str, dict[str, str]] = {
    "simulate": {"energy": "energy.png"},  # in the run directory
    "figure1": {"figure1": "figure1.png"},
    "ode": {"order": "ode_order.png"},
    "long-context": {"slope": "long_context.png"},
    "independent-noise": {"critical": "independent_noise.png"},
    "context-chaos": {"chaos": "context_chaos.png"},
    "escape": {"escape": "escape.png"},
    "low-temperature": {"distance": "low_temperature.png"},
    "auxiliary": {"pushforward": "auxiliary.png"},
    "heads": {"heads": "heads.png"},
    "beyond": {
        "checks": "checks.png",
        "partial_width": "partial_width.png",
        "side_by_side": "side_by_side.png",
        "phase": "phase.png",
    },
    "theorems": {
        "sync_attention": "sync_attention.png",
        "sync_noise_only": "sync_noise_only.png",
        "lyapunov": "lyapunov.png",
        "phase": "phase.png",
    },
    "spde": {
        "d2": "spde_circle.png",
        "d3": "spde_sphere.png",
        "error": "spde_error_vs_n.png",
        "large": "spde_chaos_large.png",
    },
    "architectures": {
        "alibi": "alibi_profile.png",
        "graphs": "graph_rates.png",
        "staircase": "staircase.png",
        "durations": "plateau_durations.png",
        "species": "species.png",
    },
    "real": {
        "band": "real_band.png",
        "statistics": "real_statistics.png",
        "kernel": "real_kernel.png",
        "share": "real_share.png",
        "attention": "real_attention.png",
        "models": "real_band_models.png",
    },
}
SYNC_PANELS = {
    FIGURES["theorems"]["sync_attention"]: slice(0, 3),
    FIGURES["theorems"]["sync_noise_only"]: slice(3, 6),
}
