"""The density solver's invariants and its linear theory (docs/spde.md sections 5-8).
Every check is shown to fail for a named wrong model."""

import math

import pytest
import torch

from sdeformer.checks._spde.checks import measured_rates, moment_check, rates_pass
from sdeformer.core._rng import Streams
from sdeformer.spde._fields import CircleNoise, SpectralField, mlp_noise
from sdeformer.spde._initial import von_mises_fisher
from sdeformer.spde._solver import DensitySolver
from sdeformer.spde._theory import dominant_mode, linear_rates

DIMS = (2, 3)
SMALL = {2: 16, 3: 6}  # degrees small enough for fast tests


def solver(dim, *, steps=20, horizon=0.4, noise=0.5, modes=None, noise_modes=2, attention="softmax", **kw):
    field = mlp_noise(dim, "relu", su=0.5, sw=0.5, modes=noise_modes, scale=noise)
    return DensitySolver(field, modes or SMALL[dim], steps, horizon, attention=attention, **kw)


@pytest.mark.parametrize("dim", DIMS)
def test_mass_is_conserved_to_round_off(dim):
    """Strong noise, USA attention at beta = 4, an unresolved run: the mass stays 1 to 1e-12 in float64."""
    s = solver(dim, steps=30, horizon=1.5, noise=1.0, attention="usa", beta=4.0)
    traj = s.run(von_mises_fisher(s.basis, 2.0).expand(2, -1).clone(), seed=1, saveat=10)
    assert (s.basis.mass(traj.x) - 1).abs().max() < 1e-12


@pytest.mark.parametrize("dim", DIMS)
def test_no_noise_no_attention_is_the_identity(dim):
    """With kappa = 0 and attention off every step returns its coefficients (the transform round trip); a grid
    too coarse for the degree (exact 2L - 2) does not."""
    for quadrature, ok in ((None, True), (2 * SMALL[dim] - 2, False)):
        s = solver(dim, noise=0.0, attention="off", steps=3, quadrature=quadrature)
        c0 = von_mises_fisher(s.basis, 3.0)
        assert torch.allclose(s.run(c0, saveat=3).final, c0, atol=1e-13) is ok


def test_uniform_law_is_pathwise_stationary_under_rotations():
    """On the circle, noise made of the n = 0 mode only rotates rigidly: the uniform law stays uniform on
    every path, and a non-uniform law is only rotated (its |c_m| are kept)."""
    base = mlp_noise(2, "relu", modes=3)
    rigid = CircleNoise(base.basis, base.eigen * torch.tensor([1.0, 0, 0, 0], dtype=torch.float64), base.kappa1)
    s = DensitySolver(rigid, 12, 10, 1.0, attention="off")
    uniform = s.basis.uniform((3,))
    assert torch.allclose(s.run(uniform, seed=2).final, uniform, atol=1e-14)
    c0 = von_mises_fisher(s.basis, 2.0)
    assert torch.allclose(s.run(c0, seed=2).final.abs(), c0.abs(), atol=1e-13)


class DriftingField(SpectralField):
    """A wrong noise: every coefficient has mean 1 (a deterministic flow added to the Brownian field)."""

    def __init__(self, field):
        super().__init__(field.basis, field.eigen, field.kappa1)
        self.inner = field
        self.components = field.components

    def apply(self, y, dt, z, source=None):
        return self.inner.apply(y, dt, z + 1.0, source)


@pytest.mark.parametrize("dim", DIMS)
def test_uniform_law_is_stationary_in_mean_without_attention(dim):
    """Without attention, the mean over noise paths of every mode stays 0 (the uniform law is stationary for
    the mean field; on a path it is not): within 4.5 standard errors; a field with a mean flow fails."""
    for field_of, ok in ((lambda f: f, True), (DriftingField, False)):
        base = mlp_noise(dim, "relu", su=0.5, sw=0.5, modes=2)
        s = DensitySolver(field_of(base), SMALL[dim], 5, 0.5, attention="off")
        paths = 200 if dim == 2 else 40
        x = s.run(s.basis.uniform((paths,)), seed=4, saveat=5).final[:, 1:]  # (paths, P - 1)
        se = torch.complex(x.real.std(0), x.imag.std(0)) / math.sqrt(paths)
        z = max(
            float((x.mean(0).real.abs() / se.real).max()), float((x.mean(0).imag.abs() / se.imag.clamp(1e-300)).max())
        )
        assert (z < 4.5) is ok


class RotatedSource:
    """The run's normals, rotated: z' = D^T z R^T (the noise W'(x) = R W(R^T x) of the same law)."""

    def __init__(self, source, wigner, rotation):
        self.source, self.wigner, self.rotation, self.batch = source, wigner, rotation, source.batch

    def randn(self, shape, dtype=torch.float32):
        z = self.source.randn(shape, dtype)  # (..., R, c)
        z = self.wigner.T.to(dtype) @ z
        return z @ self.rotation.T.to(dtype) if z.shape[-1] == self.rotation.shape[0] else z


def _rotation(dim):
    if dim == 2:
        a = 0.7
        return torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64)
    q, _ = torch.linalg.qr(torch.tensor([[0.3, -1.0, 0.4], [0.9, 0.2, -0.5], [0.1, 0.7, 1.1]], dtype=torch.float64))
    return q * torch.sign(torch.linalg.det(q))


