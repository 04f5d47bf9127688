"""The figure of docs/real.md, "The verdict": one panel per model, the common share of the chosen tokens per
relative depth l/L with its 95 % interval, the theory's band at the real inputs (the fitted member and the
narrowest; THEORY section 2), the controls' shares; an inset of the pair-cosine curve at three depths against
the theory's null band and independent noise (cosine 0), with the pair counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._save import plt, save_figure

COLORS = ("tab:blue", "tab:orange", "tab:green")


def _panel(ax, record: dict) -> None:
    layers = int(record["layers"])
    x = np.arange(1, layers + 1) / layers
    share = np.asarray(record["common_share"], dtype=float)
    lo, hi = (np.asarray(v, dtype=float) for v in record["common_share_interval"])
    ax.errorbar(x, share, yerr=[share - lo, hi - share], fmt="o-", color="k", ms=3, label="trained (95 %)")
    for name, style, alpha in (("theory", "tab:red", 0.25), ("narrowest", "tab:purple", 0.15)):
        low, high = (np.asarray(record[f"common_share_{name}_{e}"], dtype=float) for e in ("lo", "hi"))
        label = "theory, fitted kernel" if name == "theory" else "theory, narrowest member"
        ax.fill_between(x, low, high, color=style, alpha=alpha, label=f"{label} (95 %)")
    for name, part in record.get("controls", {}).items():
        ax.plot(x, np.asarray(part["common_share"], dtype=float), "--", marker=".", label=name)
    ax.set_xlabel("relative depth l / L")
    ax.set_ylabel(f"common share, {record['token_rule']} tokens")
    ax.set_ylim(0, 1.02)
    corpus = Path(record["settings"]["text"]).name if record["settings"]["text"] else "Shakespeare"
    title = f"{record['settings']['model']} ({record['model_type']}), {corpus}, n = {record['sentences_measured']}"
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3)
    _inset(ax.inset_axes([0.09, 0.58, 0.38, 0.38]), record)


def _inset(ax, record: dict) -> None:
    pc = record["reference"]["pair_cosine"]
    layers = int(record["layers"])
    mid = np.asarray(record["kernel"]["cosine"], dtype=float)
    for color, block in zip(COLORS, sorted({max(0, layers // 6), layers // 2, layers - 1}), strict=False):
        curve = np.asarray(pc["real"]["curve"][block], dtype=float)
        lo, hi = (np.asarray(v[block], dtype=float) for v in pc["real"]["band"])
        n_lo, n_hi = (np.asarray(v[block], dtype=float) for v in pc["fitted"]["band"])
        ok = np.asarray(pc["count"][block]) >= 30
        m = mid[block][ok]
        ax.fill_between(m, n_lo[ok], n_hi[ok], color=color, alpha=0.2)
        ax.errorbar(m, curve[ok], yerr=[curve[ok] - lo[ok], hi[ok] - curve[ok]], fmt=".", color=color, ms=2)
        ax.plot([], [], color=color, label=f"block {block + 1}: {int(np.sum(pc['count'][block]))} pairs")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("c_ij", fontsize=6)
    ax.set_ylabel("pair cosine of f", fontsize=6)
    ax.tick_params(labelsize=5)
    ax.legend(fontsize=4.5, loc="upper left")


def band_figure(records: Sequence[dict], path: Path) -> Path:
    """One panel per record (``real.measure``'s record)."""
    fig, axes = plt.subplots(1, len(records), figsize=(5.6 * len(records), 5.0), squeeze=False)
    for ax, record in zip(axes[0], records, strict=True):
        _panel(ax, record)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path
