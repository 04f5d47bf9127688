"""The pieces of the density solver (docs/spde.md sections 1-4): harmonics, the truncated noise field, the
harmonic attention, the initial laws. Each check is shown to fail for a named wrong input."""

import math

import numpy as np
import pytest
import torch

from sdeformer.attention._softmax import SoftmaxAttention
from sdeformer.attention._variants import UnnormalizedAttention
from sdeformer.contracts import LimitField, Replayable, require
from sdeformer.core._errors import ConfigError
from sdeformer.core._kernel import kernel_theory
from sdeformer.core._rng import Streams
from sdeformer.core._sphere import uniform_sphere
from sdeformer.dynamics._sde import LimitSDE, make_solver
from sdeformer.observables import interaction_energy
from sdeformer.spde._attention import KernelAttention, exp_degree
from sdeformer.spde._diagnostics import cloud_coefficients, energy_beta
from sdeformer.spde._fields import mlp_noise
from sdeformer.spde._harmonics import harmonics
from sdeformer.spde._initial import sample_vmf, von_mises_fisher

DIMS = (2, 3)


@pytest.mark.parametrize("dim", DIMS)
def test_harmonics_orthonormal_on_their_grid_and_roundtrip(dim):
    """The quadrature integrates B_k conj(B_k') to the identity; a grid one degree too coarse does not."""
    basis = harmonics(dim, 6)
    for exact, ok in ((12, True), (5, False)):
        pts, w = basis.quadrature(exact)
        tab = basis.table(pts)
        gram = (tab.conj().mT * w) @ tab
        assert (torch.allclose(gram, torch.eye(basis.size, dtype=gram.dtype), atol=1e-12)) is ok
    c = von_mises_fisher(basis, 2.0)
    pts, w = basis.quadrature(14)
    back = basis.moments(pts, w * basis.synthesize(c, pts))
    assert torch.allclose(back, c, atol=1e-14)
    assert abs(float(basis.mass(c)) - 1.0) < 1e-14


def test_sphere_transform_matches_torch_harmonics():
    """Our Y_lm coefficients equal torch-harmonics' orthonormal RealSHT on its Gauss-Legendre grid (an
    independent implementation); a coefficient set with the Condon-Shortley phase dropped does not."""
    th = pytest.importorskip("torch_harmonics")
    degree, nlat, nlon = 6, 8, 16
    sht = th.RealSHT(nlat, nlon, lmax=degree + 1, mmax=degree + 1, grid="legendre-gauss", norm="ortho").double()
    basis = harmonics(3, degree)
    ct = torch.from_numpy(np.polynomial.legendre.leggauss(nlat)[0]).flip(0)  # colatitude from the north pole
    phi = torch.arange(nlon, dtype=torch.float64) * 2 * math.pi / nlon
    st = torch.sqrt(1 - ct**2)[:, None]
    pts = torch.stack([st * phi.cos(), st * phi.sin(), ct[:, None].expand(nlat, nlon)], -1).reshape(-1, 3)
    c = torch.randn(basis.size, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))
    c[basis.m == 0] = c[basis.m == 0].real.to(c.dtype)
    theirs = sht(basis.synthesize(c, pts).reshape(nlat, nlon))[basis.l, basis.m]
    assert torch.allclose(theirs, c, atol=1e-12)
    flipped = c * (-1.0) ** basis.m
    assert not torch.allclose(theirs, flipped, atol=1e-3)


@pytest.mark.parametrize("dim", DIMS)
def test_exp_multipliers_are_funk_hecke_of_the_exponential(dim):
    """The Bessel multipliers equal the quadrature Funk-Hecke eigenvalues of e^{beta t}; those of e^{2 beta t}
    (a wrong beta) do not."""
    basis = harmonics(dim, 8)
    beta = 3.0
    exact = basis.exp_multipliers(beta)
    assert torch.allclose(
        basis.funk_hecke(lambda t: torch.exp(beta * t), 8), exact, rtol=0, atol=1e-11 * float(exact[0])
    )
    assert not torch.allclose(basis.funk_hecke(lambda t: torch.exp(2 * beta * t), 8), exact, rtol=1e-2)


@pytest.mark.parametrize("dim", DIMS)
def test_noise_field_covariance_within_its_tail_bound(dim):
    """E[W(x) W(y)^T] of the truncated field (from its features) matches the kernel within the stated tail
    bound (circle: C(u) = cos u kappa(cos u) of the tangent noise; sphere: kappa I_3); the circle's field is wrong
    for kappa without the cos factor. Spectral coefficients are >= 0, and k_M + tail = kappa(1)."""
    field = mlp_noise(dim, "relu", su=0.5, sw=0.5, modes=12)
    require(field, LimitField)
    require(field, Replayable)
    assert float(field.eigen.min()) >= 0.0
    th = kernel_theory("relu", dim, su=0.5, sw=0.5)
    assert field.k + field.tail == pytest.approx(th.kappa1, rel=1e-12)
    assert 0 < field.tail < 1e-3 * th.kappa1
    x = uniform_sphere(40, dim, seed=2, dtype=torch.float64)
    feats = field.features(x)  # (N, R)
    cov = feats @ feats.T  # scalar covariance of each component
    cos = (x @ x.T).clamp(-1, 1)
    kappa = th.kappa(cos)
    target = cos * kappa if dim == 2 else kappa
    assert (cov - target).abs().max() <= field.tail + 1e-12
    if dim == 2:
        assert (cov - kappa).abs().max() > 0.1


