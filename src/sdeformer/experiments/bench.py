"""Benchmarks (issue 4): our engine beside straightforward baselines and this machine's floor, in one run.

Parts (each returns a JSON-able dict and is written to ``<out>/<part>.json``):

- ``grid``: the paper-scale Figures 2-6 grid (5 MLP choices x 18 panels, N = 64, L = 150, m = 2048) with the
  batched engine (``sweep.run_sweep``), default and conditional sampling, against a per-setting plain-PyTorch
  loop written here and against the floor ``normals / randn rate + flops / matmul rate`` (rates measured in
  the same run). Per layer and setting the direct MLP draws ``2 m d + m + d`` normals and does
  ``4 N m d`` flops; attention does ``4 N^2 d`` flops.
- ``sde``: the limit SDE (N = 256, d = 16, 1000 steps, softmax attention; exact Gaussian field and random
  features M = 1024) with our Euler-Maruyama against torchsde's, unbatched and as a batch of 32, per run-step.
  torchsde gets the common noise written as general noise twice: straightforwardly (``g`` returns the
  (N d) x (k d) diffusion matrix, default ``g_prod``) and the expert way (a custom ``g_prod`` calling our field).
- ``attention``: the drift at N = 1k ... 64k, d = 64: plain softmax(QK^T)V (where its N^2 scores fit),
  the memory-efficient path, random-batch attention (p = 256): time, extra peak memory, and the random-batch
  error against full attention (and its fall with p).
- ``throughput``: the discrete model at N = 16,384 tokens (4,096 with --quick), full vs random-batch attention,
  fp32 vs bf16 MLP.
- ``precision``: the effect of bf16 MLP matmuls on the energies of the paper-scale d = 64 panels.

Speeds are never tested; correctness of each fast path is (tests/test_attention_fast.py,
tests/test_sampling_shortcut.py, tests/test_perf.py).
"""

from __future__ import annotations

import math
import os
import platform
import resource
import time
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F

from ..activations import get_activation
from ..attention import RandomBatchAttention, SoftmaxAttention
from ..config import ModelConfig
from ..diagnostics import interaction_energy, mean_cosine
from ..discrete import StochasticTransformer
from ..errors import ConfigError
from ..fields import GaussianField, RandomFeatureField
from ..mlp_noise import MLPNoise, root_pays
from ..sde import EulerMaruyama, LimitSDE
from ..sphere import uniform_sphere
from ..store import write_json
from ..sweep import run_sweep
from .grid import MLP_CHOICES, grid_configs

PARTS = ("grid", "sde", "attention", "throughput", "precision")
RB_SIZE = 256  # random-batch size p of the attention and throughput parts
NAIVE_MAX_SCORES = 2**28  # plain attention is run only where its N^2 fp32 scores take <= 1 GB


# -- measuring ------------------------------------------------------------------------------------------------
def machine(device: torch.device) -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "device": str(device),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "load_average_1min": os.getloadavg()[0]}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], object], device: torch.device, repeat: int = 1) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls (seconds) and the last result."""
    best, out = math.inf, None
    for _ in range(repeat):
        _sync(device)
        start = time.perf_counter()
        out = fn()
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return best, out


def _rss_mb(field: str) -> float:
    with open("/proc/self/status", encoding="utf-8") as fh:
        return next(float(line.split()[1]) / 1024 for line in fh if line.startswith(field))


def peak_memory(fn: Callable[[], object], device: torch.device) -> tuple[float, float, object]:
    """(seconds, extra peak memory in MB, result) of one call. CUDA: allocator peak; CPU: the rise of the
    resident-set high-water mark, reset before the call through /proc/self/clear_refs (Linux)."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        base = torch.cuda.memory_allocated(device)
        seconds, out = timed(fn, device)
        return seconds, (torch.cuda.max_memory_allocated(device) - base) / 2**20, out
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
            fh.write("5")
        base = _rss_mb("VmRSS")
    except OSError:  # no reset possible: the high-water mark so far is the baseline
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    seconds, out = timed(fn, device)
    return seconds, max(0.0, _rss_mb("VmHWM") - base), out