def _rotate_density(s, c, rot):
    """The coefficients of rho(R^T x): the push-forward of rho by R, by the solver's quadrature."""
    pts, w, tab, _ = s.grid_on(c)
    return s.basis.moments(pts @ rot.T, w * s.basis.synthesize(c, pts, tab))


@pytest.mark.parametrize("dim", DIMS)
def test_rotation_equivariance(dim):
    """A rotated start with the rotated noise gives the rotated solution (to the quadrature's accuracy); the
    rotated start with the unrotated noise does not."""
    s = solver(dim, steps=8, horizon=0.4, noise=0.7, beta=2.0)
    rot = _rotation(dim)
    pts, w = s.field.basis.quadrature(4 * s.field.modes + 4)
    rt = s.field.basis.real_table
    wigner = (rt(pts @ rot).T * w) @ rt(pts)  # D_kk' = int R_k(R^T x) R_k'(x) dx
    c0 = von_mises_fisher(s.basis, 1.5)
    want = _rotate_density(s, s.run(c0, seed=5, saveat=8).final, rot)
    c0r = _rotate_density(s, c0, rot)
    got = s.run(c0r, saveat=8, streams=RotatedSource(Streams(5, ()), wigner, rot)).final
    assert (got - want).abs().max() < 1e-9
    assert (s.run(c0r, seed=5, saveat=8).final - want).abs().max() > 1e-3


class TwiceLaplacian(DensitySolver):
    """Wrong: the push-forward plus an explicit (k/2) Laplace_S step (the Laplacian counted twice)."""

    def step(self, state, source):
        heat = torch.exp(-self.field.k * self.dt / 2 * self.basis.per_coefficient(self.basis.laplace_by_degree()))
        return super().step(state, source) * heat.to(state.dtype)


class LinearizedTransport(DensitySolver):
    """Wrong: an Euler step of the Ito SPDE without its Laplacian (the Stratonovich transport read as Ito): the
    push-forward linearized in the displacement, c + (c(y + h delta) - c) / h."""

    def map_points(self, x, attention, z, source):
        h = 1e-5
        return x + h * (super().map_points(x, attention, z, source) - x)

    def step(self, state, source):
        return state + (super().step(state, source) - state) / 1e-5


@pytest.mark.parametrize("dim", DIMS)
def test_ito_mean_and_second_moment_match_the_linear_theory(dim):
    """Check 2, noise alone (exact theory): Monte Carlo mean of the modes (rate -k l (l + d - 2) / 2, the Ito
    SPDE's Laplacian) and second moments (the two-point system) within 4.5 standard errors at t = 0.4, 0.8.
    The Laplacian counted twice, or missing (Ito-Euler of the Stratonovich form), fails."""
    paths = 300 if dim == 2 else 50
    for cls, ok in ((DensitySolver, True), (TwiceLaplacian, False), (LinearizedTransport, False)):
        field = mlp_noise(dim, "relu", su=0.5, sw=0.5, modes=2)
        s = cls(field, SMALL[dim], 10, 0.8, attention="off")
        check = moment_check(s, 1.0, paths, degrees=3, seed=7, save_every=5)
        assert check.passes() is ok, (cls.__name__, check.z)


@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("attention", ["softmax", "usa"])
def test_noise_free_growth_rates_match_the_bessel_formula(dim, attention):
    """Check 1: measured growth rates of degrees 1-4 about the uniform law (circle: beta = 1, 5; sphere: 2)
    within 1% of s l (l + d - 2) F_l / (beta F_0) (softmax) or / (beta |S|) (USA); against the other
    attention's formula (a missing or spurious normalizer) they fail. (More beta: ``reproduce spde``.)"""
    other = "usa" if attention == "softmax" else "softmax"
    for beta in (1.0, 5.0) if dim == 2 else (2.0,):
        rows = measured_rates(dim, attention, beta, [1, 2, 3, 4])
        assert rates_pass(rows), [(r.theory, r.measured) for r in rows]
        wrong = linear_rates(dim, 4, beta, 1.0, other)
        assert not rates_pass(
            [type(r)(dim, attention, beta, r.degree, float(wrong[r.degree]), r.measured) for r in rows]
        )


def test_dominant_modes():
    """The fastest mode for attractive attention moves up with beta like sqrt(2 beta)
    (I_l / I_0 ~ e^{-l^2 / 2 beta})."""
    assert [dominant_mode(2, b) for b in (1, 2, 5, 10, 20)] == [1, 2, 3, 4, 6]
    assert [dominant_mode(3, b, "usa") for b in (1, 2, 5, 10, 20)] == [1, 2, 3, 4, 6]


def test_solver_on_device(device):
    """The solver follows the device of its start (CUDA skipped without a GPU)."""
    s = solver(2, steps=4)
    c0 = von_mises_fisher(s.basis, 1.0, device=device)
    traj = s.run(c0, seed=0, saveat=4, particles=(torch.tensor([[1.0, 0.0]], dtype=torch.float64, device=device),))
    assert traj.x[0].device.type == device.type and traj.x[1].device.type == device.type
