"""Clusters forming with depth: the cosine matrix <X_i, X_j> of one run at five depths, tokens sorted once.

relu noise with bias std 0.1 (lambda_bar < 0) and softmax attention, N = 32 tokens in d = 16.
Run: ``python examples/clusters.py [OUT_DIR]`` (default docs/examples) -> clusters.png
"""

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import sdeformer as sdf
from sdeformer.observables import cosine_matrix

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "examples"
model = sdf.StochasticTransformer(
    layers=120,
    horizon=3.0,
    noise=sdf.MLPNoise("relu", 512, su=0.1, sw=0.1),
    attention=sdf.SoftmaxAttention(beta=1.0, scale=1.0),
)
traj = model.run(sdf.uniform_sphere(32, 16, seed=3), seed=3, saveat=30)  # traj.x: (5, 32, 16)
order = cosine_matrix(traj.x[2])[0].argsort()  # tokens sorted by their cosine with token 0 at t = 1.5
fig, axes = plt.subplots(1, len(traj.t), figsize=(2.8 * len(traj.t), 2.8))
for ax, x, t in zip(axes, traj.x, traj.t):
    cos = cosine_matrix(x)[order][:, order]  # (N, N)
    image = ax.imshow(cos, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_title(f"t = {t:.2f}")
    ax.set_xlabel(f"{sdf.cluster_count(x, threshold=0.99).item()} clusters (cos > 0.99)")
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(image, ax=axes, shrink=0.8, label=r"$\langle X_i, X_j \rangle$")
out.mkdir(parents=True, exist_ok=True)
fig.savefig(out / "clusters.png", dpi=90, bbox_inches="tight")
print(f"wrote {out / 'clusters.png'}")
