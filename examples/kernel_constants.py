"""Kernel constants: lambda_bar (THEORY section 2) across the dimension d for several activations.

lambda_bar < 0 (and a field that is not odd) is the theorem's condition for synchronization by noise.
Run: ``python examples/kernel_constants.py [OUT_DIR]`` (default docs/examples) -> kernel_constants.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import sdeformer as sdf

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "examples"
dims = [4, 8, 16, 32, 64, 128]
fig, ax = plt.subplots(figsize=(6, 4))
for activation in ["relu", "gelu", "silu", "sigmoid", "tanh"]:
    values = [sdf.kernel_theory(activation, dim=d, bias_std=0.1).lambda_bar for d in dims]
    ax.plot(dims, values, marker="o", label=activation)
ax.axhline(0.0, color="k", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_yscale("symlog", linthresh=0.1)  # sigmoid (kappa(1) large) dwarfs the others
ax.set(xlabel="dimension d", ylabel=r"$\bar\lambda$ (bias std 0.1)", title="Kernel constant across d")
ax.legend()
fig.tight_layout()
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "kernel_constants.png", dpi=100)
print(f"wrote {out / 'kernel_constants.png'}")
