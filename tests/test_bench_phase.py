"""The peers' phase-diagram benchmark compares like with like: the plain script, sdeformer
per beta and all beta in one batch give the same one-cluster fractions at every saved time."""

import torch
from benchmarks import _phase as phase, _run as runner
from benchmarks._timing import conditions


def test_the_three_contenders_agree_and_the_summary_reads_them(monkeypatch):
    monkeypatch.setattr(phase, "BETAS", (1.0, 8.0))
    monkeypatch.setattr(phase, "DIMS", (2,))
    monkeypatch.setattr(phase, "SIZES", {"quick": (4, 30), "full": (4, 30)})
    out = phase.bench_phase(torch.device("cpu"), quick=True, rounds=2)
    assert out["max_abs_difference_of_fractions"] == 0.0
    assert 0 < out["one_cluster_test_share_of_all_beta"]["median"] < 1
    rows = runner.summary_rows({"phase": {**out, "conditions": {"before": conditions()}}, "rounds": 2,
                                "machine": {"torch_threads": 1}})  # fmt: skip
    assert rows[0][0].startswith("phase (attention only)") and rows[-1][0] == "conditions"


def test_the_plain_script_is_a_real_baseline_a_wrong_beta_changes_its_fractions():
    configs = phase._configs((0.5,), 2, 16, 200, "float32")  # clusters by t = 20 (all 16 runs at t = 16)
    right = phase.plain_phase(configs)
    wrong = phase.plain_phase([c.replace(beta=8.0) for c in configs])  # metastable: no run in one cluster
    ours = phase._ours(configs, {})[:, 0]
    assert torch.equal(right, ours) and float(right[-1]) == 1.0 and float(wrong.max()) == 0.0
