"""The report section of ``auxiliary`` (the computation: ``_auxiliary``; docs/field.md, "Auxiliary variables")."""

from __future__ import annotations

from pathlib import Path

from ...io._report import Figure, Section, Table
from .._registry import Context
from ._auxiliary import NOISE_WIDTH, RATE_TOL, AuxiliaryResult, run_and_write


def section(result: AuxiliaryResult, folder: str = "auxiliary") -> Section:
    verdict = "holds" if result.holds else "fails"
    rows = [
        [
            d,
            result.w2_final[k],
            result.w2_final_max[k],
            f"{result.dirac[k]:.4f} [{result.dirac_lo[k]:.4f}, {result.dirac_hi[k]:.4f}]",
            result.dirac_predicted[k],
            f"{result.w2_off_final[k]:.4f} [{result.w2_off_final_lo[k]:.4f}, {result.w2_off_final_hi[k]:.4f}]",
            f"{result.rate[k]:.6f} [{result.rate_lo[k]:.6f}, {result.rate_hi[k]:.6f}]",
            result.energy_ratio[k],
        ]
        for d, k in ((d, str(d)) for d in result.dims)
    ]
    return Section(
        "Auxiliary variables: the token law is the push-forward of the positions' law (Imaizumi et al. 2026)",
        [
            "Each token carries its position's rotation R_i and attends to the others read at their positions "
            "(the attention part 'positional'); the energy's maximisers are x_i = R_i^T c, the push-forward of the "
            "positions' law, not a point mass. At depth T the token law's W2 to that push-forward (c fitted) is "
            + ", ".join(f"{result.w2_final_max[str(d)]:.1e} (d = {d}, largest seed)" for d in result.dims)
            + "; its distance to the nearest point mass equals the push-forward's own and is at least "
            + ", ".join(f"{result.dirac_min[str(d)]:.3f}" for d in result.dims)
            + " in every seed (the point-mass prediction, 0, is rejected). W2 decays at the fitted rate "
            + ", ".join(f"{result.rate[str(d)]:.6f}" for d in result.dims)
            + f" against the theory's ln(1 + dt)/dt = {result.theory_rate:.6f} (tolerance {RATE_TOL:.0%}). With the "
            "auxiliary part switched off (the plain softmax attention, the same starts) the tokens collapse and "
            "their W2 to the push-forward stays of order 1: "
            + ("the wrong model fails the check" if result.off_fails else "the check has no power here")
            + f". The check {verdict}."
            + (
                f" These runs add common MLP noise su = sw = {result.noise} (width {NOISE_WIDTH}), beyond the paper's "
                "noise-free setting: no claim is made for them."
                if result.noise > 0
                else ""
            ),
        ],
        [
            Table(
                [
                    "d",
                    "W2 at T (geo. mean)",
                    "W2 at T (largest seed)",
                    "W2 to a point mass [95 %]",
                    "push-forward's own",
                    "W2, auxiliary off [95 %]",
                    "decay rate [95 %]",
                    "E / E_max (smallest)",
                ],
                rows,
                f"over {len(result.w2[str(result.dims[0])])} seeds per d; the decay rate against "
                f"r = ln(1 + dt)/dt = {result.theory_rate:.6f}",
                from_runs=True,
                exact={
                    "d": "a setting",
                    "W2 at T (geo. mean)": "at float64's floor; the largest seed is the bound",
                    "W2 at T (largest seed)": "a maximum over seeds (the check's bound)",
                    "push-forward's own": "the prediction at the fitted c (mean over seeds)",
                    "E / E_max (smallest)": "a minimum over seeds",
                },
            )  # fmt: skip
        ],
        [
            Figure(
                Path(folder) / result.figure,
                "left: W2 between the token law and the predicted push-forward against depth, per d, auxiliary "
                "part on (solid) and off (dashed), geometric mean over seeds with its 95 % band, and the theory's "
                "rate; right: the tokens at T against their positions with the push-forward R(phi)^T c",
            )
        ],
    )


def report(ctx: Context) -> list[Section]:
    from ...plots._auxiliary import auxiliary_figure

    folder = ctx.out / "auxiliary"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    auxiliary_figure(result, folder / result.figure)
    return [section(result)]
