"""Report part 3, 'beyond the paper' (BEYOND.md): every theory check of the noise models, and the new
measurements (partial noise with attention on, the four noise models side by side, phase diagrams).

``run(out, quick=False)`` returns a ``BeyondResult`` and writes ``out/beyond/checks.json`` (one record per
check: model, setting, quantity, predicted, measured, standard_error, step_bias, bound, holds; the partial-noise
records also carry activation, dim, bias_std, share), ``out/beyond/beyond.json`` and the figures of
``beyond_plots``. Sizes: ``PLAN[quick]``; the full plan is sized for <= 10 min on 2 idle cores.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ...io.store import write_json
from ...theory import checks, checks_heads, checks_quadratic, checks_value
from ...theory.quadrature import value_noise_beta_c
from ..results import Result
from . import science

PLAN = {  # quick: a smoke run of every part; full: the report
    False: {
        "paths": 64,
        "gap_horizon": {8: (40.0, 10.0), 64: (16.0, 4.0)},
        "value_paths": 600,
        "value_horizon": 80.0,
        "quad_paths": 1000,
        "heads_dims": (32, 64),
        "heads_paths": 32,
        "width": {"horizon": 30.0, "paths": 8},
        "side": {"horizon": 30.0, "layers": 300, "paths": 16},
        "phase": {"horizon": 20.0, "layers": 200, "paths": 8},
    },
    True: {
        "paths": 16,
        "gap_horizon": {8: (6.0, 1.0), 64: (3.0, 1.0)},
        "value_paths": 100,
        "value_horizon": 8.0,
        "quad_paths": 200,
        "heads_dims": (16,),
        "heads_paths": 8,
        "width": {"horizon": 3.0, "paths": 2},
        "side": {"horizon": 3.0, "layers": 30, "paths": 2},
        "phase": {"horizon": 2.0, "layers": 20, "paths": 2, "betas": (1.0, 4.0), "dims": (4, 8)},
    },
}
VALUE_SETTINGS = ((3, 1.0), (5, 1.2), (5, 2.0), (5, 4.0), (16, 4.0))  # (d, beta) for P(antipodal)


@dataclass(frozen=True)
class BeyondResult(Result):
    """All checks (as records) and the measurements of part 3."""

    checks: tuple[dict, ...]
    partial_width: dict
    side_by_side: dict
    phase: dict
    wall_s: float

    @property
    def held(self) -> int:
        return sum(bool(c["holds"]) for c in self.checks)

    def summary(self) -> str:
        return f"beyond: {self.held}/{len(self.checks)} theory checks hold ({self.wall_s:.0f} s)"


def theory_checks(quick: bool = False, seed: int = 0) -> list[checks.Check]:
    """Every Monte Carlo check of BEYOND.md sections 1-4, at the sizes of ``PLAN[quick]``."""
    p, out = PLAN[quick], []
    for dim, (horizon, burn) in p["gap_horizon"].items():
        for share in (0.5, 0.9, 0.99):
            for solver in ("sde", "discrete"):
                out.append(
                    checks.partial_noise_gap(
                        dim, share, solver=solver, horizon=horizon, burn=burn, paths=p["paths"], width=32, seed=seed
                    )
                )
    for dim, beta in VALUE_SETTINGS:
        out.append(
            checks_value.antipodal(
                beta, dim, h=0.02, horizon=p["value_horizon"] * (2 if dim > 8 else 1), paths=p["value_paths"], seed=seed
            )
        )
    for dim in (3, 5, 16):
        bc = value_noise_beta_c(dim)
        for beta in (bc - 0.4, bc + 0.4) if bc > 0.4 else (bc + 0.4,):
            out.append(
                checks_value.antipode_exponent(beta, dim, h=0.01, horizon=2.0, paths=p["value_paths"], seed=seed)
            )
    for dim in (3, 10):
        for theta in (0.25, 0.5, 0.75):
            out.append(checks_quadratic.antipodal(theta, dim, h=0.02, horizon=4.0, paths=p["quad_paths"], seed=seed))
        out.append(checks_quadratic.autocorrelation(dim, 0.5, paths=p["quad_paths"], seed=seed))
    for gamma, dim in ((1.0, 3), (2.0, 3), (1.0, 6)):
        out.append(checks_quadratic.forcing_rate(gamma, dim, paths=p["quad_paths"] // 2, seed=seed))
    for dim in p["heads_dims"]:
        out.extend(checks_heads.logistic_law(dim, paths=p["heads_paths"], seed=seed))
    return out


def run(
    out: Path | None = None, *, quick: bool = False, seed: int = 0, progress: Callable[[str], None] | None = None
) -> BeyondResult:
    """All of part 3; writes ``out/beyond/`` when ``out`` is given (figures need matplotlib)."""
    start, p = time.perf_counter(), PLAN[quick]
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # thousands of tiny runs: one thread is fastest
    try:
        records = tuple(c.record() for c in theory_checks(quick, seed))
        if progress:
            progress("checks")
        width = science.partial_width(seed=seed, **p["width"])
        side = science.side_by_side(seed=seed, **p["side"])
        phase = science.phase_diagram(seed=seed, **p["phase"])
    finally:
        torch.set_num_threads(old)
    result = BeyondResult(records, width, side, phase, time.perf_counter() - start)
    if out is not None:
        write(result, Path(out) / "beyond")
    return result


def write(result: BeyondResult, folder: Path) -> None:
    """checks.json, beyond.json and the figures into ``folder``."""
    from .plots import write_figures

    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "checks.json", list(result.checks))
    write_json(folder / "beyond.json", result.to_json())
    write_figures(result, folder)


def closing_note(result: BeyondResult) -> str:
    """Plain text: each check's numbers and whether it held; the fitted width slopes."""
    lines = [result.summary()]
    for c in result.checks:
        lines.append(
            f"{'HELD' if c['holds'] else 'FAILED'}  {c['model']:>22} {c['quantity']:<28} predicted "
            f"{c['predicted']:.4g} measured {c['measured']:.4g} +- {c['standard_error']:.2g} "
            f"(step bias {c['step_bias']:.2g})  {_brief(c['setting'])}"
        )
    for k, v in result.partial_width["loglog_slope"].items():
        lines.append(f"partial noise with attention, {k}: width ~ (1 - rho)^{v:.2f}")
    return "\n".join(lines)


