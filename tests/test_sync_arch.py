"""The synchronization verdicts for every architecture part (BEYOND section 11): sync-check and phase run
their models with --norm, --alibi, --mask, --causal, --cross, record them in their folder's config, and say "not
applicable", with the reason, exactly where ``experiments._sync.architecture`` says the theorem's assumptions fail;
the Post-LN default keeps its numbers and its verdict."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.cli import app
from sdeformer.config import _blocks as blocks
from sdeformer.core._errors import ConfigError
from sdeformer.core._kernel import kernel_theory
from sdeformer.core._sphere import project
from sdeformer.experiments import _phase as exp_phase
from sdeformer.experiments._sync import check as sync
from sdeformer.experiments._sync.architecture import (
    CELL_VERDICTS,
    NOT_APPLICABLE,
    cell_verdict,
    kernel_reasons,
    part_reasons,
)
from sdeformer.experiments._sync.eps import stable_energy
from sdeformer.experiments._sync.result import VERDICTS
from sdeformer.experiments._sync.settings import SyncSettings
from sdeformer.registry import NORMS
from sdeformer.sweeps import read

pytestmark = pytest.mark.usefixtures("one_thread")
runner = CliRunner()
BEYOND = Path(__file__).resolve().parents[1] / "docs" / "beyond.md"

# every part (config fields) and the reasons the rule must give on 6 tokens: the parts that break an assumption
PARTS: dict[str, tuple[dict, set[str]]] = {
    "post": ({"norm": "post"}, set()),
    "pre": ({"norm": "pre"}, {"norm"}),
    "peri": ({"norm": "peri"}, {"norm"}),
    "mix": ({"norm": "mix:0.5"}, {"norm"}),
    "ngpt": ({"norm": "ngpt:0.5"}, {"norm"}),
    "sqrt": ({"norm": "sqrt"}, {"norm"}),
    "alibi": ({"alibi": 0.5}, {"alibi"}),
    "alibi 0": ({"alibi": 0.0}, set()),
    "path": ({"mask": "path"}, {"mask"}),
    "grid": ({"mask": "grid:2x3"}, {"mask"}),
    "regular": ({"mask": "regular:2"}, {"mask"}),
    "complete": ({"mask": "complete"}, set()),
    "causal": ({"causal": True}, {"causal"}),
    "cross": ({"cross": 2}, {"cross"}),
    "pre + path": ({"norm": "pre", "mask": "path"}, {"norm", "mask"}),
}
# the kernel conditions hold here (not odd, lambda_bar < 0, eps = 0): the parts are the only reasons
SMALL: dict[str, Any] = dict(activation="relu", dim=16, bias_std=0.3, runs=2, tokens=6, steps=20, horizon=1.0, seed=1)
TINY = ["sync-check", "--dim", "8", "--bias-std", "0.3", "--runs", "2", "--tokens", "4", "--steps", "10"]
GRID = dict(
    activations=("relu", "tanh"), dims=(4, 16), bias_stds=(0.0, 0.3), scales=(0.0, 1.0), seeds=2, tokens=6, steps=10,
    horizon=2.0,
)  # fmt: skip


def _errors(result) -> list[str]:
    assert "Traceback" not in result.output + result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("name", PARTS)
def test_the_rule_says_not_applicable_exactly_for_the_parts_that_break_an_assumption(name):
    parts, expected = PARTS[name]
    reasons = part_reasons(parts, 6)
    assert set(reasons) == expected
    assert all(reasons.values())


def test_every_scheme_but_post_ln_has_its_own_reason_and_an_unknown_one_is_refused():
    reasons = {n: part_reasons({"norm": n}, 4).get("norm", "") for n in NORMS.names()}
    assert reasons.pop("post") == ""
    assert len(set(reasons.values())) == len(reasons)  # one reason per scheme, derived from its limit
    assert all("radius grows" in reasons[n] for n in ("pre", "peri", "mix"))
    assert "alpha A / |A|" in reasons["ngpt"] and "time-homogeneous" in reasons["sqrt"]
    with pytest.raises(ConfigError, match="norm"):
        part_reasons({"norm": "layernorm"}, 4)


def test_a_mask_file_is_judged_by_its_graph(tmp_path):
    complete, path = tmp_path / "complete.txt", tmp_path / "path.txt"
    complete.write_text("\n".join(f"{i} {j}" for i in range(5) for j in range(i + 1, 5)))
    path.write_text("\n".join(f"{i} {i + 1}" for i in range(4)))
    assert part_reasons({"mask": str(complete)}, 5) == {}  # all-to-all: the paper's attention
    assert set(part_reasons({"mask": str(path)}, 5)) == {"mask"}


def _growth(attention, tokens: int = 6, dim: int = 3, trials: int = 4000) -> float:
    """The largest d/dt log E_beta (beta = 1) along the noiseless flow dx_i = P_i drift_i(x), over random clouds
    (a random centre, a random spread), by central differences."""
    g = torch.Generator().manual_seed(0)
    centre = torch.randn(trials, 1, dim, generator=g, dtype=torch.float64)
    spread = 3 * torch.rand(trials, 1, 1, generator=g, dtype=torch.float64)
    x = project(centre + spread * torch.randn(trials, tokens, dim, generator=g, dtype=torch.float64))  # (T, N, d)
    v = attention.drift(x)
    v = v - (v * x).sum(-1, keepdim=True) * x  # P_x drift, (T, N, d)
    h = 1e-6
    rate = (stable_energy(x + h * v, 1.0) - stable_energy(x - h * v, 1.0)) / (2 * h * stable_energy(x, 1.0))
    return float(rate.max())


@pytest.mark.parametrize("parts", [{"alibi": 1.0}, {"mask": "path"}, {"causal": True}, {"cross": 2}], ids=str)
def test_the_energy_grows_along_the_flows_the_rule_excludes_and_never_along_the_papers(parts):
    """The reason given ('E_beta can grow along its noiseless flow even for V = I'), measured on the check's own
    attention: the paper's softmax (and the complete mask) has eps = 0 (certified), these flows raise E_beta."""

    def attention(**p):
        return blocks.attention(SyncSettings(dim=3, tokens=6, **p).check().model())

    assert _growth(attention()) < 1e-7 and _growth(attention(mask="complete")) < 1e-7
    assert _growth(attention(**parts)) > 1e-3


