"""Core mathematics shared by every part: the sphere, randomness, activations, the kernel theory (THEORY
section 2), input validation and the one error type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._activations import Activation, get_activation
    from ._config_files import load_config_file, parse_assignments
    from ._counter import MASK, CounterStreams, key_schedule, philox
    from ._errors import ConfigError
    from ._kernel import BETA_MAX, KernelTheory, kernel_theory
    from ._memory import keep_freed_memory
    from ._rng import (
        GENERATOR_BYTES,
        GPU_LOOP_RUNS,
        RNG_KINDS,
        Seeds,
        Streams,
        StreamSource,
        check_kind,
        derive_seeds,
        launch_warning,
        make_streams,
        seed_list,
    )
    from ._shapes import broadcast_shape, run_param
    from ._sphere import project, tangent, uniform_sphere
    from ._threads import single_threaded, torch_threads, usable_cores, warn_threads
    from ._validate import (
        MEMORY_ENV,
        SEED_LIMIT,
        cosine_threshold,
        dimension,
        finite_float,
        finite_state,
        fits_in_memory,
        float_dtype,
        memory_limit,
        memory_size,
        nonneg_float,
        nonneg_std,
        per_run,
        positive_float,
        positive_int,
        seed,
        sphere_tokens,
        token_norms,
        token_tensor,
    )

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
