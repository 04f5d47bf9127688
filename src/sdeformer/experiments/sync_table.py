"""The synchronization check over the 24 Table 1 settings x attention scale in {+1, 0, -1} (THEORY section 5).

``sync_table()`` runs ``sync.sync_check`` small (TABLE_RUN) in float64 and float32 and returns one row per
setting: eps and how it was obtained, lambda_bar', the floor and the verdicts. ``python -m
sdeformer.experiments.sync_table [out.md]`` writes the rows as a markdown table.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

from ..store import atomic_write_text
from .sync import sync_check

ACTIVATIONS = ("relu", "silu", "sigmoid", "tanh")
DIMS = (5, 64, 128)
BIAS_STDS = (0.0, 0.1)
SCALES = (1.0, 0.0, -1.0)
TABLE_RUN: dict[str, Any] = dict(runs=8, tokens=8, steps=200, horizon=5.0)


def sync_table(**overrides: Any) -> list[dict[str, Any]]:
    """One row per (activation, d, sigma, s): the float64 check's constants and verdict, and the float32 verdict."""
    cfg = {**TABLE_RUN, **overrides}
    rows = []
    for act in ACTIVATIONS:
        for d in DIMS:
            for sigma in BIAS_STDS:
                for s in SCALES:
                    r = sync_check(act, d, sigma, attention_scale=s, dtype=torch.float64, **cfg)
                    r32 = sync_check(act, d, sigma, attention_scale=s, dtype=torch.float32, **cfg)
                    rows.append(
                        {
                            "setting": r.label,
                            "eps": r.eps,
                            "eps_method": r.eps_method,
                            "lambda_bar": r.lambda_bar,
                            "lambda_bar_prime": r.lambda_bar_prime,
                            "odd_field": r.odd_field,
                            "bound_rate": r.predicted_rate,
                            "bound_T": float(r.bound[-1]),
                            "energy_T": r.final_energy["sde"],
                            "floor": r.floor,
                            "verdict": r.verdict,
                            "floor32": r32.floor,
                            "verdict32": r32.verdict,
                        }
                    )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a markdown table."""
    head = (
        "| setting | eps | eps from | lambda_bar | lambda_bar' | eps + lambda_bar' | bound(T) | E E_beta(T) SDE "
        "| floor f64 | verdict f64 | floor f32 | verdict f32 |\n|" + "---|" * 12 + "\n"
    )
    body = "".join(
        f"| {r['setting']}{' (odd)' if r['odd_field'] else ''} | {r['eps']:g} | {r['eps_method']} | "
        f"{r['lambda_bar']:.4g} | {r['lambda_bar_prime']:.4g} | {r['bound_rate']:.4g} | {r['bound_T']:.2g} | "
        f"{r['energy_T']:.2g} | {r['floor']:.2g} | {r['verdict']} | {r['floor32']:.2g} | {r['verdict32']} |\n"
        for r in rows
    )
    return head + body


if __name__ == "__main__":
    text = markdown(sync_table())
    if len(sys.argv) > 1:
        atomic_write_text(Path(sys.argv[1]), text)
    print(text)