def peaks(device: torch.device, quick: bool) -> dict:
    """This machine's sampling and matmul rates, measured now: the denominators of every floor."""
    g = torch.Generator(device=device).manual_seed(0)
    fills = 16  # in-place fills of a cache-sized buffer, as the engine draws: no allocation or page faults
    rates = {}
    for name, dtype in (("randn_fp32_per_s", torch.float32), ("randn_fp64_per_s", torch.float64)):
        buf = torch.empty(2**18, dtype=dtype, device=device)
        seconds, _ = timed(lambda: [buf.normal_(generator=g) for _ in range(fills)], device, repeat=5)
        rates[name] = fills * buf.numel() / seconds
    n = 1024 if quick else 2048
    for name, dtype in (("matmul_fp32_flops", torch.float32), ("matmul_bf16_flops", torch.bfloat16)):
        a = torch.randn(n, n, generator=g, device=device).to(dtype)
        seconds, _ = timed(lambda: a @ a, device, repeat=3)
        rates[name] = 2 * n**3 / seconds
    return rates


def _floor(normals: float, flops: float, rates: dict) -> float:
    return normals / rates["randn_fp32_per_s"] + flops / rates["matmul_fp32_flops"]


# -- (a) the Figures 2-6 grid ---------------------------------------------------------------------------------
def plain_grid_run(cfg: ModelConfig) -> torch.Tensor:
    """The straightforward baseline: one setting, one plain-PyTorch loop over layers (THEORY section 1), the
    same random numbers as the engine's default mode. Returns the saved states ``(L+1, N, d)``."""
    x = cfg.initial_tokens()  # (N, d)
    d, m = cfg.dim, cfg.width
    dt, act, g = cfg.horizon / cfg.layers, get_activation(cfg.activation), torch.Generator().manual_seed(cfg.seed)
    states = [x]
    for _ in range(cfg.layers):
        attn = torch.softmax(cfg.beta * x @ x.T, dim=-1) @ x * cfg.attention_scale  # (N, d)
        x = F.normalize(x + dt * attn, dim=-1)
        if cfg.mlp:
            U, bU = torch.randn(m, d, generator=g), cfg.su * torch.randn(m, generator=g)
            W, bW = torch.randn(d, m, generator=g), cfg.sw * torch.randn(d, generator=g)
            G = act(x @ U.T / math.sqrt(d) + bU) @ W.T / math.sqrt(m) + bW  # (N, d)
            x = F.normalize(x + math.sqrt(dt) * G, dim=-1)
        states.append(x)
    return torch.stack(states)


def _mlp_flops(n: int, d: int, m: int, sampling: str) -> float:
    """Matmul flops of one MLP layer (conditional mode: Householder QR and the smaller products)."""
    if sampling == "direct":
        return 4.0 * n * m * d
    k = d + 1
    hidden = 2.0 * k * n * n + 2.0 * n * n * m if root_pays(n, k, m) else 2.0 * n * k * m
    output = 2.0 * m * n * n + 2.0 * n * n * d if root_pays(n, m, d) else 2.0 * n * m * d
    return hidden + output


def grid_counts(configs: list[ModelConfig], sampling: str) -> dict:
    """Normals drawn and flops done by a sweep of configs (per layer and setting, times L)."""
    normals = flops = 0.0
    for c in configs:
        attn = 4.0 * c.tokens**2 * c.dim
        mlp = MLPNoise(c.activation, c.width, sampling=sampling)
        normals += c.layers * (mlp.normals_per_layer(c.tokens, c.dim) if c.mlp else 0)
        flops += c.layers * (attn + (_mlp_flops(c.tokens, c.dim, c.width, sampling) if c.mlp else 0))
    return {"normals": normals, "flops": flops}


