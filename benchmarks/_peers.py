"""Benchmark part ``peers``: each peer's script against its preset (``sdeformer.peers``) at the peer's default size,
interleaved A B A B over rounds (``timing.interleaved``), and the per-layer overhead of the time loop at n = 5, d =
2 against a plain torch loop doing the same arithmetic.

The peers' scripts are third-party code, run (announced) from scratch copies that the benchmark does not ship and
that only the user names: ``--peers DIR`` or ``SDEFORMER_PEERS`` (no default: a world-writable default such as /tmp
would run whatever anyone put there; every file is checked against the snapshot's sha256 first, ``verified``)
holds ``dotm/`` (HugoKoubbi/2024-transformers-dotm), ``litm/`` (borjanG/2026-lost-in-the-middle), ``simuformer/``
(nikitus20/simuformer), ``glpr/`` (borjanG/2023-transformers-rotf) and ``bruno/`` (gbruno16/transformers-
metastability, its notebook's cells 1 and 15 run unchanged); a peer whose copy is absent is skipped with a
message. Only the scripts' computations are timed (their plotting sections are cut off; dotm's staircase runs
``time_rescale_3`` at one beta to the collapse).

    python -m benchmarks peers --peers DIR [--rounds 3] [--only NAME] [--out benchmarks/results/peers.json]

"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import types
from pathlib import Path

import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.attention._variants import UnnormalizedAttention
from sdeformer.core._errors import ConfigError
from sdeformer.dynamics._discrete import StochasticTransformer
from sdeformer.dynamics._loop import SaveAt
from sdeformer.dynamics._sde import GeodesicEuler, LimitSDE
from sdeformer.peers import (
    _bruno_pde as bruno_pde,
    _dotm as dotm,
    _glpr as glpr,
    _litm as litm,
    _simuformer as simuformer,
)

from ._timing import conditions, finish, interleaved, ratio, spread

PEERS = Path(os.environ.get("SDEFORMER_PEERS", "")) if os.environ.get("SDEFORMER_PEERS") else None


def _copy(*parts: str) -> Path:
    """A path in the peers' scratch copies (under a folder that does not exist where the user named none: every
    part then finds no copy and is skipped)."""
    return (PEERS if PEERS is not None else Path("/nonexistent-peer-copies")).joinpath(*parts)


def set_peers(folder: Path) -> None:
    """Take the peers' scratch copies from ``folder`` (the user's ``--peers``)."""
    global PEERS
    PEERS = folder


STAIR_BETA, STAIR_ITER = 2000.0, 10_100  # the peer collapses after 10082 steps at beta = 2000


def _script(path: Path, cut: str, stubs=("imageio", "seaborn")) -> dict:
    """The peer script's namespace up to ``cut`` (its definitions and settings), unchanged otherwise."""
    for name in stubs:  # imported by the scripts, unused by the computations timed
        sys.modules.setdefault(name, types.ModuleType(name))
    namespace: dict = {"__name__": "peer", "__file__": str(path)}
    exec(compile(path.read_text().split(cut)[0], str(path), "exec"), namespace)
    return namespace


def _dotm_kinetic() -> dict | None:
    path = _copy("dotm", "kinetic.py")
    if not path.exists():
        return None
    loop = path.read_text().split("movie = True")[0].split("z = np.zeros(shape=(n, num_steps, d))")[1]
    ns = _script(path, "z = np.zeros(shape=(n, num_steps, d))")
    code = compile("z = np.zeros(shape=(n, num_steps, d))" + loop, str(path), "exec")
    return {"peer": lambda: exec(code, ns), "sdeformer": dotm.kinetic}


def _dotm_staircase() -> dict | None:
    path = _copy("dotm", "staircase.py")
    if not path.exists():
        return None
    ns = _script(path, "np.random.seed(200)")
    theta0 = dotm.staircase_start()
    angles = torch.atan2(theta0[:, 1], theta0[:, 0]).numpy()
    return {
        "peer": lambda: ns["time_rescale_3"](angles.copy(), dotm.PEER_LR, STAIR_BETA, STAIR_ITER),
        "sdeformer": lambda: dotm.staircase(STAIR_BETA),
    }