def test_noise_scale_zero_is_no_noise_and_bad_inputs_raise():
    field = mlp_noise(2, "relu", modes=4, scale=0.0)
    y = uniform_sphere(5, 2, seed=0, dtype=torch.float64)
    z = torch.randn(field.normal_shape(y), dtype=torch.float64)
    assert field.apply(y, 0.1, z).abs().max() == 0.0 and field.k == 0.0
    for bad in (lambda: mlp_noise(4), lambda: mlp_noise(2, modes=0), lambda: mlp_noise(2, scale=-1.0)):
        with pytest.raises(ConfigError):
            bad()
    with pytest.raises(ConfigError):
        mlp_noise(2, activation="nope")


@pytest.mark.parametrize("dim", DIMS)
def test_particle_sde_runs_unchanged_on_the_field(dim):
    """LimitSDE + make_solver run a cloud on the field; with projected Euler-Maruyama the cloud stays on the
    sphere and the field's increments have variance k_M dt along the tangent plane."""
    field = mlp_noise(dim, "relu", su=0.5, sw=0.5, modes=6)
    traj = make_solver(LimitSDE(field), 20, 1.0).run(uniform_sphere(8, dim, seed=1, dtype=torch.float64), seed=3)
    assert torch.allclose(traj.final.norm(dim=-1), torch.ones(8, dtype=torch.float64), atol=1e-12)
    y = uniform_sphere(3, dim, seed=4, dtype=torch.float64)
    dw = field.increment(y, 0.01, Streams(5, (4000,)))  # (4000, 3, d)
    tangent_var = (dw**2).sum(-1).mean(0) - ((dw * y).sum(-1) ** 2).mean(0)
    assert torch.allclose(tangent_var / (0.01 * (dim - 1)), torch.full((3,), field.k, dtype=torch.float64), rtol=0.08)


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("beta", [1.0, 8.0])
def test_harmonic_attention_equals_the_exact_attention(dim, beta):
    """The harmonic series of e^{beta <x, y>} gives the O(N^2) softmax and USA drifts to round-off; the series
    cut at degree 2 does not."""
    x = uniform_sphere(60, dim, seed=7, dtype=torch.float64)
    for kind, exact in (("softmax", SoftmaxAttention(beta, 1.0)), ("usa", UnnormalizedAttention(beta, 1.0))):
        ref = exact.drift(x)
        got = KernelAttention(dim, beta, 1.0, kind).drift(x)
        assert (got - ref).abs().max() <= 1e-12 * ref.abs().max()
        cut = KernelAttention(dim, beta, 1.0, kind, degree=2).drift(x)
        assert (cut - ref).abs().max() > 1e-4 * ref.abs().max()
    assert exp_degree(dim, 20.0) > exp_degree(dim, 1.0)
    with pytest.raises(ConfigError):
        KernelAttention(dim, beta, kind="l2")


@pytest.mark.parametrize("dim", DIMS)
def test_energy_of_a_cloud_from_its_coefficients(dim):
    """E_beta from the coefficients (degree 30) equals the N-token formula of THEORY section 5."""
    x = uniform_sphere(30, dim, seed=8, dtype=torch.float64)
    basis = harmonics(dim, 30)
    got = energy_beta(basis, cloud_coefficients(basis, x), 2.0)
    assert float(got) == pytest.approx(float(interaction_energy(x, 2.0)), rel=1e-10)


@pytest.mark.parametrize("dim", DIMS)
def test_vmf_samples_have_the_density_coefficients(dim):
    """20000 samples match the von Mises-Fisher coefficients within 5 standard errors; those of twice the
    concentration do not. Batched draws equal unbatched ones."""
    basis = harmonics(dim, 4)
    n = 20000
    x = sample_vmf(dim, n, 1.5, Streams(1, ()))
    emp = cloud_coefficients(basis, x)
    se = 5 * math.sqrt(1.0 / (basis.area * n)) * 2
    assert (emp - von_mises_fisher(basis, 1.5)).abs().max() < se
    assert (emp - von_mises_fisher(basis, 3.0)).abs().max() > se
    both = sample_vmf(dim, 50, 1.5, Streams([11, 12], (2,)))
    assert torch.equal(both[1], sample_vmf(dim, 50, 1.5, Streams(12, ())))
