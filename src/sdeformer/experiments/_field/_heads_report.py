"""``heads``'s report section and entry point (the experiment: ``_heads``; docs/field.md, "Many heads")."""

from __future__ import annotations

from pathlib import Path

from ...io._report import Figure, Section, Table
from .._registry import Context
from ._heads import HeadsResult, run_and_write


def section(result: HeadsResult, folder: str = "heads") -> Section:
    verdict = "agrees" if result.agrees else "does not agree"
    return Section(
        "Many heads: hidden states against the H -> infinity limit (Gibson, Reisinger 2026)",
        [
            "An attention-only transformer in R^d whose heads (scaled 1/H) are i.i.d. (a mean head plus a random "
            f"resampled head) against its H -> infinity limit at the same depth L = {result.depth}. Fitted slope "
            f"of the RMS deviation against H: {result.slope:.3f} "
            f"[{result.slope_lo:.3f}, {result.slope_hi:.3f}] (bootstrap 95 % over head draws) against the "
            f"paper's exponent {result.theory_slope:g}: {verdict}. The wrong model, heads scaled 1/sqrt(H) "
            f"(fluctuations that do not fall with H), has slope {result.wrong_slope:.3f} "
            f"[{result.wrong_slope_lo:.3f}, {result.wrong_slope_hi:.3f}]: "
            + ("the check fails it." if result.wrong_rejected else "not excluded at this size.")
            + f" Against depth at fixed H: slope {result.depth_slope:.3f} [{result.depth_slope_lo:.3f}, "
            f"{result.depth_slope_hi:.3f}] (leading order -1/2; the paper's bound L^(-1/3) is respected when the "
            "slope is below -1/3).",
            f"Training (every head's V and A trained by {result.train_steps} AdamW steps on a fixed task, "
            f"L = {result.train_depth}): the trained hidden states' spread over independent "
            f"initialisations has slope {result.train_slope:.3f} [{result.train_slope_lo:.3f}, "
            f"{result.train_slope_hi:.3f}] against H: -1/2 is "
            + ("inside" if result.train_slope_lo <= result.theory_slope <= result.train_slope_hi else "outside")
            + ", a spread that does not fall with H (slope 0) "
            + ("outside." if not result.train_slope_lo <= 0.0 <= result.train_slope_hi else "not excluded.")
            + f" Final loss {result.train_loss[0]:.3f} (H = 1) .. {result.train_loss[-1]:.3f} "
            f"(H = {result.train_heads[-1]}).",
            "Backward (the paper's limit is forward-backward): the backpropagated variables p_l = N dPhi/dx_l of "
            "the terminal loss Phi = mean_i <e_1, x_i> + (kappa/2)|x_i|^2, by autograd on "
            f"{result.adjoint_draws} head draws per H at L = {result.depth}, against their H -> infinity limit "
            f"on the same draws. First layer (p_0): slope {result.adjoint_slope:.3f} "
            f"[{result.adjoint_slope_lo:.3f}, {result.adjoint_slope_hi:.3f}] against -1/2: "
            + ("agrees" if result.adjoint_agrees else "does not agree")
            + f"; averaged over the layers: {result.adjoint_layers_slope:.3f} [{result.adjoint_layers_slope_lo:.3f}, "
            f"{result.adjoint_layers_slope_hi:.3f}]. The wrong model (heads scaled 1/sqrt(H)): "
            f"{result.adjoint_wrong_slope:.3f} [{result.adjoint_wrong_slope_lo:.3f}, "
            f"{result.adjoint_wrong_slope_hi:.3f}]; over {result.adjoint_catch_seeds} independent seeds at this size "
            f"the check fails it in a fraction {result.adjoint_catch_rate:g} (catch rate) and fails the right model "
            f"in {result.adjoint_false_alarm_rate:g} (false alarms; nominal 0.05). The check (forward, training and "
            "backward slopes against -1/2, both wrong models failed, the backward catch rate at least 0.8) "
            + ("holds." if result.holds else "fails."),
        ],
        [
            Table(
                ["H", "RMS deviation", "95% interval", "wrong model (1/sqrt(H))", "wrong model 95%"],
                [
                    [h, m, f"[{lo:.4g}, {hi:.4g}]", w, f"[{wl:.4g}, {wh:.4g}]"]
                    for h, m, lo, hi, w, wl, wh in zip(
                        result.heads,
                        result.deviation,
                        result.deviation_lo,
                        result.deviation_hi,
                        result.wrong_deviation,
                        result.wrong_deviation_lo,
                        result.wrong_deviation_hi,
                    )
                ],
                "final-layer deviation from the H -> infinity limit at fixed depth, RMS over head draws",
                from_runs=True,
                uncertainty={"RMS deviation": "95% interval", "wrong model (1/sqrt(H))": "wrong model 95%"},
                exact={"H": "a setting"},
            ),
            Table(
                ["H", "spread after training", "95% interval", "final loss"],
                [
                    [h, m, f"[{lo:.4g}, {hi:.4g}]", loss]
                    for h, m, lo, hi, loss in zip(
                        result.train_heads,
                        result.train_spread,
                        result.train_spread_lo,
                        result.train_spread_hi,
                        result.train_loss,
                    )
                ],
                "trained hidden states: RMS spread over independent initialisations, and the loss (mean over them)",
                from_runs=True,
                uncertainty={"spread after training": "95% interval"},
                exact={"H": "a setting", "final loss": "a mean over the same runs (its spread is the column before)"},
            ),
            Table(
                [
                    "H",
                    "RMS |p_0 - p_0^inf|",
                    "95% interval",
                    "over layers",
                    "layers 95%",
                    "wrong model (1/sqrt(H))",
                    "wrong model 95%",
                ],
                [
                    [h, m, f"[{lo:.4g}, {hi:.4g}]", a, f"[{al:.4g}, {ah:.4g}]", w, f"[{wl:.4g}, {wh:.4g}]"]
                    for h, m, lo, hi, a, al, ah, w, wl, wh in zip(
                        result.adjoint_heads,
                        result.adjoint_deviation,
                        result.adjoint_deviation_lo,
                        result.adjoint_deviation_hi,
                        result.adjoint_layers_deviation,
                        result.adjoint_layers_deviation_lo,
                        result.adjoint_layers_deviation_hi,
                        result.adjoint_wrong_deviation,
                        result.adjoint_wrong_deviation_lo,
                        result.adjoint_wrong_deviation_hi,
                    )
                ],
                "backpropagated variables: deviation from the H -> infinity limit at the first layer and averaged "
                "over the layers, RMS over head draws",
                from_runs=True,
                uncertainty={
                    "RMS |p_0 - p_0^inf|": "95% interval",
                    "over layers": "layers 95%",
                    "wrong model (1/sqrt(H))": "wrong model 95%",
                },
                exact={"H": "a setting"},
            ),
        ],  # fmt: skip
        [
            Figure(
                Path(folder) / result.figure,
                "RMS deviation of the hidden states against H and against L at fixed H (top), of the trained "
                "hidden states and of the backpropagated variables against H (bottom), log-log, 95 % intervals, "
                "with the fitted slopes, H^(-1/2) and the wrong model",
            )
        ],  # fmt: skip
    )


def report(ctx: Context) -> list[Section]:
    from ...plots._field_heads import heads_figure

    folder = ctx.out / "heads"
    result = run_and_write(folder, ctx.quick, ctx.seed, ctx.advance, ctx.settings)
    heads_figure(result, folder / result.figure)
    return [section(result)]
