"""An independent density scheme for the SPDE on S^1: finite volumes in angle, Wong-Zakai in time (THEORY section
4; docs/spde.md section 9).

The density solver (``spde.DensitySolver``) is the push-forward of the particles' own step, so a density it
computes cannot tell an error shared by the field and the step. This scheme shares neither: in the angle theta
the SPDE of THEORY section 4 with the circle's tangent noise w (covariance C(u) = cos u kappa(cos u), cut at
degree M like the field) reads, in Stratonovich form (sum_k s_k s_k' = 0 for a stationary field),

    d rho + d_theta( a(theta; rho) rho ) dt + d_theta( rho o dW(theta) ) = 0,
    a(theta; rho) = int e^{beta cos(theta - phi)} sin(phi - theta) rho(phi) dphi
                    / int e^{beta cos(theta - phi)} rho(phi) dphi,

W(theta) = sum_k sqrt(lambda_k) R_k(theta) B^k with R_k = 1 / sqrt(2 pi), cos(n theta) / sqrt(pi),
sin(n theta) / sqrt(pi) (n = 1..M, in that order: the coefficients z of the solver's step) and lambda_n =
int_0^2pi C(u) cos(n u) du computed here by the trapezoid rule from ``kernel_theory``'s kappa (not from the
field). In time, each step of the particles' Brownian increments z is followed by the **Wong-Zakai** random PDE
d_t rho = -d_theta((a + sqrt(dt) W_z / dt) rho) (the Brownian path linear within the step; its limit as dt -> 0
is the Stratonovich SPDE), integrated by classical RK4 substeps under a CFL number ``CFL``; in angle, by finite
volumes on ``cells`` uniform cells with fourth-order face values, the attention a at the faces by a circular
FFT convolution. Mass is conserved to round-off; the CDF is exact for the cell averages (piecewise constant).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...core._kernel import kernel_theory

CELLS = 1024
CFL = 1.5  # max |velocity| x substep / cell width (RK4 with these faces is stable below ~2)
QUADRATURE = 4096  # trapezoid points for lambda_n (exact for trigonometric polynomials of degree < 4096)


def circle_spectrum(activation: str, su: float, sw: float, modes: int, scale: float = 1.0) -> np.ndarray:
    """lambda_n = scale^2 int_0^2pi cos u kappa(cos u) cos(n u) du, n = 0..``modes`` (trapezoid rule)."""
    u = 2 * math.pi * np.arange(QUADRATURE) / QUADRATURE
    kappa = kernel_theory(activation, 2, su=su, sw=sw).kappa(torch.from_numpy(np.cos(u))).numpy()
    c = np.cos(u) * kappa
    return scale**2 * np.array([(c * np.cos(n * u)).sum() * 2 * math.pi / QUADRATURE for n in range(modes + 1)])


class FiniteVolume:
    """The scheme of the module docstring on ``cells`` cells: spectrum ``eigen`` (lambda_n, n = 0..M), softmax
    attention with Q^T K = ``beta`` I, V = I, ``steps`` steps to ``horizon`` (the particles' steps)."""

    def __init__(self, eigen: np.ndarray, beta: float, steps: int, horizon: float, cells: int = CELLS):
        self.eigen, self.beta, self.steps, self.horizon, self.cells = (
            np.asarray(eigen, float),
            beta,
            steps,
            horizon,
            cells,
        )
        self.h = 2 * math.pi / cells
        self.centres = (np.arange(cells) + 0.5) * self.h  # (J,)
        faces = np.arange(cells) * self.h + self.h  # face j + 1/2 between cells j and j + 1
        # attention at face j + 1/2 from cell i: offset theta_face - theta_i = (j - i + 1/2) h, a circulant
        offset = (np.arange(cells) + 0.5) * self.h
        self._num = np.fft.rfft(-np.exp(beta * np.cos(offset)) * np.sin(offset))  # sin(phi - theta) = -sin(offset)
        self._den = np.fft.rfft(np.exp(beta * np.cos(offset)))
        n = np.arange(1, eigen.shape[0])
        root = np.sqrt(np.maximum(self.eigen, 0.0))
        self.features = np.concatenate(  # sqrt(lambda_k) R_k at the faces, (R, J), the solver's column order
            [
                np.full((1, cells), root[0] / math.sqrt(2 * math.pi)),
                root[1:, None] * np.cos(n[:, None] * faces) / math.sqrt(math.pi),
                root[1:, None] * np.sin(n[:, None] * faces) / math.sqrt(math.pi),
            ]
        )

    @property
    def dt(self) -> float:
        return self.horizon / self.steps

    def initial(self, concentration: float) -> np.ndarray:
        """The von Mises-Fisher density about theta = 0 at the cell centres (``(J,)``, mass 1)."""
        rho = np.exp(concentration * np.cos(self.centres))
        return rho / (rho.sum() * self.h)

    def attention(self, rho: np.ndarray) -> np.ndarray:
        """a at the faces, ``(B, J) -> (B, J)``: the two circular convolutions by FFT."""
        f = np.fft.rfft(rho, axis=-1)
        return np.fft.irfft(f * self._num, self.cells, -1) / np.fft.irfft(f * self._den, self.cells, -1)

    def rate(self, rho: np.ndarray, drive: np.ndarray) -> np.ndarray:
        """d_t rho = -(F_{j+1/2} - F_{j-1/2}) / h, F = (a + drive) rho_face, rho_face fourth order."""
        up = np.roll(rho, -1, -1)
        face = (7 * (rho + up) - np.roll(rho, 1, -1) - np.roll(up, -1, -1)) / 12
        flux = (self.attention(rho) + drive) * face
        return -(flux - np.roll(flux, 1, -1)) / self.h

    def step(self, rho: np.ndarray, z: np.ndarray) -> np.ndarray:
        """One step with the Brownian coefficients z ``(B, R)``: the Wong-Zakai PDE over dt by RK4 substeps."""
        drive = (z @ self.features) / math.sqrt(self.dt)  # (B, J): W_z sqrt(dt) / dt
        fastest = np.abs(drive).max() + 1.0  # |a| <= 1 (V = I)
        sub = max(1, math.ceil(fastest * self.dt / (CFL * self.h)))
        tau = self.dt / sub
        for _ in range(sub):
            k1 = self.rate(rho, drive)
            k2 = self.rate(rho + tau / 2 * k1, drive)
            k3 = self.rate(rho + tau / 2 * k2, drive)
            k4 = self.rate(rho + tau * k3, drive)
            rho = rho + tau / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return rho

    def run(self, rho0: np.ndarray, z: np.ndarray, every: int) -> np.ndarray:
        """From ``rho0`` ``(B, J)`` with the steps' coefficients z ``(steps, B, R)``: the densities at steps 0,
        every, 2 every, ..., ``(S, B, J)``."""
        saved, rho = [rho0], rho0
        for k in range(self.steps):
            rho = self.step(rho, z[k])
            if (k + 1) % every == 0:
                saved.append(rho)
        return np.stack(saved)

    def quantile(self, rho: np.ndarray, levels: np.ndarray) -> np.ndarray:
        """Q at ``levels`` for the cell averages ``rho`` ``(J,)`` (angles from 0 in [0, 2 pi)): the CDF at the
        faces, exact for a piecewise constant density, inverted linearly."""
        cdf = np.concatenate([[0.0], np.cumsum(np.maximum(rho, 0.0)) * self.h])
        return np.interp(levels, cdf / cdf[-1], np.arange(self.cells + 1) * self.h)

    def coefficients(self, rho: np.ndarray, modes: int) -> np.ndarray:
        """The Fourier coefficients c_m = int rho e^{-i m theta} dtheta / sqrt(2 pi), m = 0..``modes``, of the
        cell averages (midpoint rule): to compare with the spectral solver's."""
        m = np.arange(modes + 1)
        return (rho[..., None, :] * np.exp(-1j * m[:, None] * self.centres)).sum(-1) * self.h / math.sqrt(2 * math.pi)
