"""Benchmark part ``phase``: the peers' (beta, t) phase diagram, attention only (Geshkovski et al.'s set-up:
N = 32 tokens, 128 runs per beta, 5 beta x 2 d, the one-cluster test at every saved time).

Contenders, interleaved over rounds, each giving the fraction of runs in one cluster at every saved time:

- ``plain``: the straightforward script a user writes (plain torch, one (beta, d) at a time, x (128, N, d)
  advanced by x <- LN(x + dt softmax(beta x x^T) x) and saved every step, then all pairs' cosines per saved
  state), from the runs' own initial tokens, so its numbers must match ours;
- ``per_beta``: sdeformer, one batched ``run_sweep`` per (beta, d), then the ``all_within`` observable;
- ``all_beta``: sdeformer, the five beta of one d in one batch (the group batches beta), then ``all_within``.

Reported: seconds (min / median / max), ratios per round (plain / per_beta, plain / all_beta, per_beta /
all_beta), the share of ``all_beta``'s time spent in the one-cluster test, and the largest difference of the
cluster fractions between the contenders (0: they agree).
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

from sdeformer.config import ModelConfig
from sdeformer.config._batches import sweep_measure
from sdeformer.sweeps._observables import evaluate, parse_observables

from ._timing import interleaved, ratio, spread

BETAS = (0.5, 1.0, 2.0, 4.0, 8.0)
DIMS = (2, 8)
THRESHOLD = 0.999
SIZES = {"quick": (32, 50), "full": (128, 200)}  # runs per beta, layers (dt = 0.1: 201 saved states)
ONE_CLUSTER = parse_observables([{"name": "all_within", "threshold": THRESHOLD}])


def _configs(betas: tuple[float, ...], d: int, runs: int, layers: int, dtype: str) -> list[ModelConfig]:
    return [
        ModelConfig(tokens=32, dim=d, mlp=False, layers=layers, horizon=layers * 0.1, beta=b, seed=s, dtype=dtype)
        for b in betas
        for s in range(runs)
    ]


def plain_phase(configs: list[ModelConfig]) -> torch.Tensor:
    """The user's script for configs of one (beta, d): the fraction of runs in one cluster per saved time ``(S,)``."""
    c0 = configs[0]
    x = torch.stack([c.initial_tokens() for c in configs])  # (B, N, d)
    dt, states = c0.horizon / c0.layers, [x]
    for _ in range(c0.layers):
        x = F.normalize(x + dt * torch.softmax(c0.beta * x @ x.transpose(-1, -2), dim=-1) @ x, dim=-1)
        states.append(x)
    u = F.normalize(torch.stack(states).double(), dim=-1)  # (S, B, N, d)
    iu = torch.triu_indices(c0.tokens, c0.tokens, 1)
    cos = (u @ u.transpose(-1, -2))[..., iu[0], iu[1]]  # (S, B, P)
    return (cos >= THRESHOLD).all(-1).double().mean(-1)


def _ours(configs: list[ModelConfig], timing: dict) -> torch.Tensor:
    """sdeformer's batched run and one-cluster test over the saved states (``sweep_measure``: no per-run split);
    the fraction per (saved time, beta) ``(S, len(betas))``. ``timing`` collects run_s and test_s."""
    clock = [time.perf_counter()]  # the end of the last measurement: a group's run starts there

    def one_cluster(traj) -> dict[str, torch.Tensor]:
        mid = time.perf_counter()
        beta = torch.ones(traj.x.shape[1], dtype=torch.float64)  # all_within reads no beta
        inside = evaluate(ONE_CLUSTER, traj.x, beta)["all_within"].T  # (G, S)
        clock.append(time.perf_counter())
        timing["run_s"] = timing.get("run_s", 0.0) + mid - clock[-2]
        timing["test_s"] = timing.get("test_s", 0.0) + clock[-1] - mid
        return {"inside": inside}

    inside = sweep_measure(configs, one_cluster).stack()["inside"]  # (G, S)
    betas = len({c.beta for c in configs})  # configs are beta-major: (beta, run)
    return inside.reshape(betas, len(configs) // betas, -1).mean(1).T


def bench_phase(device: torch.device, quick: bool, rounds: int = 3, dtype: str = "float32") -> dict:
    """Interleave the three contenders over ``rounds``; see the module docstring."""
    runs, layers = SIZES["quick" if quick else "full"]
    grids = {d: _configs(BETAS, d, runs, layers, dtype) for d in DIMS}
    split = {d: [cs[i * runs : (i + 1) * runs] for i in range(len(BETAS))] for d, cs in grids.items()}
    shares: list[dict] = []

    def all_beta() -> list[torch.Tensor]:
        timing: dict = {}
        out = [_ours(grids[d], timing) for d in DIMS]
        shares.append(timing)
        return out

    contenders = {
        "plain": lambda: [torch.stack([plain_phase(cs) for cs in split[d]], dim=-1) for d in DIMS],
        "per_beta": lambda: [torch.cat([_ours(cs, {}) for cs in split[d]], dim=-1) for d in DIMS],
        "all_beta": all_beta,
    }
    record, last = interleaved(contenders, device, rounds, warmup=True)  # the first call pays the allocator
    agree = max(float((a - b).abs().max()) for a, b in zip(last["plain"], last["all_beta"]))
    agree = max(agree, *(float((a - b).abs().max()) for a, b in zip(last["per_beta"], last["all_beta"])))
    sec = record["seconds"]
    return {
        "set_up": {"tokens": 32, "runs_per_beta": runs, "betas": list(BETAS), "dims": list(DIMS), "layers": layers,
                   "dt": 0.1, "dtype": dtype, "threshold": THRESHOLD, "saved_times": layers + 1},
        "rounds": record,
        "seconds": {name: spread(v) for name, v in sec.items()},
        "ratios": {
            "plain_over_per_beta": ratio(sec["plain"], sec["per_beta"]),
            "plain_over_all_beta": ratio(sec["plain"], sec["all_beta"]),
            "per_beta_over_all_beta": ratio(sec["per_beta"], sec["all_beta"]),
        },
        "one_cluster_test_share_of_all_beta": spread([s["test_s"] / (s["run_s"] + s["test_s"]) for s in shares]),
        "max_abs_difference_of_fractions": agree,
    }  # fmt: skip
