"""Energies in the log domain at any beta (BEYOND section 10), the level sum m_k^2 / N^2 of every saddle, the
plateau detector's scale-free defaults at beta = 2000, and unnormalized attention at the edge of its dtype."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from sdeformer import metastability as ms
from sdeformer.attention._variants import UnnormalizedAttention
from sdeformer.core._errors import ConfigError
from sdeformer.observables import interaction_energy, log_interaction_energy, normalized_energy


def circle(angles) -> torch.Tensor:
    a = torch.as_tensor(angles, dtype=torch.float64)
    return torch.stack([a.cos(), a.sin()], -1)  # (..., N, 2)


def direct_energy(x: torch.Tensor, beta: float) -> float:
    """The textbook formula, 1/(2 N^2) sum (e^beta - e^{beta <x_i, x_j>}), in float64 numpy."""
    g = (x @ x.T).numpy()
    return float((math.exp(beta) - np.exp(beta * g)).sum() / (2 * g.shape[0] ** 2))


@pytest.mark.parametrize("beta", [0.5, 4.0, 50.0, 300.0, 700.0])
def test_log_energy_is_the_log_of_the_direct_formula_where_finite(beta):
    x = circle(torch.rand(7, generator=torch.Generator().manual_seed(1), dtype=torch.float64) * 6)
    direct = direct_energy(x, beta)
    assert float(interaction_energy(x, beta)) == pytest.approx(direct, rel=1e-9)
    assert float(log_interaction_energy(x, beta)) == pytest.approx(math.log(direct), rel=1e-12)
    assert float(normalized_energy(x, beta)) == pytest.approx(1 - 2 * math.exp(-beta) * direct, rel=1e-9, abs=1e-15)


def test_energies_at_beta_above_700_are_not_refused():
    x = circle([[0.0, 0.3, 2.0], [1.0, 1.0, 1.0]])  # (2, 3, 2): a spread run and a collapsed one
    log_e = log_interaction_energy(x, 2000.0)
    assert math.isfinite(float(log_e[0])) and float(log_e[1]) == -math.inf
    e = interaction_energy(x, 2000.0)
    assert float(e[0]) == math.inf and float(e[1]) == 0.0  # e^2000-sized: beyond float64, said as inf
    assert float(interaction_energy(x[:, :2] * torch.tensor([1.0, 1.0]), 750.0)[1]) == 0.0
    # 1 - 2 e^-beta E, with the three pairs' cross terms e^{beta (cos - 1)} underflowing: 3 / 9
    assert normalized_energy(x, 2000.0).tolist() == pytest.approx([3 / 9, 1.0], abs=1e-15)
    # log E at 2000 agrees with the value scaled down from an exact float64 E at the same geometry and beta 700
    near = circle([0.0, 1e-3])
    expect = 2000 + math.log(-math.expm1(2000 * (math.cos(1e-3) - 1)) / 4)
    assert float(log_interaction_energy(near, 2000.0)) == pytest.approx(expect, rel=1e-13)


def test_cluster_energies_in_the_log_domain_never_overflow():
    centres = circle([0.0, 2.5])
    for beta in (4.0, 300.0):
        x = centres.repeat_interleave(torch.tensor([3, 2]), 0)
        assert ms.cluster_energy([3, 2], centres, beta) == pytest.approx(direct_energy(x, beta), rel=1e-12)
        assert ms.equal_clusters_energy(3, beta, log=True) == pytest.approx(
            math.log(direct_energy(circle(np.arange(3) * 2 * math.pi / 3), beta)), rel=1e-12
        )
    log_e = ms.cluster_energy([3, 2], centres, 2000.0, log=True)
    assert log_e == pytest.approx(2000 + math.log(2 * 3 * 2 / (2 * 25)), rel=1e-15)  # cross terms underflow
    assert ms.cluster_energy([3, 2], centres, 2000.0) == math.inf  # a number past float64, not OverflowError
    assert ms.equal_clusters_energy(4, 2000.0) == math.inf and ms.equal_clusters_energy(1, 2000.0) == 0.0
    assert ms.equal_clusters_energy(1, 2000.0, log=True) == -math.inf
    with pytest.raises(ConfigError, match="sizes"):
        ms.cluster_energy([3, 0], centres, 2000.0)


def partitions(n: int, largest: int | None = None):
    largest = n if largest is None else largest
    if n == 0:
        yield ()
    for m in range(min(n, largest), 0, -1):
        for rest in partitions(n - m, m):
            yield (m, *rest)


def test_saddle_levels_of_every_saddle_unequal_sizes_included():
    """The 7 saddles of N = 5 (partitions of 5): sum m_k^2 / 25 is the normalized energy at beta = 2000 of
    clusters at any distinct centres, and 1 - 2 e^-beta E at beta = 60 where E is finite."""
    levels = sorted({round(ms.saddle_level(p), 12) for p in partitions(5)})
    assert levels == [0.2, 0.28, 0.36, 0.44, 0.52, 0.68, 1.0]
    for sizes in partitions(5):
        angles = torch.tensor([0.0, 1.3, 2.9, 4.1, 5.2][: len(sizes)], dtype=torch.float64)
        x = circle(angles.repeat_interleave(torch.tensor(sizes), 0))  # (5, 2)
        assert float(normalized_energy(x, 2000.0)) == pytest.approx(ms.saddle_level(sizes), abs=1e-15)
        e = direct_energy(x, 60.0)
        assert 1 - 2 * math.exp(-60.0) * e == pytest.approx(ms.saddle_level(sizes), abs=1e-9)
    with pytest.raises(ConfigError, match="sizes"):
        ms.saddle_level([2, 0])


def test_default_detector_finds_every_plateau_at_beta_2000():
    """A staircase of normalized energies through the N = 5 saddles (2,1,1,1), (3,1,1), (3,2), (5) at
    beta = 2000, smooth in log t: the whole run spans 0.009 in tau = log(t) / beta (the old fixed minimum: 0.05)."""
    beta, t = 2000.0, np.geomspace(0.1, 1e7, 600)
    levels, switches = [0.28, 0.44, 0.52, 1.0], [10.0, 1e3, 1e5]
    e = np.full_like(t, levels[-1])
    for a, b, s in zip(levels, levels[1:], switches):
        e += (a - b) / 2 * (1 - np.tanh(6 * (np.log(t) - math.log(s))))
    found = ms.plateaus(t, e, beta)
    assert [round(p.level, 3) for p in found] == levels
    ends = [[(p.start, p.end, p.level) for p in ms.plateaus(t, np.log(2 - e), beta, scale=s)] for s in ms.SCALES[:2]]
    assert len(ends[0]) == 4  # any energy scale; the time scales differ by a factor only
    np.testing.assert_allclose(ends[0], ends[1], rtol=1e-12)
    assert [round(p.level, 3) for p in ms.plateaus(t, 7 * e - 3, 4.0)] == [round(7 * v - 3, 3) for v in levels]
    with pytest.raises(ConfigError, match="energy"):
        ms.plateaus(t, np.where(t > 1, np.inf, e), beta)


@pytest.mark.parametrize(("dtype", "ok", "too_big"), [(torch.float32, 80.0, 95.0), (torch.float64, 700.0, 715.0)])
def test_unnormalized_attention_finite_or_refused(dtype, ok, too_big):
    x = circle(torch.linspace(0, 1, 6, dtype=torch.float64)).to(dtype)  # (6, 2)
    out = UnnormalizedAttention(ok).drift(x)
    assert torch.isfinite(out).all()
    g = (x.double() @ x.double().T) * ok
    direct = (torch.exp(g - g.max()) @ x.double()) / 6  # e^-max scaled, compared in the same scale
    torch.testing.assert_close(out.double() * math.exp(-float(g.max())), direct, rtol=1e-5, atol=0)
    with pytest.raises(ConfigError, match="beta"):
        UnnormalizedAttention(too_big).drift(x)
    for beta, causal in itertools.product((0.5, 3.0), (False, True)):
        a = UnnormalizedAttention(beta, causal=causal)
        g = torch.exp(beta * x.double() @ x.double().T)
        if causal:
            g = g.tril()
        torch.testing.assert_close(a.drift(x).double(), g @ x.double() / 6, rtol=1e-5, atol=1e-6)


def test_per_run_matrices_equal_one_run_per_element():
    """SoftmaxAttention and L2 / unnormalized attention with (B, d, d) matrices: run b uses matrix b."""
    from sdeformer.attention._softmax import SoftmaxAttention
    from sdeformer.attention._variants import L2Attention

    g = torch.Generator().manual_seed(3)
    x = torch.nn.functional.normalize(torch.randn(4, 6, 3, generator=g, dtype=torch.float64), dim=-1)
    q, k, v = (torch.randn(4, 3, 3, generator=g, dtype=torch.float64) for _ in range(3))
    for make in (
        lambda a, b, c: SoftmaxAttention(Q=a, K=b, V=c),
        lambda a, b, c: SoftmaxAttention(Q=a, K=b, V=c, value_convention="xV"),
        lambda a, b, c: L2Attention(Q=a, K=b, V=c),
        lambda a, b, c: UnnormalizedAttention(V=c),
    ):
        batched = make(q, k, v).drift(x)
        alone = torch.stack([make(q[b], k[b], v[b]).drift(x[b]) for b in range(4)])
        torch.testing.assert_close(batched, alone, rtol=1e-12, atol=1e-14)
        assert not torch.allclose(batched[0], make(q[1], k[1], v[1]).drift(x[0]))  # each run its own matrices
    with pytest.raises(ConfigError, match="Q"):
        SoftmaxAttention(Q=torch.ones(2, 3, 4))
