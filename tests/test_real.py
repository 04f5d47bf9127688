"""The real-model measurement (docs/real.md): the sublayer decomposition on tiny random GPT-2 and BERT models built
here (no download), the kernel estimator against a known kernel, the common share, the attention fit and the
command's bad inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

transformers = pytest.importorskip("transformers")

from typer.testing import CliRunner  # noqa: E402

from sdeformer.cli import app  # noqa: E402
from sdeformer.core._errors import ConfigError  # noqa: E402
from sdeformer.real import _load as load  # noqa: E402
from sdeformer.real._attention import fit_attention  # noqa: E402
from sdeformer.real._kernel import kernel_sums, theory_curve  # noqa: E402
from sdeformer.real._measure import measure  # noqa: E402
from sdeformer.real._stats import common_share  # noqa: E402
from sdeformer.real._synthetic import simulate  # noqa: E402

VOCAB = 100
SENTENCES = ["the cat sat on the mat today", "a dog ran far away from home and back again", "one two three four"]


class WordTokenizer:
    """A tokenizer stand-in: one id per word (its length and letters), a start token 1, padding 0."""

    pad_token = "[PAD]"

    def __init__(self, model_max_length: int = 64):
        self.model_max_length = model_max_length

    def _ids(self, text: str) -> list[int]:
        return [1] + [2 + (sum(map(ord, w)) % (VOCAB - 2)) for w in text.split()]

    def __call__(self, texts, return_tensors=None, padding=False, truncation=False, max_length=None):
        if isinstance(texts, str):
            return {"input_ids": self._ids(texts)}
        rows = [self._ids(t)[: max_length or None] for t in texts]
        n = max(map(len, rows))
        ids = torch.tensor([r + [0] * (n - len(r)) for r in rows])
        mask = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in rows])
        return {"input_ids": ids, "attention_mask": mask}


def tiny(kind: str) -> Any:
    torch.manual_seed(0)
    if kind == "gpt2":
        cfg = transformers.GPT2Config(n_embd=32, n_layer=3, n_head=2, n_positions=64, vocab_size=VOCAB)
        cfg.bos_token_id = cfg.eos_token_id = 1
        return transformers.GPT2Model(cfg).eval()
    cfg = transformers.BertConfig(
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=64,
        vocab_size=VOCAB,
        max_position_embeddings=64,
    )
    return transformers.BertModel(cfg).eval()


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_real_decomposition_recomposes_hidden_states(kind):
    model = tiny(kind)
    lay = load.layout(model)
    cap = load.capture(WordTokenizer(), model, SENTENCES, batch=2)
    assert len(cap.hidden) == len(SENTENCES) and lay.post_ln == (kind == "bert")
    for h, a, y, f in zip(cap.hidden, cap.attn, cap.mlp_in, cap.mlp_out, strict=True):
        for layer in range(a.shape[0]):
            rebuilt = load.recompose(lay, layer, h[layer], a[layer], f[layer])
            torch.testing.assert_close(rebuilt, h[layer + 1], atol=2e-5, rtol=1e-5)
            assert f[layer].abs().max() > 1e-3 and a[layer].abs().max() > 1e-3  # real sublayer outputs
        if kind == "bert":  # the MLP's input is the stream after the attention's LayerNorm
            torch.testing.assert_close(lay.norms[0][0](h[0] + a[0]), y[0], atol=2e-5, rtol=1e-5)


def test_real_model_without_known_sublayers_is_named():
    model = torch.nn.Linear(3, 3)
    model.config = transformers.PretrainedConfig()  # type: ignore[attr-defined]
    model.config.model_type = "mystery"
    with pytest.raises(ConfigError, match="mystery.*supported layouts"):
        load.layout(model)


def test_real_truncation_is_counted_and_nan_refused():
    model = tiny("bert")
    cap = load.capture(WordTokenizer(model_max_length=4), model, SENTENCES)
    assert cap.truncated == 3 and all(h.shape[-2] == 4 for h in cap.hidden)
    with torch.no_grad():
        model.encoder.layer[1].output.dense.weight.fill_(float("nan"))
    with pytest.raises(ConfigError, match="non-finite"):
        load.capture(WordTokenizer(), model, SENTENCES)


def test_real_kernel_estimator_matches_known_kernel():
    """The project's random-MLP field (share 1, no attention) has C(c) = kappa(c)/kappa(1): within its interval."""
    d, su, sw = 6, 0.5, 0.3
    cap = simulate(runs=64, tokens=16, dim=d, layers=2, beta=1.0, step=0.0001, su=su, sw=sw, share=1.0, width=256)
    sums = kernel_sums(cap.mlp_in, cap.mlp_out, bins=10)
    c, mid, count = sums.curve()
    rng = np.random.default_rng(0)
    draws = np.stack([sums.curve(rng.integers(0, 64, 64))[0] for _ in range(200)])
    lo, hi = np.nanquantile(draws, [0.005, 0.995], axis=0)
    truth = theory_curve(mid, d, su, sw)
    ok = count > 200
    inside = (truth >= lo) & (truth <= hi)
    assert ok.sum() >= 10 and inside[ok].mean() >= 0.85
    wrong = theory_curve(mid, d, su, 1.5)  # a kernel with a much larger output bias sits outside
    assert ((wrong >= lo) & (wrong <= hi))[ok].mean() < 0.5


