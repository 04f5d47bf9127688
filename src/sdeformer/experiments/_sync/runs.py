"""The ensembles of the synchronization check as jobs (THEORY section 5): one ``sweeps.Job`` per chunk of runs
and model, the SDE and the discrete model, and for the power record the SDE with the noise covariance cut by
``SyncSettings.power_factor``; both models with the settings' normalization scheme (BEYOND section 6). Each
finished job is one part (``sweeps.run_jobs``), so a rerun computes only the missing ones and the numbers do not
depend on the executor or the chunk size."""

from __future__ import annotations

import hashlib
import pickle
from typing import Any

import numpy as np
import torch

from ...core._threads import torch_threads
from ...dynamics._discrete import StochasticTransformer
from ...dynamics._sde import LimitSDE, make_solver
from ...noise._fields import GaussianField
from ...noise._mlp import MLPNoise
from ...noise._scaled import Scaled
from .eps import stable_energy
from .settings import SyncSettings

SAVE_POINTS = 100  # energy is recorded at this many times (plus t = 0)
MODELS = ("sde", "discrete")  # the ensembles of the check; "power": the SDE of the power record


def sync_runs(
    model: str,
    activation: str,
    bias_std: float,
    beta: float,
    attention: Any,
    width: int | None,
    steps: int,
    horizon: float,
    x0: torch.Tensor,
    seeds: list[int],
    factor: float = 1.0,
    norm: Any = None,
) -> dict[str, np.ndarray]:
    """One chunk of runs of one model (a ``sweeps.Job``): from the starts ``x0`` ``(C, N, d)``, the limit SDE
    (``model='sde'``, or ``'power'`` with the field's covariance times ``factor``) or the discrete model
    (``'discrete'``) with ``seeds`` (one per run); returns t ``(S,)`` and E_beta ``(S, C)`` (of the directions)
    under the model's name. ``norm``: a normalization scheme (None: Post-LN) of both models, the SDE its limit
    (BEYOND section 6), whose state is (theta, r) for a scheme with a radius. One torch thread (tiny tensors)."""
    with torch_threads(1):
        field = GaussianField(activation, bias_std, bias_std, beta=beta, root="eigh")
        save_every = max(1, steps // SAVE_POINTS)
        if model == "discrete":
            noise = field if width is None else MLPNoise(activation, width, bias_std, bias_std)
            dynamics = StochasticTransformer(steps, horizon, noise, attention, norm)
        else:
            sde = LimitSDE(field if factor == 1.0 else Scaled(field, factor), attention, norm)
            dynamics = make_solver(sde, steps, horizon)
        traj = dynamics.run(x0, seed=seeds, saveat=save_every)
        states = traj.x[0] if isinstance(traj.x, tuple) else traj.x  # the directions (S, C, N, d): not the radius
        return {"t": traj.t.numpy(), model: stable_energy(states, beta).numpy()}  # (S,), (S, C)


def attention_digest(attention: Any) -> str | None:
    """A digest of the attention's state (its matrices: a long tensor's repr elides entries); None if it does
    not pickle."""
    try:
        return hashlib.sha256(pickle.dumps(attention)).hexdigest()[:16]
    except Exception:  # an object that does not pickle: its repr alone keys the cache
        return None


def keyed(attention: Any) -> Any:
    """What stands for an attention in a key: the attention itself where it has its own repr (SoftmaxAttention's
    fields), else its class and public fields (object's repr holds a memory address, and a key must be the same in
    every process: the masked and ALiBi attentions of BEYOND 7-9), without its caches (``_patterns``)."""
    if type(attention).__repr__ is not object.__repr__ or not hasattr(attention, "__dict__"):
        return attention
    fields = {k: v for k, v in vars(attention).items() if not k.startswith("_")}
    return type(attention).__module__, type(attention).__qualname__, fields


def energy_key(settings: SyncSettings, attention: Any) -> dict[str, Any]:
    """Every setting the energies depend on (the chunk size and the power factor do not)."""
    numbers = {k: v for k, v in settings.numbers().items() if k != "power_factor"}
    shown = keyed(attention)
    return {"check": "sync", **numbers, "attention": repr(shown), "attention_state": attention_digest(shown)}


def jobs(
    settings: SyncSettings,
    attention: Any,
    x0: torch.Tensor,
    seeds: list[int],
    power: bool,
    fn: Any = sync_runs,
    norm: Any = None,
) -> list[Any]:
    """The jobs of one check: per chunk of runs the SDE and the discrete model (seeds: the runs' SDE seeds,
    then their discrete ones), and with ``power`` the power record's SDE (on the SDE seeds). ``fn``: the job;
    ``norm``: the scheme (None: Post-LN)."""
    from ...sweeps import Job

    s, key = settings, energy_key(settings, attention)
    common = dict(activation=s.activation, bias_std=s.bias_std, beta=s.beta, attention=attention, width=s.width)
    common |= dict(norm=norm)
    common |= dict(steps=s.steps, horizon=s.horizon)
    out = []
    for lo in range(0, s.runs, s.chunk):
        hi = min(s.runs, lo + s.chunk)
        xc = x0[lo:hi].clone()  # a copy: a slice would take the whole ensemble's storage to a worker
        models = [("sde", 0, 1.0), ("discrete", s.runs, 1.0)] + ([("power", 0, 1 / s.power_factor)] if power else [])
        for model, first, factor in models:
            kwargs = {**common, "model": model, "x0": xc, "seeds": seeds[first + lo : first + hi], "factor": factor}
            part = {**key, "lo": lo, "hi": hi, "model": model} | ({"factor": factor} if model == "power" else {})
            out.append(Job(fn, kwargs, part, units=s.steps))
    return out
