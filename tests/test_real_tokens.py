"""Token hygiene and decoders in ``sdeformer real`` (docs/real.md, "Token hygiene" and "Decoders"): one planted
huge token drives the all-token common share to ~1/n and leaves the content share where it was; a Pre-LN model's
last state is the stream before its final norm (no jump in the variance law); the fitted model of a causal model
is causal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers")

from test_real import SENTENCES, WordTokenizer, tiny

from sdeformer.real import _load as load
from sdeformer.real._stats import share_statistics, variance_law
from sdeformer.real._synthetic import simulate
from sdeformer.real._tokens import massive, select


def test_real_planted_huge_token_moves_all_token_share_not_content_share():
    """A capture of the theory's model (share 0.7, so the common share is far above 1/n) with one token per
    sentence whose MLP output is 1000x larger and marked special: the all-token share drops to ~1/n, the content
    share does not move, and the massive share reads ~1 (0 before planting)."""
    runs, n = 32, 16
    cap = simulate(runs=runs, tokens=n, dim=8, layers=2, beta=1.0, step=0.05, su=0.5, sw=0.5, share=0.7)
    cap.special = [torch.arange(n) == 3 for _ in range(runs)]
    before = np.array(share_statistics(select(cap, "content").mlp_out)["mean"])
    assert np.all(before > 3 / n)  # the field is mostly common: far from 1/n
    assert max(massive(cap.mlp_out, cap.special)["massive_share"]) < 0.05
    for f in cap.mlp_out:
        f[:, 3] *= 1000.0
    every = np.array(share_statistics(cap.mlp_out)["mean"])
    content = np.array(share_statistics(select(cap, "content").mlp_out)["mean"])
    np.testing.assert_allclose(every, 1 / n, atol=0.01)
    np.testing.assert_allclose(content, before, rtol=1e-12)
    got = massive(cap.mlp_out, cap.special)
    assert min(got["massive_share"]) > 0.99 and got["massive_count"] == [1.0, 1.0]
    assert got["massive_special_fraction"] == [1.0, 1.0]


def test_real_content_rule_leaves_out_special_and_first_decoder_token():
    """The BERT stand-in's start token (a special id) and a causal model's first token are left out; ``all``
    keeps every token."""
    for kind in ("bert", "gpt2"):
        tok = WordTokenizer()
        tok.all_special_ids = [0, 1] if kind == "bert" else []  # type: ignore[attr-defined]
        cap = load.capture(tok, tiny(kind), SENTENCES, batch=2)
        assert all(bool(s[0]) and not s[1:].any() for s in cap.special), kind
        content = select(cap, "content")
        assert [h.shape[-2] for h in content.hidden] == [h.shape[-2] - 1 for h in cap.hidden]
        torch.testing.assert_close(content.mlp_out[0], cap.mlp_out[0][:, 1:])
        assert select(cap, "all") is cap


def test_real_decoder_stream_before_final_norm_no_variance_jump():
    """Tiny random GPT-2: the captured last state is the stream before ``ln_f`` (``ln_f`` of it is the model's
    output), and the variance law's last step is the size of the others; the normed state would jump (the
    wrong model this fails: |h| 0.27 -> 8 through ln_f)."""
    model = tiny("gpt2")
    cap = load.capture(WordTokenizer(), model, SENTENCES, batch=3)
    enc = WordTokenizer()(SENTENCES, return_tensors="pt", padding=True)
    with torch.no_grad():
        final = model(**enc).last_hidden_state
    for b, h in enumerate(cap.hidden):
        torch.testing.assert_close(model.ln_f(h[-1]), final[b, : h.shape[-2]], atol=2e-5, rtol=1e-5)
    v = np.asarray(variance_law(cap.hidden)["variance"])
    assert v[-1] < 3 * v[:-1].max()
    with torch.no_grad():
        normed = [torch.cat([h[:-1], model.ln_f(h[-1])[None]]) for h in cap.hidden]
    assert np.asarray(variance_law(normed)["variance"])[-1] > 100 * v[:-1].max()


def test_real_fitted_model_is_causal_for_causal_models():
    """With the noise off, the fitted model's first token does not see a change of the last token when causal,
    and does when not (the wrong model: full softmax for a decoder)."""
    from sdeformer.real._fitted import simulate_fitted

    g = torch.Generator().manual_seed(1)
    e = torch.randn(6, 5, generator=g, dtype=torch.float64)
    other = e.clone()
    other[-1] = torch.randn(5, generator=g, dtype=torch.float64)
    fit = {"su": 0.5, "sw": 0.5, "share": 1.0}
    record = {"kernel": {"layers": [{"fit_partial": fit}] * 2}, "attention_beta": [2.0, 2.0], "attention_scale": [1, 1]}
    for causal in (True, False):
        a, b = (simulate_fitted([x], record, [0.0, 0.0], causal=causal)[0] for x in (e, other))
        assert torch.equal(a[:, 0], b[:, 0]) == causal
        assert not torch.allclose(a[:, -1], b[:, -1])


def _calibrated(kind: str, runs: int = 32, d: int = 8):
    """MLP inputs of the theory's model and, as MLP outputs, a draw of the theory's own field at those inputs
    (``theory``) or independent per-token noise (``independent``)."""
    from sdeformer.real._reference import cosines, field, table

    cap = simulate(runs=runs, tokens=16, dim=d, layers=2, beta=4.0, step=0.3, su=0.5, sw=0.3, share=1.0, seed=7)
    gen = torch.Generator().manual_seed(11)
    kernel = np.stack([table(d, 0.5, 0.3)] * 2)
    for k, y in enumerate(cap.mlp_in):
        f = field(cosines(y)[0], kernel, d, 1, gen)[0]
        cap.mlp_out[k] = f if kind == "theory" else torch.randn(f.shape, generator=gen, dtype=torch.float64)
    return cap


def test_real_reference_calibration_theory_field_comes_out_inside():
    """The theory's own field at the inputs, through the same pipeline (kernel fit, then the reference): the
    common share and the pair-cosine curve lie inside the theory's band in every block; independent per-token
    noise (the wrong model) has its share below even the narrowest member's band and is not inside."""
    from sdeformer.real._kernel import held_out, kernel_sums
    from sdeformer.real._reference import reference

    for kind in ("theory", "independent"):
        cap = _calibrated(kind)
        ref = reference(cap.mlp_in, cap.mlp_out, held_out(kernel_sums(cap.mlp_in, cap.mlp_out), 8), 8)
        lo, hi = np.asarray(ref["common_share_theory_lo"]), np.asarray(ref["common_share_theory_hi"])
        assert np.all(lo < ref["common_share_theory"]) and np.all(np.asarray(ref["common_share_theory"]) < hi)
        assert np.all(np.asarray(ref["common_share_narrowest"]) <= hi)  # no member predicts less than the narrowest
        if kind == "theory":
            assert ref["kernel_verdict"] == ["inside", "inside"] and ref["share_verdict"] == ["inside", "inside"]
        else:
            assert "inside" not in ref["kernel_verdict"] and ref["share_verdict"] == ["below", "below"]