def test_real_kernel_r2_intervals_separate_theory_from_independent():
    """On the project's random-MLP field (share 1) the held-out R^2 of kappa(c)/kappa(1) is near 1, its interval
    reaches near 1 and lies far above that of independent noise (C = 0). (Refitting and rescoring resampled halves
    biases R^2 low, so the interval need not hold the point estimate.)"""
    from sdeformer.real._kernel import held_out
    from sdeformer.real._kernel_ci import r2_intervals

    cap = simulate(runs=64, tokens=16, dim=6, layers=2, beta=1.0, step=0.0001, su=0.5, sw=0.3, share=1.0, width=256)
    sums = kernel_sums(cap.mlp_in, cap.mlp_out, bins=10)
    got = r2_intervals(sums, 6, draws=100)
    point = np.array([row["r2_theory"] for row in held_out(sums, 6)["layers"]])
    (t_lo, t_hi), (_, i_hi) = np.asarray(got["theory"]), np.asarray(got["independent"])
    assert np.all(t_lo <= point) and np.all(point > 0.8)
    assert np.all(t_hi > 0.9) and np.all(t_hi <= 1.0) and np.all(t_lo > i_hi + 10)


@pytest.mark.parametrize("su, sw, share, negative", [(0.5, 1.0, 1.0, True), (0.1, 0.0, 0.5, False)])
def test_real_kernel_fit_intervals_decide_lambda_bar_sign_and_share(su, sw, share, negative):
    """The refits' lambda_bar interval lies on the planted kernel's side of 0 (THEORY section 2: the sign is the
    theory's verdict), and partial noise's share interval reaches 1 when the field is common to all tokens and lies
    below 1 when it is not (BEYOND section 1: rho < 1 keeps tokens apart)."""
    from sdeformer.core._kernel import kernel_theory
    from sdeformer.real._kernel_ci import r2_intervals

    d = 6
    assert (kernel_theory("gelu", d, su=su, sw=sw).lambda_bar < 0) == negative
    cap = simulate(runs=64, tokens=16, dim=d, layers=2, beta=1.0, step=0.0001, su=su, sw=sw, share=share, width=256)
    got = r2_intervals(kernel_sums(cap.mlp_in, cap.mlp_out, bins=10), d, draws=100)
    fit = got["theory_fit" if share == 1 else "partial_fit"]
    lo, hi = np.asarray(fit["lambda_bar"] if share == 1 else fit["lambda_bar_scaled"])
    assert np.all(hi < 0) if negative else np.all(lo > 0), (lo, hi)
    s_lo, s_hi = np.asarray(got["partial_fit"]["share"])
    assert np.all(s_hi >= 1 - 1e-12) if share == 1 else np.all(s_hi < 0.9), (s_lo, s_hi)  # the verdict rho < 1