@pytest.mark.parametrize("name", PARTS)
def test_sync_check_runs_the_part_and_says_not_applicable_exactly_where_the_rule_does(name):
    parts, expected = PARTS[name]
    default, r = sync.sync_check(**SMALL), sync.sync_check(**SMALL, **parts)
    assert set(r.not_applicable) == expected and r.theorem_applies == (not expected)
    assert (r.verdict == NOT_APPLICABLE) == bool(expected) and r.verdict in VERDICTS
    assert (r.power is None) == bool(expected) and (r.bound_holds is None or not expected)
    assert all(f" {k}={v}" in r.settings.label for k, v in r.settings.parts().items())
    for key in ("sde", "discrete"):  # the energies are simulated and reported all the same
        mine, plain = r.energy_mean[key], default.energy_mean[key]
        assert np.isfinite(mine).all() and mine[0] == pytest.approx(plain[0])  # the same starts
        if expected:  # the flag reached the model: another model, other energies
            assert np.abs(mine - plain).max() > 1e-4
        else:  # the paper's model (the complete mask: the same drift written as a masked softmax)
            np.testing.assert_allclose(mine, plain, rtol=1e-5)
    if expected:
        assert all(f"{k}: " in r.summary() for k in expected)


@pytest.mark.parametrize("parts", [{"mask": "path"}, {"alibi": 0.5}, {"causal": True}, {"norm": "pre"}], ids=str)
def test_a_check_with_a_part_resumes_from_its_parts(tmp_path, monkeypatch, parts):
    """The parts' attentions have object's repr (a memory address): their key must not, or a rerun recomputes."""
    args = {**SMALL, **parts, "out": tmp_path}
    first = sync.sync_check(**args)
    calls = []
    real = sync.sync_runs
    monkeypatch.setattr(sync, "sync_runs", lambda **k: calls.append(k["model"]) or real(**k))
    again = sync.sync_check(**args)
    assert calls == [] and np.array_equal(again.energy_mean["sde"], first.energy_mean["sde"])