def test_real_flags_boundary_clip_and_effect_size():
    """A fit on the corner sU = sW = 0 or with a zero-width interval gives None, not False; a clipped share gives
    None for 'below one'; 'tokens synchronize' needs the excess over the untrained control and a falling rank."""
    from sdeformer.real._flags import clipped, on_boundary, sign_below, synchronization

    assert on_boundary({"su": 0.0, "sw": 0.0}) and not on_boundary({"su": 0.0, "sw": 0.2})
    got = sign_below([[0.1, 0.1, -0.3, -0.2], [0.2, 0.1, -0.1, 0.3]], 0.0, [True, False, False, False])
    assert got == [None, None, True, None]
    assert sign_below([[0.5, 1.0], [0.9, 1.0]], 1.0, clipped([0.7, 1.0])) == [True, None]

    def part(slope, lo, hi, rank_last):
        row = {"mean": [30.0, rank_last], "low": [29.0, rank_last - 1], "high": [31.0, rank_last + 1]}
        flat = {"mean": [30.0, 30.0], "low": [29.0, 29.0], "high": [31.0, 31.0]}
        verdict = {"mean_cos_slope": slope, "mean_cos_slope_interval": [lo, hi]}
        return {"verdict": verdict, "statistics": {"effective_rank": row, "clusters": flat}}

    trained = part(0.04, 0.039, 0.041, 14.0)
    assert synchronization(trained, part(0.005, 0.004, 0.006, 30.0))["tokens_synchronize"] is True
    assert synchronization(trained, part(0.04, 0.035, 0.045, 30.0))["tokens_synchronize"] is None  # no effect
    assert synchronization(part(0.04, 0.039, 0.041, 30.0), part(0.0, -0.001, 0.001, 30.0))["tokens_synchronize"] is None
    assert synchronization(trained, None)["tokens_synchronize"] is None  # no control: undecided
    assert synchronization(part(-0.02, -0.03, -0.01, 30.0), None)["tokens_synchronize"] is False


def test_real_trimmed_mean_cos_removes_a_shared_large_coordinate():
    """Random tokens sharing one large coordinate: the mean cosine reads near 1, with it removed near 0, and the
    one coordinate is counted."""
    from sdeformer.real._flags import trimmed_mean_cos

    g = torch.Generator().manual_seed(0)
    hidden = [torch.randn(2, 12, 64, generator=g, dtype=torch.float64) for _ in range(16)]
    for h in hidden:
        h[:, :, 5] += 40.0
    got = trimmed_mean_cos(hidden)
    assert got["trimmed_coordinates"] == [1, 1] and max(abs(v) for v in got["mean_cos_trimmed"]) < 0.05