def test_real_kernel_table_lambda_bar_matches_kernel_theory():
    """The tabulated lambda_bar at sW = 0 minus (d - 3) sW^2 is KernelTheory's lambda_bar at (sU, sW)."""
    from sdeformer.core._kernel import kernel_theory
    from sdeformer.real._kernel_ci import SU_TABLE, _table

    d = 12
    _, k1, lam = _table(d, "gelu")
    for k in (0, 10, 30):
        th = kernel_theory("gelu", d, su=float(SU_TABLE[k]), sw=0.7)
        assert abs(lam[k] - (d - 3) * 0.49 - th.lambda_bar) < 1e-9 * max(1.0, abs(th.lambda_bar))
        assert abs(k1[k] + 0.49 - th.kappa1) < 1e-6 * th.kappa1


def test_real_attention_sums_match_the_tangent_vectors():
    """The n x n form of the attention sums equals sum <t, p>, |p|^2, |t|^2 computed from the d-dimensional
    vectors p_i = m_i - x_i <x_i, m_i>, m = softmax(logits) x, causal or not, padding included."""
    from sdeformer.real._attention import batch_sums, prepared

    g = torch.Generator().manual_seed(2)
    hidden = [torch.randn(3, n, 5, generator=g, dtype=torch.float64) for n in (4, 7, 6)]
    attn = [torch.randn(2, h.shape[1], 5, generator=g, dtype=torch.float64) for h in hidden]
    ((rows, batch),) = prepared(hidden, attn, chunk=8)
    logits = torch.randn(batch[1].shape, generator=g, dtype=torch.float64)
    for causal in (False, True):
        got = batch_sums(logits, batch, causal)
        for b, i in enumerate(rows):
            n = attn[i].shape[1]
            x = hidden[i][:2] / torch.linalg.vector_norm(hidden[i][:2], dim=-1, keepdim=True)
            a = attn[i] / torch.linalg.vector_norm(hidden[i][:2], dim=-1, keepdim=True)
            t = a - x * (x * a).sum(-1, keepdim=True)
            lg = logits[b, :, :n, :n]
            lg = lg.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf")) if causal else lg
            m = torch.softmax(lg, -1) @ x
            p = m - x * (x * m).sum(-1, keepdim=True)
            want = torch.stack([(t * p).sum((-1, -2)), (p * p).sum((-1, -2)), (t * t).sum((-1, -2))])
            torch.testing.assert_close(got[b], want, rtol=1e-10, atol=1e-12)


def test_real_fitted_distance_is_paired_and_parts_where_it_should():
    """The fitted model's distance per layer: the mean of fitted - real over the same sentences with its interval;
    an unchanged layer stays together (0 inside), a shifted one parts."""
    from sdeformer.real._fitted import compare

    rng = np.random.default_rng(0)
    real = rng.normal(size=(64, 4)) * np.array([1.0, 5.0, 5.0, 5.0])  # a large spread over sentences
    fitted = real + rng.normal(scale=0.01, size=real.shape) + np.array([0.0, 0.0, 0.5, 0.0])
    got = compare({"mean_cos": real}, {"mean_cos": fitted})["mean_cos"]
    lo, hi = np.asarray(got["difference_interval"])
    assert got["parts_at"] == 2 and got["largest_at"] == 2
    assert lo[2] > 0.45 and hi[2] < 0.55 and lo[1] < 0 < hi[1] and lo[3] < 0 < hi[3]


def test_real_common_share_limits():
    g = torch.Generator().manual_seed(0)
    same = torch.randn(1, 1, 8, generator=g).expand(3, 50, 8)
    assert torch.allclose(common_share(same), torch.ones(3, dtype=torch.float64))
    independent = torch.randn(200, 50, 8, generator=g)
    assert abs(float(common_share(independent).mean()) - 1 / 50) < 0.005


def test_real_attention_fit_recovers_beta():
    cap = simulate(runs=8, tokens=16, dim=8, layers=2, beta=3.0, step=0.1, share=0.5)
    fit = fit_attention(cap.hidden, cap.attn)
    assert np.allclose(fit["beta"], 3.0, rtol=0.02) and np.allclose(fit["scale"], 0.1, rtol=0.02)
    assert min(fit["explained"]) > 0.999


