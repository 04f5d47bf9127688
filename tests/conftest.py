import sys
from pathlib import Path

import pytest

from sdeformer.experiments.rates import torch_threads

# tests import the shared exact cases as `problems`
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def one_thread():
    """Small models run fastest on one thread; two threads on a shared, loaded machine spin-wait."""
    with torch_threads(1):
        yield
