"""The per-block tables of docs/real.md ("The verdict") from a ``real.json``: ``python benchmarks/real_tables.py
DIR/real.json``. Per block: the content-token common share with its 95 % interval, the theory's band at the real
inputs (fitted kernel and narrowest member), the all-token share and the massive share (contrast), the share and
kernel verdicts with the block's verdict by the criterion of docs/real.md; then the fitted model's ``parts_at``
per ablation and the flags."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _f(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _ci(v, lo, hi) -> str:
    return f"{_f(v)} [{_f(lo)}, {_f(hi)}]"


def block_verdict(share: str, kernel: str | None) -> str:
    if share == "below" and kernel == "outside":
        return "fails"
    if share == "inside" and kernel == "inside":
        return "holds"
    return "mixed"


def tables(r: dict) -> str:
    s = r["settings"]
    lines = [
        f"{s['model']} ({r['model_type']}, d = {r['dim']}, {r['layers']} blocks) on {s['text'] or 'Shakespeare'}: "
        f"{r['sentences_measured']} sentences, {r['tokens']} {r['token_rule']} tokens",
        "",
        "| block | common share (content) | theory band (fitted) | narrowest member | all tokens | massive share |"
        " share | kernel (inside fraction) | block |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lo, hi = r["common_share_interval"]
    alo, ahi = r["common_share_all_interval"]
    mlo, mhi = r["massive_share_interval"]
    for k in range(r["layers"]):
        lines.append(
            f"| {k + 1} | {_ci(r['common_share'][k], lo[k], hi[k])} "
            f"| {_f(r['common_share_theory'][k])} [{_f(r['common_share_theory_lo'][k])}, "
            f"{_f(r['common_share_theory_hi'][k])}] "
            f"| {_f(r['common_share_narrowest'][k])} [{_f(r['common_share_narrowest_lo'][k])}, "
            f"{_f(r['common_share_narrowest_hi'][k])}] "
            f"| {_ci(r['common_share_all'][k], alo[k], ahi[k])} | {_ci(r['massive_share'][k], mlo[k], mhi[k])} "
            f"| {r['share_verdict'][k]} | {r['kernel_verdict'][k]} ({_f(r['kernel_inside_fraction'][k], 2)}) "
            f"| {block_verdict(r['share_verdict'][k], r['kernel_verdict'][k])} |"
        )
    v, fitted = r["verdict"], r.get("fitted", {})
    lines += ["", f"mean_cos (L + 1): {[round(x, 3) for x in r['mean_cos']]}"]
    lines.append(
        f"mean_cos without outlier coordinates: {[round(x, 3) for x in r['mean_cos_trimmed']]} "
        f"(coordinates removed per layer: {r['trimmed_coordinates']})"
    )
    keys = (
        "mean_cos_slope",
        "mean_cos_slope_interval",
        "slope_excess_over_untrained",
        "slope_excess_over_untrained_interval",
        "effective_rank_change",
        "effective_rank_change_interval",
        "clusters_change",
        "clusters_change_interval",
        "tokens_synchronize",
        "theory_synchronizes",
        "kernel_fit_boundary_theory",
        "partial_share_clipped",
        "share_below_one",
    )
    lines += [f"{k}: {v.get(k)}" for k in keys]
    for name, part in r.get("controls", {}).items():
        lines.append(
            f"control {name}: common share {[round(x, 3) for x in part['common_share']]}; share verdict "
            f"{part.get('share_verdict')}; kernel verdict {part.get('kernel_verdict')}"
        )
    for name, ab in fitted.get("ablations", {}).items():
        lines.append(f"fitted model, {name}: parts_at {ab['parts_at']}")
    prop = fitted.get("propagated")
    if prop:
        lines.append(
            f"propagated ({prop['draws']} draws, {prop['sentences']} sentences): parts_at "
            f"{ {k: x['parts_at'] for k, x in prop.items() if isinstance(x, dict)} }"
        )
    if fitted:
        lines.append(f"dt (angular step): {[round(x, 4) for x in fitted['dt']]}")
    return "\n".join(lines)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        print(tables(json.loads(Path(path).read_text(encoding="utf-8"))))
        print()