def test_real_attention_intervals_cover_planted_beta_under_noise():
    """With per-token noise added to the attention's output, the bootstrap intervals over sentences of beta_l and
    of the explained fraction are not degenerate, cover the planted beta, and lie below 1."""
    cap = simulate(runs=64, tokens=16, dim=8, layers=2, beta=3.0, step=0.1, share=0.5, seed=1)
    g = torch.Generator().manual_seed(0)
    noisy = [a + 0.02 * torch.randn(a.shape, generator=g, dtype=a.dtype) for a in cap.attn]
    fit = fit_attention(cap.hidden, noisy, resamples=200)
    (b_lo, b_hi), (e_lo, e_hi) = np.asarray(fit["beta_interval"]), np.asarray(fit["explained_interval"])
    assert np.all(b_lo <= 3.0) and np.all(b_hi >= 3.0) and np.all(b_hi - b_lo > 0.01)
    assert np.all(e_lo <= fit["explained"]) and np.all(fit["explained"] <= e_hi) and np.all(e_hi < 0.99)


def _planted_attention(a_matrix: torch.Tensor, runs: int = 48, tokens: int = 12, dim: int = 6):
    """Sentences of uniform tokens whose 'attention output' is softmax(<x_i, A x_j>) x with a known A (one block)."""
    from sdeformer.core._sphere import project

    g = torch.Generator().manual_seed(3)
    hidden, attn = [], []
    for _ in range(runs):
        x = project(torch.randn(tokens, dim, generator=g, dtype=torch.float64))
        m = torch.softmax(x @ a_matrix.T.double() @ x.T, dim=-1) @ x
        hidden.append(torch.stack([x, x]))
        attn.append((0.1 * m + 0.002 * torch.randn(tokens, dim, generator=g, dtype=torch.float64))[None])
    return hidden, attn


def test_real_full_qk_fit_beats_beta_identity_only_when_it_should():
    """Held out: a planted non-identity Q^T K is explained far better by the full d x d fit than by beta I; a planted
    beta I is explained as well by both. The fit stops on its validation sentences: the chosen step is the best
    validation step, and it stopped after ``PATIENCE`` steps without a gain above ``TOLERANCE`` (or at
    ``MAX_STEPS``)."""
    from sdeformer.real._attention_full import MAX_STEPS, PATIENCE, TOLERANCE, fit_full

    g = torch.Generator().manual_seed(5)
    skew = 3.0 * torch.randn(6, 6, generator=g) / 6**0.5
    for planted, full_wins in ((2.0 * torch.eye(6), False), (skew, True)):
        hidden, attn = _planted_attention(planted, runs=72)
        beta = fit_attention(hidden, attn, resamples=0)["beta"]
        got = fit_full(hidden, attn, beta, sentences=72)
        full, base = got["explained"][0], got["beta_explained"][0]
        assert full > 0.95 and got["explained_interval"][0][0] <= full <= got["explained_interval"][1][0]
        assert (full - base > 0.2) if full_wins else (abs(full - base) < 0.02), (planted, full, base)
        trace = np.asarray(got["trace_validation"])[:, 0]
        assert len(trace) == got["steps"] + 1 and got["sentences"] == [24, 24, 24]
        assert got["best_step"][0] == int(trace.argmax()) and got["explained_validation"][0] == trace.max()
        gain = trace[-PATIENCE:].max() - trace[:-PATIENCE].max()  # one block: the last PATIENCE steps' gain
        assert got["steps"] == MAX_STEPS or gain <= TOLERANCE


runner = CliRunner()


@pytest.mark.parametrize(
    "args, words",
    [
        (["--model", "NOT_A_FOLDER"], "not a model folder"),
        (["--sentences", "1"], "sentences"),
        (["--threads", "0"], "threads"),
        (["--text", "EMPTY"], "holds no sentence"),
    ],
)
def test_real_cli_bad_input_one_line(tmp_path, args, words):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    args = [str(tmp_path / "nope") if a == "NOT_A_FOLDER" else str(empty) if a == "EMPTY" else a for a in args]
    out = tmp_path / "out"
    result = runner.invoke(app, ["real", *args, "--json", "--out", str(out)])
    assert result.exit_code == 2
    assert words in result.output and "Traceback" not in result.output
    assert not (out / "real.json").exists()


