"""What a density run needs, checked from its sizes before anything is allocated (THEORY section 4; docs/spde.md
section 12): the memory of its tables, step, cloud and saved states, and the range of beta.

Memory (bytes), from the counts alone (no basis, grid or field is built: a basis of degree 10^5 on the sphere
would itself take hours and terabytes to build):

- ``tables``: the basis' and the attention's ``prepare`` of the quadrature grid (J points, exact degree
  4 (L + M) + 8): J x P complex entries on the circle, J x P real entries on the sphere (P coefficients), plus
  the noise's features on the grid (J x R real, R = real harmonics of degree <= M) and the build transients;
- ``step``: per run of the batch, the grid's masses, mapped points, drift and noise (about STEP_ARRAYS arrays
  of J x d) and one chunk of the transform (``harmonics.CHUNK`` complex entries);
- ``cloud``: per token, PER_TOKEN_ARRAYS arrays of d floats, the noise's features (R) and table, and the
  cloud's attention features;
- ``libraries``: ``LIBRARIES``, what a run loads on first use;
- ``saved``: per saved time the coefficients (of the density and of the cloud), the figure's density map, the
  kept tokens, and the positivity grid (exact to 4L) evaluated for all saved times at once.

``check_memory(parts, limit)`` refuses a total above the limit (default: ``core._validate.fits_in_memory``'s,
the memory available now) in one line with the estimate and the limit. The estimate is compared with the peak
resident memory of runs in docs/spde.md section 12.

beta: ``BETA_MAX``. E_beta = e^beta (mass^2 - ...) / 2 (``diagnostics.energy_beta``) and the unnormalized (USA)
multipliers 2 pi I_l(beta) exceed the largest float64 above beta = ln(1.8e308) = 709.78, and the clouds'
harmonic series of e^{beta t} (``spde._attention.exp_degree``) stays within ``spde._attention.MAX_DEGREE`` modes up to
there. So beta is refused above ``BETA_MAX`` = 700 by the density solver, its attention and the energy alike:
the Python API and ``sdeformer spde`` give the same one-line error.
"""

from __future__ import annotations

import math

from ..core._errors import ConfigError
from ..core._validate import fits_in_memory, positive_float

BETA_MAX = 700.0  # below ln(float64 max) = 709.78: e^beta and I_l(beta) stay finite
STEP_ARRAYS = 12  # arrays of (J, d) alive during one step of the grid (points, noise, drift, tangent, output)
PER_TOKEN_ARRAYS = 16  # arrays of (N, d) alive during one step of a cloud
FIGURE_POINTS = {2: 256, 3: 61 * 120}  # ``diagnostics.MAP_POINTS``
KEEP_POINTS = 400  # tokens kept per saved time (``experiments._spde.run.KEEP_POINTS``)
CHUNK_BYTES = 16 << 21  # one chunk of a transform (``harmonics.CHUNK`` complex128 entries)
QUADRATURE_FACTOR = 4  # the grid is exact to 4 (L + M) + 8 (``solver.default_quadrature``)
GIB = 2**30
LIBRARIES = 64 << 20  # what a run loads on first use (scipy.special, the plotting grid): measured 16-50 MiB


def beta_value(value: object) -> float:
    """beta as a float in (0, BETA_MAX]; ConfigError naming beta with the bound otherwise."""
    beta = positive_float("beta", value)
    if beta > BETA_MAX:
        raise ConfigError(
            "beta", value, f"must be <= {BETA_MAX:g} for the density solver (e^beta and I_l(beta) overflow float64)"
        )
    return beta


def coefficients(dim: int, degree: int) -> int:
    """P: complex coefficients of degree <= L (L + 1 on the circle, (L + 1)(L + 2) / 2 on the sphere)."""
    return degree + 1 if dim == 2 else (degree + 1) * (degree + 2) // 2


def real_harmonics(dim: int, degree: int) -> int:
    """R: real harmonics of degree <= M (2M + 1 on the circle, (M + 1)^2 on the sphere)."""
    return 2 * degree + 1 if dim == 2 else (degree + 1) ** 2


def grid_points(dim: int, exact: int) -> int:
    """J: points of the quadrature exact to ``exact`` (``harmonics.quadrature``)."""
    return exact + 1 if dim == 2 else (exact // 2 + 1) * (exact + 1)


def density_bytes(
    dim: int,
    modes: int,
    noise_modes: int,
    *,
    saved: int = 1,
    steps: int = 1,
    particles: int = 0,
    batch: int = 1,
    quadrature: int | None = None,
    kept: int | None = None,
) -> dict[str, float]:
    """The memory of a run by part (module docstring), in bytes; every count is a Python int (no overflow).
    ``kept``: tokens saved per saved time (default min(particles, KEEP_POINTS), what ``sdeformer spde`` keeps)."""
    exact = QUADRATURE_FACTOR * (modes + noise_modes) + 8 if quadrature is None else quadrature
    j, p, r = grid_points(dim, exact), coefficients(dim, modes), real_harmonics(dim, noise_modes)
    p_att, p_noise = coefficients(dim, modes + 1), coefficients(dim, noise_modes)
    entry = 16 if dim == 2 else 8  # the circle keeps complex tables, the sphere real Legendre blocks
    build = 8 * j * (modes + 2) * 3 if dim == 3 else 16 * j * (modes + 2)  # cos, sin / angle transients
    tables = entry * j * (p + p_att) + build + 8 * j * r + 16 * j * p_noise
    step = batch * 8 * j * (STEP_ARRAYS * dim + 4) + min(CHUNK_BYTES, 16 * j * p)
    cloud = 0
    if particles:
        per_token = PER_TOKEN_ARRAYS * dim + r + 2 * p_noise + 2 * (dim + 1)
        cloud = batch * particles * 8 * per_token + 2 * CHUNK_BYTES + batch * saved * 16 * p
    keep = min(particles, KEEP_POINTS) if kept is None else kept
    per_saved = 16 * p + 8 * (FIGURE_POINTS[dim] + grid_points(dim, 4 * modes)) + 8 * keep * dim
    saved_bytes = batch * saved * per_saved + 16 * steps * batch
    return {
        "libraries": float(LIBRARIES),
        "tables": float(tables),
        "step": float(step),
        "cloud": float(cloud),
        "saved": float(saved_bytes),
    }


def check_memory(parts: dict[str, float], limit: float | None = None, what: str = "modes/particles/steps") -> float:
    """ConfigError (the estimate, its largest part, the limit) when the parts add up to more than ``limit``
    bytes (None: ``core._validate.fits_in_memory``'s limit); returns the total."""
    total = sum(parts.values())
    largest = max(parts, key=lambda k: parts[k])
    value = f"{largest} {parts[largest] / GIB:.3g} GiB"
    if limit is None:
        fits_in_memory(what, value, total)
    elif total > limit:
        raise ConfigError(what, value, f"needs about {total / GIB:.3g} GiB of memory, {limit / GIB:.3g} GiB allowed")
    return total


def saved_count(steps: int, every: int) -> int:
    """Saved times of a run saving every ``every``-th step and the last, and the start."""
    return steps // every + 2


def require_mass(name: str, mass: float) -> None:
    """A start with NaN or no mass has no density to push forward: ConfigError naming ``name``."""
    if not math.isfinite(mass) or mass <= 0:
        raise ConfigError(name, f"mass {mass:.3g}", "the initial coefficients must be finite with mass > 0")
