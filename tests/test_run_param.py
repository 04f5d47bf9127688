"""``core._shapes.run_param``: the one rule that hands a part its per-run parameter in the shape its tensors need."""

from __future__ import annotations

import pytest
import torch

from sdeformer.core._errors import ConfigError
from sdeformer.core._shapes import run_param


def test_a_number_is_a_0d_tensor_of_the_tokens_dtype():
    x = torch.zeros(3, 5, 2, dtype=torch.float32)
    p = run_param(0.1, x, 2)
    assert p.shape == () and p.dtype == torch.float32 and float(p) == pytest.approx(0.1)


def test_per_run_values_broadcast_against_the_trailing_dims():
    x = torch.ones(3, 5, 2, dtype=torch.float64)  # (G, N, d)
    beta = torch.tensor([1.0, 2.0, 3.0])
    assert run_param(beta, x, 2).shape == (3, 1, 1)
    assert torch.equal((x * run_param(beta, x, 2))[:, 0, 0], beta.double())
    assert run_param(beta, x, 1, batch=(3,)).shape == (3, 1)


def test_per_run_values_of_another_batch_are_refused_naming_the_parameter():
    with pytest.raises(ConfigError, match="su"):
        run_param(torch.ones(4), torch.zeros(3, 5, 2), 1, batch=(3,), name="su")