def bench_grid(device: torch.device, rates: dict, quick: bool) -> dict:
    layers = 15 if quick else 150
    choices = ("relu",) if quick else MLP_CHOICES
    # the reproduction samples conditionally; the engine-vs-loop comparison draws U, W directly, as the loop does
    configs = [c.replace(sampling="direct") for ch in choices for c in grid_configs(ch, layers=layers)]
    t_loop, plain = timed(lambda: [plain_grid_run(c) for c in configs], torch.device("cpu"))
    t_ours, trajs = timed(lambda: run_sweep(configs, device), device)
    t_cond, _ = timed(lambda: run_sweep(configs, device, sampling="conditional"), device)
    agree = max((p - t.x.cpu()).abs().max().item() for p, t in zip(plain, trajs))
    direct, cond = grid_counts(configs, "direct"), grid_counts(configs, "conditional")
    floor_direct, floor_cond = _floor(**direct, rates=rates), _floor(**cond, rates=rates)
    return {
        "settings": len(configs), "layers": layers, "choices": list(choices),
        "seconds": {"plain_loop": t_loop, "engine": t_ours, "engine_conditional": t_cond,
                    "floor_direct": floor_direct, "floor_conditional": floor_cond},
        "counts": {"direct": direct, "conditional": cond},
        "ratios": {"loop_over_engine": t_loop / t_ours, "loop_over_engine_conditional": t_loop / t_cond,
                   "engine_over_floor_direct": t_ours / floor_direct,
                   "engine_conditional_over_floor_conditional": t_cond / floor_cond,
                   "engine_conditional_over_floor_direct": t_cond / floor_direct},
        "max_abs_difference_loop_vs_engine": agree,
    }


# -- (b) the limit SDE vs torchsde ----------------------------------------------------------------------------
def diffusion_basis(field, x: torch.Tensor) -> torch.Tensor:
    """B(x) ``(..., N, k)`` with dW(x)_n = sum_m B[n, m] z_m, z ``(..., k, d)`` the field's standard normals:
    the Cholesky factor of K(x) (Gaussian field, k = N) or [phi(x) / sqrt(M), sW] (random features, k = M+1)."""
    if isinstance(field, RandomFeatureField):
        phi = field.phi(x) / math.sqrt(field.features)  # (..., N, M)
        return torch.cat([phi, torch.full_like(phi[..., :1], field.sw)], dim=-1)  # (..., N, M+1)
    return field.factor(x)  # (..., N, N)


def _torchsde_general(sde: LimitSDE, shape: tuple[int, ...]):
    """The straightforward torchsde form of our SDE: state (B, N d), noise_type="general" with ``g(t, y)`` the
    full (B, N d, k d) diffusion matrix g[(n, a), (m, b)] = (P_{x_n})_{ab} B(x)_{nm}, i.e. P_x (B(x) kron I_d),
    built every step (as one broadcast product, the cheapest exact construction), and torchsde's default
    g_prod, a batched matrix-vector product."""
    import torch.nn as nn

    class GeneralNoiseSDE(nn.Module):
        noise_type, sde_type = "general", "ito"

        def f(self, t, y):  # (B, N d) -> (B, N d)
            return sde.drift(y.reshape(shape)).reshape(y.shape)

        def g(self, t, y):  # (B, N d) -> (B, N d, k d)
            x = y.reshape(shape)  # (B, N, d)
            eye = torch.eye(shape[-1], dtype=y.dtype, device=y.device)
            proj = eye - x.unsqueeze(-1) * x.unsqueeze(-2)  # (B, N, d, d)
            basis = diffusion_basis(sde.field, x)  # (B, N, k)
            full = proj.unsqueeze(-2) * basis[..., :, None, :, None]  # (B, N, d, k, d)
            return full.reshape(y.shape[0], y.shape[1], -1)

    return GeneralNoiseSDE()


def _torchsde_problem(sde: LimitSDE, shape: tuple[int, ...]):
    """The expert torchsde form: state (B, N d); general noise whose Brownian motion is the field's standard
    normals (N d for the Gaussian field, (M+1) d for random features); a custom ``g_prod`` = P_x dW(x) that
    calls our field, so no diffusion matrix is ever formed."""
    import torch.nn as nn

    class CommonNoiseSDE(nn.Module):
        noise_type, sde_type = "general", "ito"

        def f(self, t, y):  # (B, N d) -> (B, N d)
            return sde.drift(y.reshape(shape)).reshape(y.shape)

        def g_prod(self, t, y, v):  # Brownian increments v (B, noise) -> P_x dW(x), (B, N d)
            x = y.reshape(shape)
            z = v.reshape(shape[:-2] + tuple(sde.field.normal_shape(x)))
            return sde.diffusion(x, 1.0, _GivenNormals(z)).reshape(y.shape)

    return CommonNoiseSDE()


