"""CommonNoise, InteractionEnergy and the hooks (sdeformer.nn; THEORY sections 1, 5, 7)."""

import math
from typing import Any

import pytest
import torch
from torch import nn

import sdeformer as sdf
from sdeformer.core._errors import ConfigError
from sdeformer.nn import CommonNoise, InteractionEnergy, attach, transformer_layers
from sdeformer.observables import mean_cosine

VAR_RTOL = 0.05  # relative tolerance of a (co)variance estimated from >= 2e4 independent fields
FD_TOL = 1e-6  # finite-difference gradient check, float64


def test_noise_shared_by_identical_tokens_and_fresh_per_sequence():
    layer = CommonNoise(dt=0.25, activation="gelu", width=64, su=0.1, sw=0.1, seed=3)
    x = sdf.uniform_sphere(5, 16, batch=(2,), seed=0, dtype=torch.float64)  # (2, 5, 16)
    x = torch.cat([x, x[:, :1]], dim=1)  # token 5 duplicates token 0 in each sequence
    z = layer.noise(x)
    assert torch.allclose(z[:, 0], z[:, 5], rtol=0, atol=1e-14)  # one field for all tokens of a sequence
    y = x.clone()
    y[1] = y[0]  # two identical sequences in one batch still get independent fields
    zy = layer.noise(y)
    assert not torch.allclose(zy[0], zy[1])


def test_noise_scales_with_norm_and_dt():
    a = CommonNoise(dt=0.25, scale=2.0, width=32, su=0.1, sw=0.1, seed=1)
    b = CommonNoise(dt=1.0, scale=1.0, width=32, su=0.1, sw=0.1, seed=1)
    x = sdf.uniform_sphere(4, 8, seed=0, dtype=torch.float64)  # (4, 8)
    # 2 sqrt(0.25) = 1 sqrt(1): the same field gives the same vector; tripling |x| triples it
    assert torch.allclose(a.noise(3 * x), 3 * b.noise(x), atol=1e-12)


def test_noise_independent_across_layers_and_passes():
    hooks_model = nn.Module()
    hooks_model.blocks = nn.ModuleList([nn.Identity(), nn.Identity()])
    h = attach(hooks_model, noise={"dt": 1.0, "width": 32, "su": 0.1, "sw": 0.1}, seed=0)
    x = sdf.uniform_sphere(6, 8, seed=0, dtype=torch.float64)
    z0, z1 = h.noise[0].noise(x), h.noise[1].noise(x)
    z0b = h.noise[0].noise(x)
    assert not torch.allclose(z0, z1) and not torch.allclose(z0, z0b)
    # independence in law: the correlation between the two layers' draws (and two passes) is ~0
    many = sdf.uniform_sphere(1, 8, batch=(20000,), seed=1, dtype=torch.float64)  # (20000, 1, 8)
    a, b, c = h.noise[0].noise(many), h.noise[1].noise(many), h.noise[0].noise(many)
    for u, v in ((a, b), (a, c)):
        corr = torch.corrcoef(torch.stack([u.flatten(), v.flatten()]))[0, 1]
        assert abs(float(corr)) < 5 / math.sqrt(u.numel())


@pytest.mark.parametrize("act,bias", [("gelu", 0.1), ("relu", 0.0), ("tanh", 0.2)])
def test_noise_variance_is_dt_kappa1(act, bias):
    dt, d = 0.3, 16
    layer = CommonNoise(dt=dt, activation=act, width=64, su=bias, sw=bias, seed=7)
    x = sdf.uniform_sphere(4, d, batch=(3000,), seed=2, dtype=torch.float64)  # (3000, 4, 16)
    var = float(layer.noise(x).pow(2).mean())  # mean zero: E[G] = 0 since W, bW are centred
    expected = dt * sdf.kernel_theory(act, d, bias_std=bias).kappa1
    assert var == pytest.approx(expected, rel=VAR_RTOL)


def test_noise_covariance_across_tokens_is_kappa():
    """E[G(x) G(y)^T] = kappa(<x, y>) I (THEORY section 1): the cross-token covariance matches kappa."""
    d = 8
    layer = CommonNoise(dt=1.0, activation="relu", width=32, su=0.1, sw=0.1, seed=5)
    x = sdf.uniform_sphere(2, d, seed=4, dtype=torch.float64).expand(20000, 2, d)
    z = layer.noise(x)  # (20000, 2, d)
    cov = float((z[:, 0] * z[:, 1]).mean())
    t = float(x[0, 0] @ x[0, 1])
    assert cov == pytest.approx(float(sdf.kernel_theory("relu", d, bias_std=0.1).kappa(t)), rel=VAR_RTOL)


