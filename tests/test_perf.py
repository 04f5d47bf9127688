"""The benchmarks' baselines compute what the engine computes, the counts behind the floor are the model's,
torchsde's two forms of our SDE take our Euler step, and ``python -m benchmarks suite`` rejects bad input.
(Speed itself is never tested.)"""

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from benchmarks._grid import grid_counts, plain_grid_run
from benchmarks._sde import GivenNormals, TorchsdeExpert, TorchsdeGeneral
from typer.testing import CliRunner

import sdeformer
from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_sweep
from sdeformer.contracts import RandomSource
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._sde import EulerMaruyama, LimitSDE
from sdeformer.noise._fields import GaussianField, RandomFeatureField
from sdeformer.noise._replay import ReplayedNoise

FP32_AGREE = 1e-5  # same random numbers, different matmul order
TORCHSDE_AGREE = 1e-10  # one fp64 step of either torchsde form against ours
REPO = Path(__file__).resolve().parents[1]


def _configs(**kw):
    base: dict[str, Any] = dict(tokens=8, dim=5, width=16, layers=5, horizon=1.0, su=0.1, sw=0.1)
    base.update(kw)
    return [ModelConfig(**base, attention_scale=s, seed=seed) for s in (1.0, -1.0) for seed in (0, 3)]


def test_plain_baseline_equals_the_engine():
    configs = _configs()
    for cfg, traj in zip(configs, run_sweep(configs)):
        assert (plain_grid_run(cfg) - traj.x).abs().max() < FP32_AGREE


def test_floor_counts_are_the_model_counts():
    configs = _configs()
    n, d, m, L = 8, 5, 16, 5
    assert grid_counts(configs, "direct")["normals"] == len(configs) * L * (2 * m * d + m + d)
    assert grid_counts(configs, "direct")["flops"] == len(configs) * L * (4 * n * m * d + 4 * n * n * d)
    # N = 8, d = 5, m = 16: the hidden stage is direct (d + 1 < N), the output stage goes through the root
    assert grid_counts(configs, "conditional")["normals"] == len(configs) * L * ((d + 1) * m + n * d + d)


def _one_step_fields(d):
    return [
        GaussianField("relu", 0.1, 0.1),
        RandomFeatureField("relu", 32, d, 0.1, 0.2, seed=3, batch=(2,), dtype=torch.float64),
    ]


@pytest.mark.parametrize("field", [0, 1], ids=["gaussian", "random_feature"])
def test_torchsde_forms_take_the_same_euler_step(field):
    """One step y + f dt + g_prod(sqrt(dt) z) equals our Euler-Maruyama step on the replayed normals z, for the
    expert form (custom g_prod) and the straightforward one (g = P_x (B(x) kron I_d), default g_prod = g @ v)."""
    n, d, dt = 12, 4, 0.01
    field = _one_step_fields(d)[field]
    sde = LimitSDE(field, SoftmaxAttention())
    x = uniform_sphere(n, d, batch=(2,), seed=0, dtype=torch.float64)  # (2, N, d)
    shape = (2,) + tuple(field.normal_shape(x))
    z = torch.randn(shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    replayed = LimitSDE(ReplayedNoise(field, [z]), SoftmaxAttention())
    ours = EulerMaruyama(replayed, 1, dt).step(x, Streams(0, (2,)))  # the replayed field draws nothing else
    y, v = x.reshape(2, n * d), math.sqrt(dt) * z.reshape(2, -1)
    expert, general = TorchsdeExpert(sde, (2, n, d)), TorchsdeGeneral(sde, (2, n, d))
    g = general.g(0.0, y)
    assert g.shape == (2, n * d, v.shape[-1])
    for drift, noise in ((expert.f(0.0, y), expert.g_prod(0.0, y, v)), (general.f(0.0, y), (g @ v[..., None])[..., 0])):
        assert (y + dt * drift + noise - ours.reshape(2, n * d)).abs().max() < TORCHSDE_AGREE


def test_given_normals_are_a_random_source_of_one_shape():
    z = torch.zeros(2, 3, 4)
    source = GivenNormals(z, (2,))
    assert isinstance(source, RandomSource) and source.randn((3, 4), torch.float64).dtype == torch.float64
    with pytest.raises(ValueError):
        source.randn((4, 3))


def test_peak_memory_sees_a_large_allocation():
    """In a fresh process: earlier tests' peaks would otherwise hide the allocation where the RSS
    high-water mark cannot be reset."""
    code = (
        "import torch; from benchmarks._timing import peak_memory; "
        "_, extra, out = peak_memory(lambda: torch.ones(16 * 2**20), torch.device('cpu')); "
        "print(out.numel(), extra)"
    )  # 64 MB
    numel, extra = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()
    assert int(numel) == 16 * 2**20
    assert 48 < float(extra) < 512


@pytest.mark.parametrize(
    "args",
    [
        ["--only", "grid,BADNAME"],
        ["--threads", "0", "--only", "sde"],
        ["--device", "nonsense", "--only", "sde"],
    ],
)
def test_bench_cli_rejects_bad_input(args, tmp_path):
    from benchmarks._suite import app as suite

    result = CliRunner().invoke(suite, args + ["--out", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())  # rejected before any part ran


def test_the_benchmarks_live_in_the_checkout_not_the_package():
    """The benchmarks are ``benchmarks/`` at the repository root, out of the wheel (scripts/check_wheel.sh checks
    the wheel holds none); importing the runner imports no part, so parts needing an extra fail only when they
    run."""
    from benchmarks._suite import benchmark_runner

    runner = benchmark_runner()
    assert runner.__name__ == "benchmarks._run"
    assert Path(str(runner.__file__)).resolve().parent == Path(__file__).resolve().parents[1] / "benchmarks"
    assert not (Path(sdeformer.__file__).resolve().parent / "bench").exists()
    probe = "import sys, benchmarks._run; print(sorted(m for m in ('pandas', 'dask', 'torchsde') if m in sys.modules))"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO)
    assert found.stdout == "[]\n"
