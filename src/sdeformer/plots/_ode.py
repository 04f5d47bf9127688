"""The noise-free limit's figure (``experiments._ode``): error at T against the layer step, log-log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from ._save import save_figure


def order_figure(result: Any, path: Path) -> Path:
    """The model's error (with its fitted order) and the wrong models' errors against dt."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    dt = np.asarray(result.dt)
    ax.loglog(dt, result.error, "o-", label=f"discrete model (order {result.slope:.2f})")
    for name, errors in result.wrong_errors.items():
        ax.loglog(dt, errors, "s--", label=f"{name} (order {result.wrong_slopes[name]:.2f})")
    ax.loglog(dt, result.error[-1] * dt / dt[-1], ":", color="grey", label="order 1")
    ax.set_xlabel("layer step dt = T / L")
    ax.set_ylabel("largest token error at T against the ODE")
    ax.set_title("noise-free limit: discrete model against the ODE")
    ax.legend(fontsize=8)
    return save_figure(fig, path)
