"""Shared fixtures. ``tests/`` and the repository root are on the import path through pytest's ``pythonpath``
setting (pyproject.toml), so tests import the exact cases as ``problems`` and the benchmarks as ``benchmarks``.
"""

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from sdeformer.core._threads import torch_threads


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Small models run fastest on one thread; two threads on a shared, loaded machine spin-wait."""
    with torch_threads(1):
        yield


@pytest.fixture
def float64() -> Iterator[torch.dtype]:
    """The test runs with torch's default dtype set to float64 (rate and tolerance checks); restored after."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield torch.float64
    finally:
        torch.set_default_dtype(old)


@pytest.fixture(
    params=[
        "cpu",
        pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")),
    ]
)
def device(request: pytest.FixtureRequest) -> torch.device:
    """Each test that takes ``device`` runs on the CPU and, when one is available, on CUDA."""
    return torch.device(request.param)


PLUGIN_FILE = str(Path(__file__).with_name("plugin_parts.py"))
PLUGIN_ENTRIES = (("noise", "half_gaussian"), ("attention", "shifted_softmax"), ("observable", "order"))


@pytest.fixture(scope="module")
def plugin_parts():
    """tests/plugin_parts.py loaded as ``--plugin FILE`` loads it (its parts registered), for one test module;
    afterwards its entries and its load are undone, so other modules see the built-in registries only."""
    import sys

    from sdeformer import plugins
    from sdeformer.registry import ATTENTIONS, NOISES, OBSERVABLES

    plugins.load_plugins([PLUGIN_FILE])
    yield sys.modules["sdeformer_plugin_plugin_parts"]
    for registry, name in ((NOISES, "half_gaussian"), (ATTENTIONS, "shifted_softmax"), (OBSERVABLES, "order")):
        registry.entries.pop(name, None)
    plugins._loaded.remove(str(Path(PLUGIN_FILE).resolve()))
    sys.modules.pop("sdeformer_plugin_plugin_parts", None)