def _litm() -> dict | None:
    path = _copy("litm", "generate_u_shape_numerology_data.py")
    if not path.exists():
        return None
    ns = _script(path, "def main()")
    return {
        "peer": lambda: [ns["t_crit"](b, 1.0, 8.0, 20) for b in litm.CURVE],
        "sdeformer": lambda: litm.run(beta=1.0),
    }


def _litm_particles() -> dict | None:
    path = _copy("litm", "generate_alibi_particle_circle_dynamics.py")
    if not path.exists():
        return None
    ns = _script(path, "def main()", stubs=())
    p = litm.PARTICLES
    args = (p["tokens"], p["beta"], p["lam"], p["horizon"], p["dt"], p["seed"], "clusters")
    return {"peer": lambda: ns["simulate"](*args), "sdeformer": lambda: litm.particles()}


BRUNO_PARTICLES = {"beta": 5.0, "N": 1000, "dt": 1e-4, "T": 0.01}  # its ParticlesSimulation, 100 Euler steps
BRUNO_PDE = {"n_points": 1001, "T": 0.05, "beta": 5.0}  # its PDESimulation at a tenth of its grid, linear window


def _notebook_cell(index: int) -> dict | None:
    """The namespace of cell ``index`` of Bruno's notebook (its classes), run unchanged (plots discarded)."""
    path = _copy("bruno", "experiments.ipynb")
    if not path.exists():
        return None
    import matplotlib

    matplotlib.use("Agg")
    cell = json.loads(path.read_text())["cells"][index]
    namespace: dict = {"__name__": "peer"}
    exec(compile("".join(cell["source"]), str(path), "exec"), namespace)
    namespace["plt"].show = lambda *a, **k: namespace["plt"].close("all")
    return namespace


def _quiet(fn):
    """``fn`` with its progress bars (stderr) discarded."""

    def call():
        with contextlib.redirect_stderr(io.StringIO()):
            return fn()

    return call


def _bruno_particles() -> dict | None:
    ns = _notebook_cell(1)
    if ns is None:
        return None
    p = BRUNO_PARTICLES
    torch.manual_seed(0)
    sim = ns["ParticlesSimulation"](torch.float64, torch.device("cpu"), p["T"], p["beta"], p["dt"], p["N"])
    model = GeodesicEuler(LimitSDE(None, UnnormalizedAttention(p["beta"])), round(p["T"] / p["dt"]), p["T"])
    x0 = torch.stack([sim.theta0.cos(), sim.theta0.sin()], -1)
    return {"peer": _quiet(sim.run), "sdeformer": lambda: model.run(x0).x}


def _bruno_pde(as_published: bool) -> dict | None:
    """The notebook's PDE cell against the density solver (16 modes), or ``as_published`` against the preset's
    Lax-Friedrichs scheme on the notebook's grid (like for like: the same table, cell for cell)."""
    ns = _notebook_cell(15)
    if ns is None:
        return None
    p, cpu = BRUNO_PDE, torch.device("cpu")

    def peer():
        torch.manual_seed(0)
        return ns["PDESimulation"](p["n_points"], p["T"], p["beta"], 10**9, 0.01, torch.double, cpu).run()

    if as_published:
        return {"peer": _quiet(peer), "sdeformer": lambda: bruno_pde.published(p["beta"], p["n_points"], p["T"])}
    return {"peer": _quiet(peer), "sdeformer": lambda: bruno_pde.measure(p["beta"], p["n_points"])}