def test_real_separated_lists_layers_with_disjoint_intervals():
    """A control is told apart where its interval and the trained model's do not overlap (touching is not apart)."""
    from sdeformer.real._measure import SEPARATED, separated

    def part(lows, highs, law):
        row = {"low": lows, "high": highs}
        return {
            "statistics": {"mean_cos": row},
            **{f"{name}_interval": [lows, highs] for name in SEPARATED},
            "variance_law": {"lambda_interval": law},
        }

    trained = part([0.0, 1.0, 2.0], [0.5, 1.5, 2.5], [0.1, 0.2])
    control = part([0.6, 1.5, 1.0], [0.9, 2.0, 2.2], [0.2, 0.3])
    got = separated(trained, control)
    assert got["mean_cos"] == [0] and got["common_share"] == [0] and got["variance_lambda"] == []
    assert separated(trained, part([0.0, 1.6, 3.0], [0.1, 1.7, 4.0], [0.3, 0.4]))["mean_cos"] == [1, 2]


def test_real_two_sentences_hold_none_out_and_say_so(tmp_path):
    """The smallest corpus (2 sentences): the full Q^T K fit has no held-out sentence, so its held-out fractions are
    None (not 0), and the report section still renders."""
    from sdeformer.plots import models_figure, real_figures
    from sdeformer.real._write import models_section, report_section

    text = tmp_path / "s.txt"
    text.write_text("\n".join(SENTENCES[:2]), encoding="utf-8")
    record = measure("tiny", text, 2, loaded=(WordTokenizer(), tiny("bert")))
    full = record["attention_full"]
    assert full["sentences"] == [1, 1, 0] and full["explained"] == [None] * record["layers"]
    (section,) = report_section(record, real_figures(record, tmp_path))
    assert any(row[0].startswith("attention_explained, full") and row[1] == "-" for row in section.tables[0].rows)
    (models,) = models_section([record, record], models_figure([record, record], tmp_path))  # one panel per model
    assert models.figures[0].path.is_file() and "n = 2" in models.figures[0].caption


def test_real_measure_record_names_and_lengths(tmp_path):
    """The whole record on a tiny causal (GPT-2) model: the names other tools rely on, their lengths."""
    kind = "gpt2"
    text = tmp_path / "s.txt"
    text.write_text("\n".join(SENTENCES * 3), encoding="utf-8")
    record = measure("tiny", text, 9, loaded=(WordTokenizer(), tiny(kind)), controls=("trained", "shuffled"))
    layers = record["layers"]
    assert len(record["mean_cos"]) == layers + 1
    for key in ("common_share", "attention_beta", "attention_explained", "kernel_r2_theory", "kernel_r2_independent"):
        assert len(record[key]) == layers and all(np.isfinite(record[key])), key
    assert min(record["common_share"]) > 0 and max(record["common_share"]) <= 1
    assert record["controls"]["shuffled"]["common_share"] != record["common_share"]
    assert set(record["fitted"]["statistics"]) == {"mean_cos", "energy", "effective_rank", "clusters"}
    assert record["verdict"]["mean_cos_slope_interval"][0] <= record["verdict"]["mean_cos_slope"]
    apart = record["controls"]["shuffled"]["separated"]
    assert apart["mean_cos"] == [] or apart["mean_cos"][0] >= 1  # layer 0 (embeddings) is shared by both
    from sdeformer.real._write import INTERVALS, summary

    out = summary(record)
    for key in (*INTERVALS, "common_share", "mean_cos"):
        lo, hi = np.asarray(out[f"{key}_interval"], dtype=float)
        assert lo.shape == np.shape(out[key]) and np.all(lo <= hi + 1e-12), key
    full = out["attention_full"]
    assert len(full["explained"]) == layers and all(0 <= v <= 1 for v in full["explained"])
    assert out["token_rule"] == "content" and out["model_type"] == "gpt2" and out["layers"] == layers
    for key in ("common_share_theory", "common_share_theory_lo", "common_share_theory_hi", "massive_share"):
        assert len(out[key]) == layers and all(np.isfinite(out[key])), key
    assert all(v in ("inside", "partial", "outside", None) for v in out["kernel_verdict"])
    assert record["causal"] and record["fitted"]["causal"]
    ablations = record["fitted"]["ablations"]
    assert set(ablations) == {"attention_only", "noise_only", "both"}
    assert set(ablations["noise_only"]["parts_at"]) == set(record["fitted"]["statistics"])
    assert record["fitted"]["propagated"]["draws"] >= 20