def test_noise_off_in_eval_and_at_zero_scale():
    x = torch.randn(2, 5, 8)
    layer = CommonNoise(width=16, seed=0)
    assert not torch.equal(layer(x), x)
    layer.eval()
    assert torch.equal(layer(x), x)
    assert torch.equal(CommonNoise(scale=0.0, width=16, seed=0)(x), x)


def test_noise_reseed_replays_and_bad_input():
    x = torch.randn(3, 8, dtype=torch.float64)
    layer = CommonNoise(width=16, seed=11)
    first = layer.noise(x)
    layer.reseed(11)
    assert torch.equal(layer.noise(x), first)
    bad: tuple[dict[str, Any], ...] = ({"dt": 0.0}, {"scale": -1.0}, {"width": 0}, {"su": -0.1}, {"dt": float("nan")})
    for kw in bad:
        with pytest.raises(ConfigError):
            CommonNoise(**kw)
    with pytest.raises(ConfigError):
        layer.noise(torch.randn(8))


def test_energy_matches_diagnostics_and_is_zero_when_synchronized():
    x = torch.randn(3, 6, 5, dtype=torch.float64)
    term = InteractionEnergy(beta=2.0, weight=-0.5)
    expected = -0.5 * sdf.interaction_energy(x, 2.0).mean()
    assert torch.allclose(term(x), expected)
    same = torch.randn(1, 5, dtype=torch.float64).expand(6, 5) * torch.arange(1, 7, dtype=torch.float64)[:, None]
    assert float(InteractionEnergy()(same)) == pytest.approx(0.0, abs=1e-12)  # positive multiples coincide


def test_energy_gradient_matches_finite_differences():
    term = InteractionEnergy(beta=1.5, weight=0.7)
    x = torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: term([t, 2 * t + 1]), (x,), eps=1e-6, atol=FD_TOL)


def test_energy_sign_moves_tokens_together_or_apart():
    x0 = torch.randn(8, 6, dtype=torch.float64)
    for weight, direction in ((1.0, -1), (-1.0, 1)):
        x = x0.clone().requires_grad_(True)
        opt = torch.optim.SGD([x], lr=0.1)
        for _ in range(20):
            opt.zero_grad()
            InteractionEnergy(weight=weight)(x).backward()
            opt.step()
        change = float(mean_cosine(x.detach()) - mean_cosine(x0))
        assert direction * change < 0  # penalising E raises the mean cosine; rewarding it lowers it


def test_energy_record_and_bad_input():
    term = InteractionEnergy()
    assert float(term.loss()) == 0.0
    term.record(torch.randn(4, 3))
    assert float(term.loss()) > 0 and term.loss().item() == 0.0  # cleared after use
    with pytest.raises(ConfigError):
        InteractionEnergy(beta=0.0)
    with pytest.raises(ConfigError):
        InteractionEnergy(weight=float("inf"))


class _Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_hooks_on_plain_module_train_mode_only_and_remove():
    model = _Tiny()
    x = torch.randn(2, 5, 4)
    clean = model(x)
    energy = InteractionEnergy()
    h = attach(model, noise={"width": 8}, energy=energy, layers=[0, -1], seed=1)
    assert h.layers == [0, 2] and len(h.noise) == 2
    assert not torch.allclose(model(x), clean)
    assert len(energy._recorded) == 2
    energy.loss()
    model.eval()
    assert torch.allclose(model(x), clean)  # mode 'train': no noise in eval
    model.train()
    with h.disabled():
        assert torch.allclose(model(x), clean)
    h.remove()
    assert torch.allclose(model(x), clean)
    with pytest.raises(ConfigError):
        attach(model, layers=[3])
    with pytest.raises(ConfigError):
        attach(model, mode="sometimes")
    with pytest.raises(ConfigError):
        transformer_layers(nn.Linear(2, 2))


def test_hooks_change_hf_model_output_only_when_enabled():
    transformers = pytest.importorskip("transformers")
    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=16,
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config).eval()
    ids = torch.randint(0, 50, (1, 7), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        clean = model(ids).last_hidden_state
        h = attach(model, noise={"width": 16, "su": 0.1, "sw": 0.1}, mode="always", record=True, seed=0)
        noisy = model(ids).last_hidden_state
        assert not torch.allclose(noisy, clean) and len(h.states) == 2
        with h.disabled():
            assert torch.allclose(model(ids).last_hidden_state, clean)
        h.remove()
        assert torch.allclose(model(ids).last_hidden_state, clean)
        h = attach(model, noise={"width": 16}, mode="train")  # eval model, train-only noise: no change
        assert torch.allclose(model(ids).last_hidden_state, clean)
        h.remove()