def _brief(setting: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items() if k not in ("paths", "horizon"))


def sections(result: BeyondResult, folder: str = "beyond") -> list:
    """Report sections of part 3 (figures relative to the report folder: ``folder``/*.png)."""
    from ...io.report import Figure, Section, Table

    cols = ["model", "quantity", "setting", "predicted", "measured", "standard error", "step bias", "holds"]
    rows = [
        [
            c["model"],
            c["quantity"],
            _brief(c["setting"]),
            c["predicted"],
            c["measured"],
            c["standard_error"],
            c["step_bias"],
            "yes" if c["holds"] else "NO",
        ]
        for c in result.checks
    ]
    width = [
        [r["activation"], r["lambda_bar"], r["beta"], r["share"], r["width"], r["width_se"], r["clusters"]]
        for r in result.partial_width["rows"]
    ]
    f = Path(folder)
    return [
        Section(
            "Part 3: beyond the paper, theory checks (BEYOND.md)",
            [result.summary()],
            [
                Table(
                    cols,
                    rows,
                    "A check holds when |measured - predicted| <= 3 s.e. + the step bias measured by "
                    "halving h (+ a stated O(1/d) allowance for the logistic law; rates are lower bounds).",
                )
            ],
            [Figure(f / "checks.png", "Each model against its theory curve (error bars: 3 s.e.).")],
        ),
        Section(
            "Part 3: partial noise with attention on",
            [closing_note(result).split("\n", 1)[0]],
            [
                Table(
                    ["activation", "lambda_bar", "beta", "share", "width", "s.e.", "clusters"],
                    width,
                    "Stationary width E[1 - cos] (last third of the horizon); log-log slopes: "
                    + ", ".join(f"{k} {v:.2f}" for k, v in result.partial_width["loglog_slope"].items()),
                )
            ],
            [Figure(f / "partial_width.png", "Width against 1 - rho; dashed: two tokens, attention off.")],
        ),
        Section(
            "Part 3: the noise models side by side",
            [],
            figures=[
                Figure(f / "side_by_side.png", "Matched noise strength, same initial tokens."),
                Figure(f / "phase.png", "P(one cluster) at the horizon over (beta, d)."),
            ],
        ),
    ]