def test_the_post_ln_default_is_the_papers_check_bit_for_bit():
    """The default builds exactly the model the check ran before the parts existed (SoftmaxAttention(beta, s), the
    projected Euler-Maruyama SDE, Post-LN), keeps the theorem's verdict and its folder's key."""
    plain = sync.sync_check(**SMALL)
    spelled = sync.sync_check(**SMALL, norm="post", alibi=0.0, mask="", causal=False, cross=0)
    before = sync.sync_check(**SMALL, attention=SoftmaxAttention(1.0, 1.0))
    for r in (spelled, before):
        assert all(np.array_equal(r.energy_mean[k], plain.energy_mean[k]) for k in ("sde", "discrete"))
        assert np.array_equal(r.bound, plain.bound) and r.verdict == plain.verdict and r.eps == plain.eps
    assert plain.theorem_applies and plain.not_applicable == {} and plain.verdict != NOT_APPLICABLE
    assert plain.power is not None and plain.power.caught
    numbers = SyncSettings(**SMALL).check().numbers()
    assert not {"norm", "alibi", "mask", "causal", "cross"} & set(numbers)  # the key it had before


@pytest.mark.parametrize(
    "flag", [["--norm", "pre"], ["--mask", "path"], ["--alibi", "0.5"], ["--causal"], ["--cross", "2"]]
)
def test_sync_check_flags_reach_the_model_and_the_folder(tmp_path, flag):
    plain, own = tmp_path / "plain", tmp_path / "own"
    a = runner.invoke(app, [*TINY, "--out", str(plain), "--json"])
    b = runner.invoke(app, [*TINY, *flag, "--out", str(own), "--json"])
    assert a.exit_code == 0 and b.exit_code == 0, b.stderr
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    name = flag[0].removeprefix("--")
    assert ja["not_applicable"] == {} and ja["verdict"] != NOT_APPLICABLE  # the theorem applies to the default
    assert name in jb["not_applicable"] and jb["verdict"] == NOT_APPLICABLE
    assert np.abs(np.subtract(ja["energy_mean"]["sde"], jb["energy_mean"]["sde"])).max() > 1e-4  # wired in
    held = json.loads((own / "run.json").read_text())["config"]
    assert name in held and name not in json.loads((plain / "run.json").read_text())["config"]
    refused = runner.invoke(app, [*TINY, *flag, "--out", str(plain)])  # a folder of another config
    assert refused.exit_code == 2 and str(plain) in _errors(refused)[0]


BAD = [
    (["--norm", "layernorm"], "norm"),
    (["--norm", "ngpt:0"], "norm"),
    (["--alibi", "-1"], "alibi"),
    (["--mask", "grid:3x"], "mask"),
    (["--mask", "nope"], "mask"),
    (["--cross", "99"], "cross"),
]


@pytest.mark.parametrize("command", [TINY, ["phase", "--quick"]], ids=["sync-check", "phase"])
@pytest.mark.parametrize("bad, param", BAD)
def test_bad_architecture_input_exits_2_in_one_line_before_any_folder(tmp_path, command, bad, param):
    out = tmp_path / "new" / "out"
    result = runner.invoke(app, [*command, *bad, "--out", str(out)])
    errors = _errors(result)
    assert result.exit_code == 2 and len(errors) == 1 and f"invalid {param}=" in errors[0], result.stderr
    assert not (tmp_path / "new").exists()


def test_phase_cells_are_not_applicable_under_a_part_and_p_sync_is_still_measured():
    r = exp_phase.phase(**GRID, norm="pre")
    assert r.parts == {"norm": "pre"} and set(r.not_applicable) == {"norm"}
    assert set(np.unique(r.verdict)) == {NOT_APPLICABLE} and math.isnan(r.agreement)
    assert np.isfinite(r.final_energy).all() and ((r.probability >= 0) & (r.probability <= 1)).all()
    saved = r.to_json()
    assert saved["not_applicable"] == r.not_applicable and saved["parts"] == {"norm": "pre"}


