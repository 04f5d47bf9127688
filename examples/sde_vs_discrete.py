"""The discrete model (width-m MLP noise, L layers) against its limit SDE (exact Gaussian field, THEORY 3).

Same initial tokens, 8 independent runs each; the mean interaction energy E_beta over time with its spread.
Run: ``python examples/sde_vs_discrete.py [OUT_DIR]`` (default docs/examples) -> sde_vs_discrete.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import sdeformer as sdf

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "examples"
runs, horizon, attention = 8, 4.0, sdf.SoftmaxAttention(beta=1.0, scale=1.0)
x0 = sdf.uniform_sphere(16, 16, seed=0).expand(runs, 16, 16)  # the same tokens in every run, (8, N, d)
discrete = sdf.StochasticTransformer(
    layers=100, horizon=horizon, noise=sdf.MLPNoise("relu", 512, su=0.1, sw=0.1), attention=attention
).run(x0, seed=list(range(runs)), saveat=2)
sde = sdf.LimitSDE(sdf.GaussianField("relu", su=0.1, sw=0.1), attention)
limit = sdf.make_solver(sde, steps=400, horizon=horizon).run(x0, seed=list(range(100, 100 + runs)), saveat=8)
fig, ax = plt.subplots(figsize=(6, 4))
for name, traj, color in [("discrete, L = 100, m = 512", discrete, "C0"), ("limit SDE, 400 steps", limit, "C1")]:
    energy = sdf.interaction_energy(traj.x, beta=1.0)  # (S, runs)
    lo, hi = energy.quantile(0.1, dim=1), energy.quantile(0.9, dim=1)
    ax.fill_between(traj.t, lo, hi, color=color, alpha=0.2)
    ax.plot(traj.t, energy.mean(1), color=color, label=f"{name}: mean, 10-90%")
ax.set_yscale("log")
ax.set(xlabel="time t", ylabel=r"$E_\beta(X_t)$", title="relu, bias std 0.1, N = d = 16")
ax.legend()
fig.tight_layout()
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "sde_vs_discrete.png", dpi=100)
print(f"wrote {out / 'sde_vs_discrete.png'}")