# the phase-diagram peers at their default batch, tokens and dimension, over a shorter sweep (their full default
# sweeps take minutes to hours on one core): simuformer 2 betas to T = 5, GLPR one beta (4) to its T = 30 with
# softmax, three betas (0.1, 1.55, 3) to its T = 1 without
SIMU_SWEEP = {"betas": 2, "maxtime": 5.0, "checkpoints": 51, "norm": "postln"}
GLPR_SWEEPS = {
    "softmax": {"betas": 1, "betamin": 4.0, "betamax": 4.0, "use_softmax": True},
    "exp / N": {"betas": 3, "betamax": 3.0},
}


def _simuformer(heads: int) -> dict | None:
    folder = _copy("simuformer")
    if not (folder / "runner.py").exists():
        return None
    sys.path.insert(0, str(folder))
    ns = _script(folder / "runner.py", 'if __name__ == "__main__":')
    s = simuformer.settings(heads=heads, **SIMU_SWEEP)
    args = types.SimpleNamespace(
        norm=s["norm"], randomV=s["random_v"], randomKQ=s["random_kq"], sequential=False, dmodel=s["dim"],
        ntokens=s["tokens"], n_heads=heads, batch=s["batch"], betamin=s["betamin"], betamax=s["betamax"],
        betas=s["betas"], maxtime=s["maxtime"], step=s["step"], n_time_ckpts=s["checkpoints"], adjacent=False,
        cluster_sizes=False, disable_tqdm=True, noanneal=0, rawstep=False, plotdim=False, analyze_evecs=False,
        use_softmax=True, device=torch.device("cpu"),
    )  # fmt: skip
    return {"peer": lambda: ns["do_results"](args), "sdeformer": lambda: simuformer.run(heads=heads, **SIMU_SWEEP)}


def _glpr(sweep: str) -> dict | None:
    path = _copy("glpr", "phase-diagrams.py")
    if not path.exists():
        return None
    text = path.read_text().replace("'cuda'", "'cpu'")  # its device strings (a CPU run), nothing else
    ns: dict = {"__name__": "peer", "__file__": str(path)}
    exec(compile(text.split('if __name__ == "__main__":')[0], str(path), "exec"), ns)
    s = glpr.settings(**GLPR_SWEEPS[sweep])
    ns["args"] = types.SimpleNamespace(
        dmodel=s["dim"], ntokens=s["tokens"], batch=s["batch"], betamin=s["betamin"], betamax=s["betamax"],
        betas=s["betas"], maxtime=s["maxtime"], step=s["step"], use_softmax=s["use_softmax"], randomV=0, randomKQ=0,
        cluster_sizes=False, disable_tqdm=True, noanneal=0, rawstep=False, regen_period=0.0, plotdim=False,
    )  # fmt: skip

    def peer():
        with open(os.devnull, "w") as quiet:  # it prints a line per checkpoint
            stdout, sys.stdout = sys.stdout, quiet
            try:
                return ns["do_results"](ns["args"])
            finally:
                sys.stdout = stdout
                torch.set_default_dtype(torch.float32)  # it sets float64 for the process

    return {"peer": peer, "sdeformer": lambda: glpr.run(**GLPR_SWEEPS[sweep])}


def _plain_loop(same: bool, layers: int = 4000, beta: float = 4.0, dt: float = 0.1):
    """x <- LN(x + dt softmax(beta x x^T) x) in plain torch: the arithmetic of one Post-LN layer, with 2-D
    matmuls, or (``same``) with sdeformer's (a stack of one run through bmm: bit-identical results)."""
    x0 = torch.tensor(dotm.Z0, dtype=torch.float64)
    x0 = x0 / torch.linalg.vector_norm(x0, dim=-1, keepdim=True)

    def attention(x):
        if not same:
            return torch.softmax(beta * (x @ x.T), -1) @ x
        x3 = x.unsqueeze(0)
        return torch.bmm(torch.softmax(torch.bmm((x * beta).unsqueeze(0), x3.transpose(1, 2)), -1), x3).squeeze(0)

    def run():
        x = x0
        for _ in range(layers):
            x = x + dt * attention(x)
            x = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        return x

    model = StochasticTransformer(layers, layers * dt, None, SoftmaxAttention(beta))

    def ours():
        return model.run(x0, saveat=SaveAt(final_only=True)).final

    if same and not torch.equal(run(), ours()):
        raise AssertionError("the plain loop's arithmetic differs from sdeformer's")
    return {"plain torch": run, "sdeformer": ours}