def test_phase_default_keeps_the_kernel_verdicts_and_their_agreement():
    r = exp_phase.phase(**GRID)
    assert r.parts == {} and r.not_applicable == {} and set(np.unique(r.verdict)) <= set(CELL_VERDICTS)
    zero = r.scales.index(0.0)
    lam = np.asarray(r.lambda_bar)
    odd_activation = np.array([kernel_theory(a, 4).activation.odd for a in r.activations])[:, None, None]
    odd = odd_activation & (np.asarray(r.bias_stds) == 0.0)  # (A, 1, B): an odd activation without bias
    kernel = (lam < 0) & ~odd  # the kernel verdict the agreement used before the cells had verdicts
    assert np.array_equal(r.verdict[..., zero] == "synchronizes", kernel)
    assert np.array_equal(r.verdict[..., zero] == "does not", ~kernel)
    observed = r.probability[..., zero] >= 0.5
    assert r.agreement == float((observed == kernel).mean())


def test_a_cell_verdict_is_a_theorem_verdict_only_where_the_theorem_speaks():
    sync_field = kernel_theory("relu", 16, bias_std=0.3)  # not odd, lambda_bar < 0
    no_bias, odd = kernel_theory("relu", 5), kernel_theory("tanh", 16)  # lambda_bar > 0; an odd field
    assert cell_verdict(kernel_reasons(sync_field, 0.0), sync_field, 1.0) == "synchronizes"
    for theory in (no_bias, odd):
        reasons = kernel_reasons(theory, 0.0)
        assert reasons and cell_verdict(reasons, theory, 0.0) == "does not"  # the noise alone: THEORY section 2
        assert cell_verdict(reasons, theory, 1.0) == NOT_APPLICABLE  # attention may cluster what noise does not
        assert cell_verdict({**reasons, "norm": "pre: ..."}, theory, 0.0) == NOT_APPLICABLE
    assert cell_verdict({"mask": "..."}, sync_field, 0.0) == NOT_APPLICABLE


def test_phase_flags_reach_the_sweep_and_the_folder(tmp_path, monkeypatch):
    real = exp_phase.settings_for
    monkeypatch.setattr(exp_phase, "settings_for", lambda quick, **o: {**real(quick, **o), **GRID, "seeds": 1})
    out = tmp_path / "p"
    result = runner.invoke(app, ["phase", "--norm", "pre", "--mask", "path", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.stderr
    saved = json.loads(result.stdout)
    assert saved["parts"] == {"norm": "pre", "mask": "path"} and set(saved["not_applicable"]) == {"norm", "mask"}
    assert set(np.ravel(saved["verdict"])) == {NOT_APPLICABLE}
    table = read(out / "sweep")
    assert set(table["norm"]) == {"pre"} and set(table["mask"]) == {"path"} and set(table["attention"]) == {"graph"}
    held = json.loads((out / "run.json").read_text())["config"]
    assert held["norm"] == "pre" and held["mask"] == "path"


def test_the_docs_table_is_the_rule():
    """BEYOND section 11's table: its first column a config (TOML), its second the verdict the rule gives."""
    text = BEYOND.read_text()
    section = text[text.index("## 11. ") :]
    rows = re.findall(r"^\| `([a-z]+ = [^`]+)` \| (applies|not applicable) \|", section, flags=re.M)
    assert len(rows) >= 12
    seen, norms = set(), set()
    for config, verdict in rows:
        parts = tomllib.loads(f"p = {{ {config} }}")["p"]  # e.g. norm = "pre", mask = "path"
        seen, norms = seen | set(parts), norms | {str(parts.get("norm", "post")).partition(":")[0]}
        assert (verdict == "applies") == (not part_reasons(parts, 12)), config
    assert seen == {"norm", "alibi", "mask", "causal", "cross"} and norms == set(NORMS.names())
