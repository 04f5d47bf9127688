"""Benchmark part ``sde``: the limit SDE with our Euler-Maruyama against torchsde's, in two torchsde forms.

Both forms see the state as ``(B, N d)`` and the common noise as torchsde "general" Ito noise:
``TorchsdeGeneral`` builds the full diffusion matrix every step (the straightforward form),
``TorchsdeExpert`` has a custom ``g_prod`` that calls our field on the increments torchsde hands it.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.contracts import Replayable
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._sde import EulerMaruyama, LimitSDE
from sdeformer.noise._fields import GaussianField, RandomFeatureField

from ._timing import interleaved, ratio, spread


def diffusion_basis(field, x: torch.Tensor) -> torch.Tensor:
    """B(x) ``(..., N, k)`` with dW(x)_n = sum_m B[n, m] z_m, z ``(..., k, d)`` the field's standard normals:
    the Cholesky factor of K(x) (Gaussian field, k = N) or [phi(x) / sqrt(M), sW] (random features, k = M+1)."""
    if isinstance(field, RandomFeatureField):
        phi = field.phi(x) / math.sqrt(field.features)  # (..., N, M)
        return torch.cat([phi, torch.full_like(phi[..., :1], float(field.sw))], dim=-1)  # (..., N, M+1)
    return field.factor(x)  # (..., N, N)


class GivenNormals:
    """A ``RandomSource`` (sdeformer.contracts) handing a field pre-drawn normals ``z`` ``(*batch, *shape)``, for
    when torchsde owns the Brownian motion. ``randn`` raises ValueError when asked for another shape."""

    def __init__(self, z: torch.Tensor, batch: tuple[int, ...]):
        self.z, self.batch = z, tuple(batch)

    def randn(self, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
        if tuple(self.z.shape) != self.batch + tuple(shape):
            raise ValueError(f"given normals of shape {tuple(self.z.shape)}, asked for {self.batch + tuple(shape)}")
        return self.z.to(dtype)


class _TorchsdeForm(nn.Module):
    """Our SDE as a torchsde problem on the state ``(B, N d)`` (``shape`` = (B, N, d)): general Ito noise."""

    noise_type, sde_type = "general", "ito"

    def __init__(self, sde: LimitSDE, shape: tuple[int, ...]):
        super().__init__()
        self.sde, self.shape = sde, tuple(shape)

    def f(self, t, y):  # (B, N d) -> (B, N d)
        return self.sde.drift(y.reshape(self.shape)).reshape(y.shape)


class TorchsdeGeneral(_TorchsdeForm):
    """The straightforward form: ``g(t, y)`` is the full (B, N d, k d) diffusion matrix
    g[(n, a), (m, b)] = (P_{x_n})_{ab} B(x)_{nm}, i.e. P_x (B(x) kron I_d), built every step (as one broadcast
    product, the cheapest exact construction), with torchsde's default g_prod, a batched matrix-vector product."""

    def g(self, t, y):  # (B, N d) -> (B, N d, k d)
        x = y.reshape(self.shape)  # (B, N, d)
        eye = torch.eye(self.shape[-1], dtype=y.dtype, device=y.device)
        proj = eye - x.unsqueeze(-1) * x.unsqueeze(-2)  # (B, N, d, d)
        basis = diffusion_basis(self.sde.field, x)  # (B, N, k)
        full = proj.unsqueeze(-2) * basis[..., :, None, :, None]  # (B, N, d, k, d)
        return full.reshape(y.shape[0], y.shape[1], -1)


class TorchsdeExpert(_TorchsdeForm):
    """The expert form: the Brownian motion is the field's standard normals (N d for the Gaussian field,
    (M+1) d for random features) and a custom ``g_prod`` = P_x dW(x) calls our field, so no diffusion matrix is
    ever formed."""

    def g_prod(self, t, y, v):  # Brownian increments v (B, noise) -> P_x dW(x), (B, N d)
        x, batch, field = y.reshape(self.shape), self.shape[:-2], self.sde.field
        assert isinstance(field, Replayable)  # both benchmarked fields are functions of standard normals
        z = v.reshape(batch + tuple(field.normal_shape(x)))
        return self.sde.diffusion(x, 1.0, GivenNormals(z, batch)).reshape(y.shape)


