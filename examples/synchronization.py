"""Synchronization by noise: E_beta(t) of the discrete model for relu with bias 0.1 vs tanh without bias.

ReLU with bias (not odd, lambda_bar < 0) synchronizes: the noise itself contracts the tokens. tanh without
bias gives an odd field (lambda_bar > 0) whose noise does not: only attention pulls the tokens together.
N = 16 tokens, d = 16, L = 100 layers, width m = 512, 4 runs each.
Run: ``python examples/synchronization.py [OUT_DIR]`` (default docs/examples) -> synchronization.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import sdeformer as sdf

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "examples"
x0 = sdf.uniform_sphere(16, 16, batch=(4,), seed=0)  # 4 runs, (4, N, d) = (4, 16, 16)
fig, ax = plt.subplots(figsize=(6, 4))
for activation, bias, color in [("relu", 0.1, "C0"), ("tanh", 0.0, "C3")]:
    mlp = sdf.MLPNoise(activation, 512, su=bias, sw=bias)
    model = sdf.StochasticTransformer(layers=100, horizon=5.0, noise=mlp, attention=sdf.SoftmaxAttention(beta=1.0))
    traj = model.run(x0, seed=[0, 1, 2, 3], saveat=2)  # traj.x: (S, 4, 16, 16)
    energy = sdf.interaction_energy(traj.x, beta=1.0)  # (S, 4)
    lam = sdf.kernel_theory(activation, dim=16, bias_std=bias).lambda_bar
    label = f"{activation}, bias {bias}: " + r"$\bar\lambda$" + f" = {lam:.2f}"
    for k in range(energy.shape[1]):
        ax.plot(traj.t, energy[:, k], color=color, alpha=0.7, label=label if k == 0 else None)
ax.set_yscale("log")
ax.set(xlabel="time t = l dt", ylabel=r"$E_\beta(X_t)$", title="Interaction energy, 4 runs each")
ax.legend()
fig.tight_layout()
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "synchronization.png", dpi=100)
print(f"wrote {out / 'synchronization.png'}")