def bench_peers(rounds: int = 3, only: str = "") -> dict:
    """Every available peer against its preset, and the time loop's overhead; ratios sdeformer / other (``only``:
    the parts whose name contains it)."""
    device = torch.device("cpu")
    out: dict = {"conditions": conditions(), "parts": {}}
    for name, make in (
        ("dotm kinetic.py", _dotm_kinetic),
        ("dotm staircase.py (beta 2000)", _dotm_staircase),
        ("litm t_crit curve", _litm),
        ("litm particles (RK4 both)", _litm_particles),
        ("bruno particles (N 1000, beta 5, 100 angle-Euler steps)", _bruno_particles),
        (
            "bruno PDE (its Lax-Friedrichs on 1000 points; sdeformer's density solver, 16 modes)",
            lambda: _bruno_pde(False),
        ),
        ("bruno PDE --as-published (its Lax-Friedrichs on 1000 points, both)", lambda: _bruno_pde(True)),
        ("simuformer 1 head (512 x 64 x 16, 2 betas, T 5)", lambda: _simuformer(1)),
        ("simuformer 8 heads (512 x 64 x 16, 2 betas, T 5)", lambda: _simuformer(8)),
        ("glpr softmax (2048 x 32 x 2, beta 4, T 30)", lambda: _glpr("softmax")),
        ("glpr exp / N (2048 x 32 x 2, 3 betas to 3, T 1)", lambda: _glpr("exp / N")),
        ("time loop n=5 d=2, 4000 layers, vs 2-D matmuls", lambda: _plain_loop(False)),
        ("time loop n=5 d=2, 4000 layers, vs the same arithmetic", lambda: _plain_loop(True)),
    ):
        if only not in name:
            continue
        contenders = make()
        if contenders is None:
            print(f"{name}: skipped (no copy of the peer's script under {PEERS})")
            continue
        record, _ = interleaved(contenders, device, rounds, warmup=True)
        other = next(k for k in contenders if k != "sdeformer")
        record["ratio"] = ratio(record["seconds"]["sdeformer"], record["seconds"][other])
        record["spread"] = {k: spread(v) for k, v in record["seconds"].items()}
        out["parts"][name] = record
        r = record["ratio"]
        print(f"{name}: sdeformer / {other} = {r['min']:.3g} / {r['median']:.3g} / {r['max']:.3g} (min/median/max)")
    return out


def verified(folder: Path) -> None:
    """ConfigError unless every peer's copy under ``folder`` holds only the snapshot's files (their sha256 in
    docs/peers.md, "Snapshot hashes"; ``tools/peer_harness/process.verify``): a planted file is never read."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from peer_harness.process import verify

    for name in ("litm", "dotm", "bruno", "simuformer", "glpr"):
        if (folder / name).is_dir():
            verify(name, folder / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only", default="", help="the parts whose name contains this")
    parser.add_argument("--peers", type=Path, default=PEERS, help="the peers' scratch copies [$SDEFORMER_PEERS]")
    args = parser.parse_args()
    if args.peers is None or not args.peers.is_dir():
        parser.exit(2, "error: --peers DIR (or SDEFORMER_PEERS): the folder of the peers' scratch copies\n")
    try:  # every copy checked against the snapshot's sha256 before any of it is read, as tools/run_peer.py does
        verified(args.peers)
    except ConfigError as exc:
        parser.exit(2, f"error: {exc}\n")
    set_peers(args.peers)
    print(f"running the peers' own scripts (third-party code) from {args.peers}", file=sys.stderr)
    torch.set_num_threads(1)
    result = bench_peers(args.rounds, args.only)
    finish(result, args.out)


if __name__ == "__main__":
    main()
