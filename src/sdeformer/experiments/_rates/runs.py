"""The coupled runs behind the convergence rates of THEORY section 5 (one ``sweeps.Job`` per chunk of runs).

``rate_runs(kind, settings, lo, hi)`` simulates runs [lo, hi) of a ``rates`` measurement with resolved settings
and returns their errors: depth (discrete model vs a fine SDE path with the same Brownian increments,
``dynamics._coupling.depth_coupled``), width (width m vs infinite width, Gram square-root coupling,
``width_coupled``) and tokens (sup_t W_2^2 between N-token clouds and a reference cloud under one random-feature
field, ``dynamics._meanfield``). Every random draw of run r comes from its own seed, so the numbers do not depend
on the chunking, the executor or the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ...attention._softmax import SoftmaxAttention
from ...core._rng import derive_seeds
from ...core._sphere import uniform_sphere
from ...core._threads import torch_threads
from ...dynamics._coupling import depth_coupled, width_coupled
from ...dynamics._meanfield import run_clouds, sup_w2_sq
from ...noise._fields import GaussianField, RandomFeatureField


def rate_runs(kind: str, settings: dict[str, Any], lo: int, hi: int) -> dict[str, np.ndarray]:
    """Runs [lo, hi) of the ``kind`` measurement with resolved ``settings`` (a ``sweeps.Job``): their errors
    ``samples`` ``(len(x), hi - lo)``. Each random draw of run r (initial tokens, noise, features) comes from its
    own seed, element r of ``derive_seeds(root, runs)`` for the roots derived from ``settings['seed']``: the numbers
    do not depend on the chunking, the executor or the number of workers."""
    s, x = settings, [int(v) for v in settings["x"]]
    runs, dim = int(s["runs"]), int(s["dim"])
    x_seed, noise_seed, _ = derive_seeds(int(s["seed"]), 3)

    def per_run(root: int) -> list[int]:
        return derive_seeds(root, runs)[lo:hi]  # the seeds an int ``root`` gives these runs in a batch of all

    attention = SoftmaxAttention(float(s["beta"]), float(s["attention_scale"]))
    with torch_threads(1 if kind != "tokens" else torch.get_num_threads()):
        if kind == "tokens":
            samples = _tokens(s, x, attention, per_run, (x_seed, noise_seed))
        else:
            x0 = uniform_sphere(int(s["tokens"]), dim, batch=(hi - lo,), seed=per_run(x_seed), dtype=torch.float64)
            if kind == "depth":
                field = GaussianField(s["activation"], s["bias_std"], s["bias_std"])
                samples = depth_coupled(x0, x, int(s["fine"]), s["horizon"], field, attention, seed=per_run(noise_seed))
            else:
                path_seed, stream_seed = derive_seeds(noise_seed, 2)  # as width_coupled derives them from noise_seed
                samples = width_coupled(
                    x0,
                    x,
                    int(s["layers"]),
                    s["horizon"],
                    s["activation"],
                    s["bias_std"],
                    s["bias_std"],
                    attention,
                    seeds=(per_run(path_seed), per_run(stream_seed)),
                )
    return {"samples": samples.double().cpu().numpy()}


def _tokens(
    s: dict, sizes: list[int], attention, per_run: Callable[[int], list[int]], seeds: tuple[int, int]
) -> torch.Tensor:
    """sup_t W_2^2 between N-token clouds and the reference cloud, all under one random-feature field (per run);
    ``(len(sizes), C)`` for the C runs whose seeds ``per_run`` gives."""
    x_seed, noise_seed = seeds
    field_seed, ref_seed, *cloud_seeds = derive_seeds(x_seed, 2 + len(sizes))
    batch, d = (len(per_run(x_seed)),), int(s["dim"])
    field = RandomFeatureField(
        s["activation"],
        int(s["features"]),
        d,
        s["bias_std"],
        s["bias_std"],
        seed=per_run(field_seed),  # one seed per run
        batch=batch,
        dtype=torch.float64,
    )
    clouds = [
        uniform_sphere(n, d, batch=batch, seed=per_run(cs), dtype=torch.float64) for n, cs in zip(sizes, cloud_seeds)
    ]
    ref = uniform_sphere(int(s["reference"]), d, batch=batch, seed=per_run(ref_seed), dtype=torch.float64)  # (C, M, d)
    save_every = max(1, int(s["steps"]) // max(1, int(s["saves"])))
    ref_noise = noise_seed if s["coupled"] else derive_seeds(noise_seed, 1)[0]  # same path, or independent

    def run(group: list[torch.Tensor], seed: int) -> list:
        return run_clouds(
            group,
            field,
            attention,
            s["horizon"],
            int(s["steps"]),
            seed=per_run(seed),  # one seed per run
            save_every=save_every,
        )

    [reference] = run([ref], ref_noise)
    return torch.stack([sup_w2_sq(traj, reference) for traj in run(clouds, noise_seed)])  # (len(sizes), C)
