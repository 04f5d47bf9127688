"""The benchmark's baselines compute what the engine computes, the counts behind the floor are the
model's, the batched fast paths equal their unbatched runs, and ``sdeformer bench`` rejects bad input.
(Speed itself is never tested.)"""

import math

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.attention import SoftmaxAttention
from sdeformer.cli import app
from sdeformer.config import ModelConfig
from sdeformer.experiments import bench
from sdeformer.fields import GaussianField, RandomFeatureField
from sdeformer.mlp_noise import MLPNoise
from sdeformer.sde import EulerMaruyama, LimitSDE
from sdeformer.sphere import uniform_sphere
from sdeformer.sweep import run_sweep

FP32_AGREE = 1e-5  # same random numbers, different matmul order
FP64_AGREE = 1e-12
TORCHSDE_AGREE = 1e-10  # one fp64 step of either torchsde form against ours


def _configs(**kw):
    base = dict(tokens=8, dim=5, width=16, layers=5, horizon=1.0, su=0.1, sw=0.1)
    base.update(kw)
    return [ModelConfig(**base, attention_scale=s, seed=seed) for s in (1.0, -1.0) for seed in (0, 3)]


def test_plain_baseline_equals_the_engine():
    configs = _configs()
    for cfg, traj in zip(configs, run_sweep(configs)):
        assert (bench.plain_grid_run(cfg) - traj.x).abs().max() < FP32_AGREE


def test_floor_counts_are_the_model_counts():
    configs = _configs()
    n, d, m, L = 8, 5, 16, 5
    assert bench.grid_counts(configs, "direct")["normals"] == len(configs) * L * (2 * m * d + m + d)
    assert bench.grid_counts(configs, "direct")["flops"] == len(configs) * L * (4 * n * m * d + 4 * n * n * d)
    # N = 8, d = 5, m = 16: the hidden stage is direct (d + 1 < N), the output stage goes through the root
    assert bench.grid_counts(configs, "conditional")["normals"] == len(configs) * L * ((d + 1) * m + n * d + d)


def test_conditional_sweep_batched_equals_unbatched():
    configs = _configs(dtype="float64", dim=12)
    trajs = run_sweep(configs, sampling="conditional")
    for cfg, traj in zip(configs, trajs):
        model = cfg.build()
        model.mlp = MLPNoise(cfg.activation, cfg.width, cfg.su, cfg.sw, sampling="conditional")
        single = model.run(cfg.initial_tokens(), seed=cfg.seed)
        assert (single.x - traj.x).abs().max() < FP64_AGREE


def _one_step_sdes(n, d):
    return [LimitSDE(GaussianField("relu", 0.1, 0.1), SoftmaxAttention()),
            LimitSDE(RandomFeatureField("relu", 32, d, 0.1, 0.2, seed=3, batch=(2,), dtype=torch.float64),
                     SoftmaxAttention())]


@pytest.mark.parametrize("field", [0, 1], ids=["gaussian", "random_feature"])
def test_torchsde_forms_take_the_same_euler_step(field):
    """One step y + f dt + g_prod(sqrt(dt) z) equals our Euler-Maruyama step with normals z, for the expert
    form (custom g_prod) and the straightforward one (g = P_x (B(x) kron I_d), default g_prod = g @ v)."""
    n, d, dt = 12, 4, 0.01
    sde = _one_step_sdes(n, d)[field]
    x = uniform_sphere(n, d, batch=(2,), seed=0, dtype=torch.float64)  # (2, N, d)
    shape = (2,) + tuple(sde.field.normal_shape(x))
    z = torch.randn(shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ours = EulerMaruyama(sde, 1, dt).step(x, bench._GivenNormals(z))
    y, v = x.reshape(2, n * d), math.sqrt(dt) * z.reshape(2, -1)
    expert = bench._torchsde_problem(sde, (2, n, d))
    general = bench._torchsde_general(sde, (2, n, d))
    g = general.g(0.0, y)
    assert g.shape == (2, n * d, v.shape[-1])
    for drift, noise in ((expert.f(0.0, y), expert.g_prod(0.0, y, v)), (general.f(0.0, y), (g @ v[..., None])[..., 0])):
        assert (y + dt * drift + noise - ours.reshape(2, n * d)).abs().max() < TORCHSDE_AGREE


def test_peak_memory_sees_a_large_allocation():
    """In a fresh process: earlier tests' peaks would otherwise hide the allocation where the RSS
    high-water mark cannot be reset."""
    import subprocess
    import sys

    code = ("import torch; from sdeformer.experiments import bench; "
            "_, extra, out = bench.peak_memory(lambda: torch.ones(16 * 2**20), torch.device('cpu')); "
            "print(out.numel(), extra)")  # 64 MB
    numel, extra = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  check=True).stdout.split()
    assert int(numel) == 16 * 2**20
    assert 48 < float(extra) < 512


@pytest.mark.parametrize("args", [["bench", "--only", "grid,foo"], ["bench", "--threads", "0", "--only", "sde"],
                                  ["bench", "--device", "nonsense", "--only", "sde"]])
def test_bench_cli_rejects_bad_input(args, tmp_path):
    result = CliRunner().invoke(app, args + ["--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_bench_cli_help():
    result = CliRunner().invoke(app, ["bench", "--help"])
    assert result.exit_code == 0 and "--quick" in result.output
