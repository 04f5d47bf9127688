"""An experiment with its figure as one plugin file, outside ``src/`` (docs/extending.md, "Adding an experiment"):

    sdeformer reproduce --plugin examples/plugins/cosine_experiment.py mean-cosine --out results

The mean cosine of the paper's model (THEORY section 1) against depth, for two noise strengths, drawn and
reported with its standard error over runs.
"""

from __future__ import annotations

import math

import sdeformer as sdf
from sdeformer.experiments import EXPERIMENTS, Context, Experiment
from sdeformer.io import Figure, Section


def report(ctx: Context) -> list[Section]:
    """Run 16 runs per noise strength, draw the mean cosine against depth, return the report's section."""
    from sdeformer.plots import plt, save_figure

    runs, layers = (4, 10) if ctx.quick else (16, 40)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for su in (0.0, 0.5):
        model = sdf.ModelConfig(tokens=8, dim=4, width=64, layers=layers, su=su, sw=su).build()
        x0 = sdf.uniform_sphere(8, 4, batch=(runs,), seed=ctx.seed)  # (runs, N, d)
        x = model.run(x0, seed=list(range(runs))).x  # (layers + 1, runs, N, d)
        cos = (x @ x.transpose(-1, -2)).mean((-1, -2))  # (layers + 1, runs): the diagonal's 1s included
        mean, se = cos.mean(1), cos.std(1) / math.sqrt(runs)
        ax.errorbar(range(layers + 1), mean, yerr=se, label=f"sU = sW = {su}", capsize=2)
        ctx.advance(1)
    ax.set_xlabel("layer l")
    ax.set_ylabel("mean cosine (± s.e. over runs)")
    ax.legend()
    path = save_figure(fig, ctx.out / "mean_cosine.png")
    caption = f"Mean cosine of N = 8 tokens in d = 4 against depth, {runs} runs per curve, bars one s.e."
    return [Section("Mean cosine against depth", [caption], [], [Figure(path, caption)])]


EXPERIMENTS.register(
    Experiment("mean-cosine", report, "the mean cosine against depth (a plugin)", "mean cosine", (), lambda *_: 2)
)