class _GivenNormals:
    """A stand-in for Streams that hands the field pre-drawn normals (torchsde owns the Brownian motion)."""

    def __init__(self, z: torch.Tensor):
        self.z = z

    def randn(self, shape, dtype=torch.float32):
        return self.z.to(dtype)


def _sde_fields(n: int, d: int, runs: int, device: torch.device) -> dict:
    batch = () if runs == 1 else (runs,)
    return {"gaussian": GaussianField("relu", 0.1, 0.1),
            "random_feature_1024": RandomFeatureField("relu", 1024, d, 0.1, 0.1, seed=0, batch=batch, device=device)}


def bench_sde(device: torch.device, quick: bool) -> dict:
    """Per run-step seconds of our Euler-Maruyama and torchsde's ("general": the straightforward form, run
    unbatched over fewer steps since its diffusion matrix is N d x k d; "expert": custom g_prod)."""
    try:
        import torchsde
    except ImportError:
        return {"skipped": "torchsde is not installed (pip install 'sdeformer[theory]')"}
    n, d, horizon, batch = 256, 16, 1.0, 32
    out: dict = {"tokens": n, "dim": d, "batch": batch, "scheme": "Euler-Maruyama (all)", "attention": "softmax"}
    for runs in (1, batch):
        for name, field in _sde_fields(n, d, runs, device).items():
            steps = 20 if quick else (1000 if runs == 1 else 100)  # per run-step ratios; the batch is 32x the work
            sde = LimitSDE(field, SoftmaxAttention())
            shape = (runs, n, d)
            x0 = uniform_sphere(n, d, batch=shape[:1] if runs > 1 else (), seed=0, device=device)  # (..., N, d)
            noise = math.prod(field.normal_shape(x0))
            ts = torch.tensor([0.0, horizon], device=device)

            def ours(k: int = steps):
                return EulerMaruyama(sde, k, horizon).solve(x0, seed=0, save_every=k)

            def torchsde_run(form, k: int = steps):
                bm = torchsde.BrownianInterval(t0=0.0, t1=horizon, size=(runs, noise), device=device, entropy=0)
                return torchsde.sdeint(form(sde, shape), x0.reshape(runs, n * d), ts, bm=bm, method="euler",
                                       dt=horizon / k)

            ours(2), torchsde_run(_torchsde_problem, 2)  # warm-up: allocator, first-call costs
            t_ours, _ = timed(ours, device)
            t_expert, _ = timed(lambda: torchsde_run(_torchsde_problem), device)
            row = {"steps": steps, "ours_s_per_run_step": t_ours / (runs * steps),
                   "torchsde_expert_s_per_run_step": t_expert / (runs * steps), "speedup_vs_expert": t_expert / t_ours}
            if runs == 1:  # general noise: its (N d) x (k d) matrix per run (16.7M / 67M entries) rules out a batch
                general_steps = 5 if quick else 50
                torchsde_run(_torchsde_general, 2)
                t_general, _ = timed(lambda: torchsde_run(_torchsde_general, general_steps), device)
                row.update(general_steps=general_steps, torchsde_general_s_per_run_step=t_general / general_steps,
                           general_matrix_entries=n * d * noise)
                row["speedup_vs_general"] = row["torchsde_general_s_per_run_step"] / row["ours_s_per_run_step"]
            out.setdefault(name, {})["unbatched" if runs == 1 else f"batch_{runs}"] = row
    for name in ("gaussian", "random_feature_1024"):
        r, ours_batched = out[name], out[name][f"batch_{batch}"]["ours_s_per_run_step"]
        r["batched_speedup_per_run_step_vs_general"] = r["unbatched"]["torchsde_general_s_per_run_step"] / ours_batched
        r["batched_speedup_per_run_step_vs_expert"] = r["unbatched"]["torchsde_expert_s_per_run_step"] / ours_batched
    return out


# -- (c) attention at large N ---------------------------------------------------------------------------------
def _plain_attention(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ x.transpose(-1, -2), dim=-1) @ x  # (N, d), N x N scores


