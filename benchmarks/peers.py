"""Benchmark part ``peers``: each peer's script against its preset (``sdeformer.peers``) at the peer's default
size, interleaved A B A B over rounds (``timing.interleaved``), and the per-layer overhead of the time loop at
n = 5, d = 2 against a plain torch loop doing the same arithmetic.

The peers' scripts are run from scratch copies that the benchmark does not ship: ``SDEFORMER_PEERS`` (default
``/tmp/peers``) holds ``dotm/`` (HugoKoubbi/2024-transformers-dotm) and ``litm/`` (borjanG/2026-lost-in-the-
middle); a peer whose copy is absent is skipped with a message. Only the scripts' computations are timed (their
plotting sections are cut off; dotm's staircase runs ``time_rescale_3`` at one beta to the collapse).

    python -m benchmarks.peers [--rounds 3] [--out benchmarks/results/peers.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import types
from pathlib import Path

import torch

from sdeformer.attention.softmax import SoftmaxAttention
from sdeformer.dynamics.discrete import StochasticTransformer
from sdeformer.peers import dotm, litm

from .timing import conditions, interleaved, ratio, spread

PEERS = Path(os.environ.get("SDEFORMER_PEERS", "/tmp/peers"))
STAIR_BETA, STAIR_ITER = 2000.0, 10_100  # the peer collapses after 10082 steps at beta = 2000


def _script(path: Path, cut: str, stubs=("imageio", "seaborn")) -> dict:
    """The peer script's namespace up to ``cut`` (its definitions and settings), unchanged otherwise."""
    for name in stubs:  # imported by the scripts, unused by the computations timed
        sys.modules.setdefault(name, types.ModuleType(name))
    namespace: dict = {"__name__": "peer", "__file__": str(path)}
    exec(compile(path.read_text().split(cut)[0], str(path), "exec"), namespace)
    return namespace


def _dotm_kinetic() -> dict | None:
    path = PEERS / "dotm" / "kinetic.py"
    if not path.exists():
        return None
    loop = path.read_text().split("movie = True")[0].split("z = np.zeros(shape=(n, num_steps, d))")[1]
    ns = _script(path, "z = np.zeros(shape=(n, num_steps, d))")
    code = compile("z = np.zeros(shape=(n, num_steps, d))" + loop, str(path), "exec")
    return {"peer": lambda: exec(code, ns), "sdeformer": dotm.kinetic}


def _dotm_staircase() -> dict | None:
    path = PEERS / "dotm" / "staircase.py"
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
    path = PEERS / "litm" / "generate_u_shape_numerology_data.py"
    if not path.exists():
        return None
    ns = _script(path, "def main()")
    return {
        "peer": lambda: [ns["t_crit"](b, 1.0, 8.0, 20) for b in litm.CURVE],
        "sdeformer": lambda: litm.run(beta=1.0),
    }


def _plain_loop(layers: int = 4000, beta: float = 4.0, dt: float = 0.1):
    """x <- LN(x + dt softmax(beta x x^T) x) in plain torch: the arithmetic of one Post-LN layer."""
    x0 = torch.tensor(dotm.Z0, dtype=torch.float64)

    def run():
        x = x0
        for _ in range(layers):
            x = x + dt * (torch.softmax(beta * (x @ x.T), -1) @ x)
            x = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        return x

    model = StochasticTransformer(layers, layers * dt, None, SoftmaxAttention(beta))
    return {"plain torch": run, "sdeformer": lambda: model.run(x0).final}


def bench_peers(rounds: int = 3) -> dict:
    """Every available peer against its preset, and the time loop's overhead; ratios sdeformer / other."""
    device = torch.device("cpu")
    out: dict = {"conditions": conditions(), "parts": {}}
    for name, make in (
        ("dotm kinetic.py", _dotm_kinetic),
        ("dotm staircase.py (beta 2000)", _dotm_staircase),
        ("litm t_crit curve", _litm),
        ("time loop n=5 d=2, 4000 layers", _plain_loop),
    ):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    result = bench_peers(args.rounds)
    print(f"load average before: {result['conditions']['load_average']}, torch threads {torch.get_num_threads()}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
