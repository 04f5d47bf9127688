"""The engine's hot path: the heap keeps freed blocks (no fresh pages per layer),
plain-Python broadcasting, in-place activations, observables that share one cosine matrix per chunk of saved
states. Each fast path must give the numbers of the slow one bit for bit."""

import resource

import pytest
import torch

from sdeformer import observables as dg
from sdeformer.config import ModelConfig
from sdeformer.config._batches import run_sweep
from sdeformer.core import _memory as memory
from sdeformer.core._activations import get_activation
from sdeformer.core._shapes import broadcast_shape
from sdeformer.sweeps import _observables as so


def test_freed_memory_is_reused_so_a_repeated_batched_run_takes_no_fresh_pages():
    """Without the thresholds every layer re-faults its (G, m, d) weights: >100k minor faults for this grid
    slice (measured 114,293); with them the second run takes next to none."""
    if not memory.keep_freed_memory():
        pytest.skip("not glibc")
    configs = [ModelConfig(tokens=64, dim=64, width=2048, layers=6, seed=s, sampling="direct") for s in range(6)]
    run_sweep(configs)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    run_sweep(configs)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 3000


def test_keep_freed_memory_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("SDEFORMER_KEEP_MEMORY", "0")
    assert memory.keep_freed_memory.__wrapped__() is False


@pytest.mark.parametrize(
    "shapes", [((3, 1), (4,)), ((), (2, 3)), ((5, 1, 2), (1, 4, 2)), ((2,), (2,)), ((0, 1), (1, 3)), ((7,),)]
)
def test_broadcast_shape_is_torchs_rule(shapes):
    assert broadcast_shape(*shapes) == tuple(torch.broadcast_shapes(*shapes))


def test_broadcast_shape_says_none_where_torch_refuses():
    assert broadcast_shape((3,), (4,)) is None and broadcast_shape((2, 3), (3, 2)) is None


@pytest.mark.parametrize("name", ["relu", "silu", "sigmoid", "tanh", "gelu", "leaky_relu:0.1"])
def test_in_place_activation_gives_the_same_bits(name):
    act = get_activation(name)
    z = torch.randn(4, 64, 256) * 3
    expected = act(z)
    assert torch.equal(act.apply_(z.clone()), expected)


def _runs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(7, 6, 9, 4, generator=g, dtype=torch.float64)  # (S, G, N, d)
    x[3, 2] = x[3, 2, :1]  # one synchronized run: cosines at 1 up to rounding
    return x, torch.tensor([0.5, 1.0, 1.0, 2.0, 4.0, 0.5], dtype=torch.float64)


def test_shared_observables_equal_each_computed_alone_bit_for_bit(monkeypatch):
    """Chunked evaluation (one saved time per chunk) with a shared cosine matrix against every observable on its
    own, beta by beta through ``interaction_energy``: a stale cache or a wrong chunk would differ."""
    x, beta = _runs()
    names = ["energy", "mean_cos", "mean_abs_cos", "min_cos", "all_within", "clusters", "pairs_above"]
    monkeypatch.setattr(so, "GRAM_BUDGET", 1)
    got = so.evaluate(so.parse_observables(names), x, beta)
    energy = torch.stack([dg.interaction_energy(x[:, k], float(b)) for k, b in enumerate(beta)], dim=1)
    assert torch.equal(got["energy"], energy)
    assert torch.equal(got["mean_cos"], dg.mean_cosine(x))
    assert torch.equal(got["clusters"], dg.cluster_count(x).double())
    assert torch.equal(got["all_within"], dg.one_cluster(x).double())
    assert got["energy"][3, 2] < 1e-12 < float(got["energy"].max())


def test_cosines_are_computed_once_inside_a_block_and_afresh_outside():
    x, _ = _runs()
    with dg.shared_cosines(x):
        a, b = dg.cosine_matrix(x), dg.cosine_matrix(x)
        other = dg.cosine_matrix(x.clone())
    assert a is b and other is not a and dg.cosine_matrix(x) is not a and torch.equal(other, a)


@pytest.mark.parametrize("threshold", [0.999, 0.5, -0.2])
def test_all_within_by_rows_equals_the_full_matrix(threshold):
    """The first-row pre-test decides only where the full matrix must agree: against the pairs' minimum on a
    mix of spread and clustered runs (a pre-test that decides too eagerly, margin -1e-3 instead of +1e-9, flips
    clustered runs to "not within" and fails)."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(40, 12, 5, dtype=torch.float64, generator=g)  # (runs, N, d)
    centre = torch.randn(5, dtype=torch.float64, generator=g)
    x[10:30] = centre + 0.02 * x[10:30]  # clustered runs: cosines near 1
    got = dg.all_within(x, threshold)
    assert torch.equal(got, dg.pairwise_cosines(x).amin(-1) >= threshold)
    assert 0 < int(got.sum()) < 40 or threshold < 0.9