def bench_attention(device: torch.device, quick: bool) -> dict:
    sizes = (1024, 4096) if quick else (1024, 4096, 16384, 65536)
    d, full = 64, SoftmaxAttention()
    rows = []
    for n in sizes:
        x = uniform_sphere(n, d, seed=0, device=device)  # (N, d)
        row: dict = {"tokens": n}
        if n * n <= NAIVE_MAX_SCORES:
            row["plain_s"], row["plain_mb"], _ = peak_memory(lambda: _plain_attention(x), device)
        else:
            row["plain_s"] = row["plain_mb"] = None
            row["plain_note"] = f"not run: N^2 fp32 scores alone need {n * n * 4 / 2**30:.0f} GB"
        row["efficient_s"], row["efficient_mb"], exact = peak_memory(lambda: full.drift(x), device)
        rb = RandomBatchAttention(full, RB_SIZE, seed=1)
        row["random_batch_s"], row["random_batch_mb"], approx = peak_memory(lambda: rb.drift(x), device)
        row["random_batch_relative_mse"] = ((approx - exact).pow(2).sum() / exact.pow(2).sum()).item()
        row["efficient_over_random_batch"] = row["efficient_s"] / row["random_batch_s"]
        rows.append(row)
    n = 4096
    x = uniform_sphere(n, d, seed=0, device=device)
    exact = full.drift(x)
    err = []
    for p in (16, 64, 256, 1024, 4096):
        e = (RandomBatchAttention(full, p, seed=2).drift(x) - exact).pow(2).sum(-1).mean().item()
        err.append({"p": p, "mse": e, "relative_mse": e / exact.pow(2).sum(-1).mean().item()})
    return {"dim": d, "random_batch_size": RB_SIZE, "sizes": rows, "error_vs_p_at_4096": err}


# -- (d) throughput at N = 16,384 -----------------------------------------------------------------------------
def bench_throughput(device: torch.device, quick: bool) -> dict:
    n, d, m = (4096 if quick else 16384), 64, 2048
    layers = 1 if quick else 3
    x0 = uniform_sphere(n, d, seed=0, device=device)
    variants = {
        "full_attention_fp32": (SoftmaxAttention(), {}),
        "random_batch_fp32": (RandomBatchAttention(SoftmaxAttention(), RB_SIZE, seed=1), {}),
        "random_batch_bf16_mlp": (RandomBatchAttention(SoftmaxAttention(), RB_SIZE, seed=1),
                                  {"matmul_dtype": torch.bfloat16}),
    }
    out: dict = {"tokens": n, "dim": d, "width": m, "layers": layers}
    for name, (attn, options) in variants.items():
        model = StochasticTransformer(layers, 5.0 * layers / 150, mlp=MLPNoise("relu", m, 0.1, 0.1, **options),
                                      attention=attn)
        seconds, mem, _ = peak_memory(lambda: model.run(x0, seed=0, save_every=layers), device)
        out[name] = {"seconds_per_layer": seconds / layers, "token_layers_per_s": n * layers / seconds,
                     "extra_peak_mb": mem}
    return out


# -- bf16 MLP matmuls: effect on energies ---------------------------------------------------------------------
def bench_precision(device: torch.device, quick: bool) -> dict:
    layers = 30 if quick else 150
    configs = [c for c in grid_configs("relu", layers=layers) if c.dim == 64]
    t32, fp32 = timed(lambda: run_sweep(configs, device), device)
    t16, bf16 = timed(lambda: run_sweep(configs, device, matmul_dtype=torch.bfloat16), device)
    e32 = torch.stack([interaction_energy(t.x, beta=1.0) for t in fp32])  # (settings, L+1)
    e16 = torch.stack([interaction_energy(t.x, beta=1.0) for t in bf16])
    c32 = torch.stack([mean_cosine(t.final) for t in fp32])
    c16 = torch.stack([mean_cosine(t.final) for t in bf16])
    return {"settings": len(configs), "layers": layers, "dim": 64, "activation": "relu",
            "seconds_fp32": t32, "seconds_bf16": t16,
            "energy_max_abs_difference": (e16 - e32).abs().max().item(),
            "energy_max_relative_difference": ((e16 - e32).abs() / e32.abs().clamp(min=1e-12)).max().item(),
            "energy_range_fp32": [e32.min().item(), e32.max().item()],
            "final_mean_cosine_max_abs_difference": (c16 - c32).abs().max().item()}