def _sde_fields(d: int, runs: int, device: torch.device) -> dict:
    batch = () if runs == 1 else (runs,)
    return {
        "gaussian": GaussianField("relu", 0.1, 0.1),
        "random_feature_1024": RandomFeatureField("relu", 1024, d, 0.1, 0.1, seed=0, batch=batch, device=device),
    }


def _contenders(torchsde, field, runs: int, steps: int, general_steps: int, device: torch.device) -> dict:
    """Our Euler-Maruyama and torchsde's on ``runs`` runs (general noise: unbatched only, ``general_steps``),
    each warmed up once (allocator, first-call costs); name -> (callable, run-steps it takes)."""
    n, d, horizon = 256, 16, 1.0
    sde = LimitSDE(field, SoftmaxAttention())
    shape = (runs, n, d)
    x0 = uniform_sphere(n, d, batch=shape[:1] if runs > 1 else (), seed=0, device=device)  # (..., N, d)
    noise = math.prod(field.normal_shape(x0))
    ts = torch.tensor([0.0, horizon], device=device)

    def ours(k: int = steps):
        return EulerMaruyama(sde, k, horizon).run(x0, seed=0, saveat=k)

    def torchsde_run(form: type[_TorchsdeForm], k: int = steps):
        bm = torchsde.BrownianInterval(t0=0.0, t1=horizon, size=(runs, noise), device=device, entropy=0)
        return torchsde.sdeint(form(sde, shape), x0.reshape(runs, n * d), ts, bm=bm, method="euler", dt=horizon / k)

    out = {"ours": (ours, runs * steps), "torchsde_expert": (lambda: torchsde_run(TorchsdeExpert), runs * steps)}
    if runs == 1:  # general noise: its (N d) x (k d) matrix per run (16.7M / 67M entries) rules out a batch
        out["torchsde_general"] = (lambda: torchsde_run(TorchsdeGeneral, general_steps), general_steps)
        torchsde_run(TorchsdeGeneral, 2)
    ours(2)
    torchsde_run(TorchsdeExpert, 2)
    return out


def bench_sde(device: torch.device, quick: bool, rounds: int = 3) -> dict:
    """Per run-step seconds of our Euler-Maruyama and torchsde's ("general": the straightforward form, run
    unbatched over fewer steps since its diffusion matrix is N d x k d; "expert": custom g_prod), unbatched and
    as a batch of 32, all five contenders of a field interleaved over ``rounds``; min / median / max and the
    speed-ups per round."""
    try:
        import torchsde
    except ImportError:
        return {"skipped": "torchsde is not installed (pip install 'sdeformer[theory]')"}
    batch, d = 32, 16
    out: dict = {"tokens": 256, "dim": d, "batch": batch, "scheme": "Euler-Maruyama (all)", "attention": "softmax"}
    general_steps = 5 if quick else 50
    for name in ("gaussian", "random_feature_1024"):
        contenders: dict = {}
        for runs in (1, batch):
            steps = 20 if quick else (1000 if runs == 1 else 100)  # per run-step ratios; the batch is 32x the work
            form = "unbatched" if runs == 1 else f"batch_{runs}"
            field = _sde_fields(d, runs, device)[name]
            for who, fn in _contenders(torchsde, field, runs, steps, general_steps, device).items():
                contenders[f"{who}:{form}"] = fn
        record, _ = interleaved({k: fn for k, (fn, _) in contenders.items()}, device, rounds)
        per = {k: [s / units for s in record["seconds"][k]] for k, (_, units) in contenders.items()}  # per run-step
        r: dict = {"rounds": record}
        for form in ("unbatched", f"batch_{batch}"):
            row: dict = {"ours_s_per_run_step": spread(per[f"ours:{form}"])}
            for kind in ("expert", "general"):
                theirs = per.get(f"torchsde_{kind}:{form}")
                if theirs is not None:
                    row[f"torchsde_{kind}_s_per_run_step"] = spread(theirs)
                    row[f"speedup_vs_{kind}"] = ratio(theirs, per[f"ours:{form}"])
            r[form] = row
        r["unbatched"]["general_steps"] = general_steps
        for kind in ("general", "expert"):  # torchsde unbatched against ours batched, per run-step, per round
            r[f"batched_speedup_per_run_step_vs_{kind}"] = ratio(
                per[f"torchsde_{kind}:unbatched"], per[f"ours:batch_{batch}"]
            )
        out[name] = r
    return out
