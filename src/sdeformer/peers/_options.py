"""The options of the peers' experiments, declared once (``params.Param``; docs/peers.md): each option's type,
doc (the peers' own defaults in brackets: they differ between peers, so the declared default is None, the
peer's) and which peers take it (``PEER_OPTIONS``; another peer's option is refused naming it). ``sdeformer
peer`` makes one option per declaration (its settings: ``experiments._commands.peer``). Torch-free.
"""

from __future__ import annotations

from ..params import Param

OPTIONS = (
    Param("part", str, None, doc="dotm: staircase or kinetic; litm: threshold or particles; bruno: particles or pde"),
    Param("scheme", str, None, doc="litm particles: rk4 (its step), geodesic (angle-Euler) or projected"),
    Param("as_published", bool, None, doc="the peer's published behaviour, defects kept [off]"),
    Param("seed", int, None, doc="simuformer, glpr, bruno: torch's generator seed the peer ran with"),
    Param("points", int, None, doc="bruno pde: the notebook's n_points (grid of n_points - 1) [10000]"),
    Param("norm", str, None, doc="simuformer: postln, preln, periln or ngpt [preln]"),
    Param("heads", int, None, doc="simuformer: attention heads (averaged) [8]"),
    Param("sequential", bool, None, doc="simuformer: causal mask [off]"),
    Param("random_kq", int, None, doc="simuformer 0..5 [1], glpr 0..3 [0]: --randomKQ"),
    Param("random_v", int, None, doc="simuformer 0..5, glpr 0..3: --randomV [0]"),
    Param("noanneal", int, None, doc="simuformer, glpr: 0 matrices per run, 1 per beta, 2 per sweep"),
    Param("batch", int, None, doc="simuformer [512], glpr [2048]: runs per beta"),
    Param("tokens", int, None, doc="simuformer [64], glpr [32]: tokens"),
    Param("dim", int, None, doc="simuformer [16], glpr [2]: dimension"),
    Param("betas", int, None, doc="simuformer [20], glpr [90]: betas in the grid"),
    Param("betamin", float, None, doc="smallest beta of the grid [0.1]"),
    Param("betamax", float, None, doc="simuformer [15], glpr [9]: largest beta of the grid"),
    Param(
        "maxtime",
        float,
        None,
        doc="simuformer [50], glpr [30 softmax, 1 without], bruno pde --as-published [0.5, 0.08]: horizon",
    ),  # fmt: skip
    Param("step", float, None, doc="time step [0.1]"),
    Param("checkpoints", int, None, doc="simuformer: time checkpoints [200]"),
    Param("use_softmax", bool, None, doc="glpr: softmax (its default: exp(.) / N) [off]"),
    Param("regen_period", float, None, doc="glpr: redraw matrices every P [0: no]"),
    Param("no_softmax", bool, None, doc="simuformer: weights exp(.) (no normalization) [off]"),
    Param("rawstep", bool, None, doc="simuformer, glpr without softmax: the step not divided [off]"),
    Param("adjacent", bool, None, doc="simuformer: the pairs (i, i + 1) only [off]"),
    Param("plotdim", bool, None, doc="simuformer, glpr: the mean dimension of the span [off]"),
    Param("cluster_sizes", bool, None, doc="simuformer, glpr: median cluster count [off]"),
    Param("analyze_evecs", bool, None, doc="simuformer: the cosines of its V matrices' main eigenvectors [off]"),
)

_PHASE = ("seed", "random_kq", "random_v", "noanneal", "batch", "tokens", "dim", "betas", "betamin", "betamax")
_PHASE += ("maxtime", "step", "rawstep", "plotdim", "cluster_sizes")  # the two phase-diagram peers' common options
PEER_OPTIONS: dict[str, tuple[str, ...]] = {
    "litm": ("part", "scheme"),
    "dotm": ("part", "as_published"),
    "bruno": ("part", "as_published", "seed", "points", "maxtime"),
    "simuformer": (*_PHASE, "as_published", "norm", "heads", "checkpoints", "sequential", "no_softmax", "adjacent")
    + ("analyze_evecs",),
    "glpr": (*_PHASE, "use_softmax", "regen_period"),
}
"""The options each peer takes beyond --beta, --out, --compare, --json."""