# -- driver ---------------------------------------------------------------------------------------------------
def run_benchmarks(parts: tuple[str, ...] = PARTS, quick: bool = False, out: "str | Path | None" = None,
                   device: "str | torch.device" = "cpu", on_part: Callable[[str], None] | None = None,
                   threads: int | None = None) -> dict:
    """Run the named parts; write ``<out>/<part>[_quick].json`` as each finishes. Returns all results.
    ``threads`` sets torch's CPU threads for the run (on a machine shared with other jobs, 1 thread avoids
    OpenMP oversubscription, which slows small ops by 10-40x). Raises ConfigError for an unknown part or a
    thread count < 1."""
    for p in parts:
        if p not in PARTS:
            raise ConfigError("part", p, f"one or more of {list(PARTS)}")
    if threads is not None:
        if isinstance(threads, bool) or int(threads) != threads or threads < 1:
            raise ConfigError("threads", threads, "must be a positive integer")
        torch.set_num_threads(int(threads))
    try:
        device = torch.device(device)
    except RuntimeError:
        raise ConfigError("device", device, "a torch device such as 'cpu' or 'cuda'") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device", str(device), "CUDA is not available on this machine")
    rates = peaks(device, quick)
    results: dict = {"machine": machine(device), "quick": quick, "rates": rates}
    runners = {"grid": lambda: bench_grid(device, rates, quick), "sde": lambda: bench_sde(device, quick),
               "attention": lambda: bench_attention(device, quick),
               "throughput": lambda: bench_throughput(device, quick),
               "precision": lambda: bench_precision(device, quick)}
    for part in parts:
        results[part] = runners[part]()
        if out is not None:
            suffix = "_quick" if quick else ""
            write_json(Path(out) / f"{part}{suffix}.json",
                       {"machine": results["machine"], "rates": rates, "quick": quick, part: results[part]})
        if on_part is not None:
            on_part(part)
    return results


def summary_rows(results: dict) -> list[tuple[str, str, str]]:
    """(measurement, value, target) rows of the headline ratios, for the CLI table and docs."""
    rows = []
    if "grid" in results:
        r = results["grid"]["ratios"]
        rows += [("grid: plain loop / engine", f"{r['loop_over_engine']:.2f}x", ">= 3x"),
                 ("grid: plain loop / engine (conditional sampling)", f"{r['loop_over_engine_conditional']:.2f}x",
                  ">= 3x"),
                 ("grid: engine / floor (direct counts)", f"{r['engine_over_floor_direct']:.2f}x", "<= 1.5x"),
                 ("grid: engine conditional / its floor", f"{r['engine_conditional_over_floor_conditional']:.2f}x",
                  "<= 1.5x")]
    if "sde" in results and "skipped" not in results["sde"]:
        for name in ("gaussian", "random_feature_1024"):
            s = results["sde"][name]
            for kind in ("general", "expert"):
                unbatched = s["unbatched"][f"speedup_vs_{kind}"]
                rows += [(f"sde ({name}): torchsde {kind} / ours, unbatched", f"{unbatched:.2f}x", ">= 4x"),
                         (f"sde ({name}): torchsde {kind} unbatched / ours batched, per run-step",
                          f"{s[f'batched_speedup_per_run_step_vs_{kind}']:.2f}x", ">= 10x")]
    if "attention" in results:
        last = results["attention"]["sizes"][-1]
        rows.append((f"attention N={last['tokens']}: full (efficient) / random-batch p={RB_SIZE}",
                     f"{last['efficient_over_random_batch']:.1f}x", ">= 50x at N=65536"))
        rows.append((f"attention N={last['tokens']}: extra memory of the efficient path",
                     f"{last['efficient_mb']:.0f} MB", "< 1 GB at N=65536"))
    if "throughput" in results:
        t = results["throughput"]
        rows += [(f"throughput N={t['tokens']}: {k}", f"{t[k]['token_layers_per_s']:.3g} token-layers/s", "")
                 for k in ("full_attention_fp32", "random_batch_fp32", "random_batch_bf16_mlp")]
    if "precision" in results:
        p = results["precision"]
        rows.append(("bf16 MLP: max |E_bf16 - E_fp32| (d=64 panels)", f"{p['energy_max_abs_difference']:.2e}", ""))
    return rows