def test_real_fitted_dt_is_matched_to_the_angular_step():
    """dt_l uses the MLP output's part tangent to its input: a purely radial output gives dt = 0, a tangent one
    |f|^2 / (|y|^2 (d - 1) kappa(1)) (the wrong model: |f|^2 with its radial part, over d kappa(1))."""
    from sdeformer.core._kernel import kernel_theory
    from sdeformer.real._fitted import steps

    g = torch.Generator().manual_seed(3)
    d, fit = 6, {"su": 0.5, "sw": 0.5, "share": 1.0}
    record = {"dim": d, "kernel": {"layers": [{"fit_partial": fit}]}}
    y = [torch.randn(1, 5, d, generator=g, dtype=torch.float64) for _ in range(4)]
    radial = [2.0 * v for v in y]
    assert abs(steps(y, radial, record)[0][0]) < 1e-12
    tangent = []
    for v in y:
        t = torch.randn(v.shape, generator=g, dtype=torch.float64)
        tangent.append(t - v * (t * v).sum(-1, keepdim=True) / v.pow(2).sum(-1, keepdim=True))
    want = np.mean([(t.pow(2).sum(-1) / v.pow(2).sum(-1)).mean().item() for v, t in zip(y, tangent, strict=True)])
    kappa1 = kernel_theory("gelu", d, su=0.5, sw=0.5).kappa1
    assert abs(steps(y, tangent, record)[0][0] - want / ((d - 1) * kappa1)) < 1e-12


def test_real_ablations_switch_parts_and_bootstrap_draws_stay_in_domain():
    """Attention and noise both off leaves the embeddings' directions; attention only equals dt = 0; the
    parametric bootstrap returns the point values for zero-width intervals and stays in each parameter's domain."""
    from sdeformer.core._sphere import project
    from sdeformer.real._ablations import perturbed
    from sdeformer.real._fitted import simulate_fitted

    g = torch.Generator().manual_seed(2)
    e = [torch.randn(6, 5, generator=g, dtype=torch.float64)]
    fit = {"su": 0.5, "sw": 0.5, "share": 0.8}
    record = {"kernel": {"layers": [{"fit_partial": fit}] * 2}, "attention_beta": [2.0, 1.0], "attention_scale": [1, 1]}
    still = simulate_fitted(e, record, [0.1, 0.1], parts=(False, False))[0]
    torch.testing.assert_close(still, project(e[0]).expand(3, 6, 5))
    only = simulate_fitted(e, record, [0.1, 0.1], parts=(True, False))[0]
    torch.testing.assert_close(only, simulate_fitted(e, record, [0.0, 0.0])[0])
    rec = {
        **record,
        "attention_beta_interval": [[2.0, 1.0], [2.0, 1.0]],
        "attention_scale_interval": [[1, 1], [1, 1]],
        "kernel_fit_intervals": {"partial": {k: [[v, v], [v, v]] for k, v in fit.items()}},
    }
    part, dts = perturbed(rec, ([0.1, 0.2], [[0.1, 0.2], [0.1, 0.2]]), np.random.default_rng(0))
    assert (
        part["attention_beta"] == [2.0, 1.0] and dts == [0.1, 0.2] and part["kernel"]["layers"][1]["fit_partial"] == fit
    )
    wide = {**rec, "kernel_fit_intervals": {"partial": {k: [[0.0, 0.0], [5.0, 5.0]] for k in fit}}}
    for seed in range(20):
        part, _ = perturbed(wide, ([0.1, 0.2], [[0.0, 0.0], [1.0, 1.0]]), np.random.default_rng(seed))
        for row in part["kernel"]["layers"]:
            assert 0 <= row["fit_partial"]["share"] <= 1 and row["fit_partial"]["su"] >= 0


def test_real_wishart_draws_have_the_law_of_z_z_transpose():
    """Bartlett's Wishart draws (d >= n) and the direct ones (d < n) have E W = d I and Var W_ij = d (i != j),
    2 d (i = j), within 5 standard errors over 4000 draws (the wrong model: a chi2 with n - i degrees of freedom
    on the diagonal, mean n - i, far off)."""
    from sdeformer.real._reference import wishart

    for n, d in ((5, 12), (6, 3)):
        w = wishart(n, d, (4000,), np.random.default_rng(1)).numpy()
        mean, var = w.mean(0), w.var(0)
        want_var = d * (1 + np.eye(n))
        assert np.all(np.abs(mean - d * np.eye(n)) < 5 * np.sqrt(want_var / 4000))
        assert np.all(np.abs(var / want_var - 1) < 0.15)
