"""Property-based fuzzing of the files a user hands in besides configs and specs: mask files (``.npy`` arrays of
any shape, dtype and values, damaged ``.npy`` bytes, edge lists of any text or bytes) and plugin files (Python
built from statements that register good and bad parts, raise, exit or do not parse). The contract: a mask
file gives a boolean adjacency with self loops (symmetric for an edge list, the file's 0/1 entries for a .npy)
or ConfigError naming ``mask`` in one line; a plugin file loads or raises ConfigError naming ``plugin`` in one
line; the command line exits 0 or 2 with one line, never a traceback. The default suite runs a fast profile;
``make test-slow`` the same properties deeper."""

from __future__ import annotations

import io
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from sdeformer import plugins
from sdeformer.attention._masks import graph_adjacency
from sdeformer.cli import app
from sdeformer.core._errors import ConfigError
from sdeformer.registry import ATTENTIONS, NOISES, NORMS, OBSERVABLES, SOLVERS

runner = CliRunner()
QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=QUIET)
DEEP = settings(max_examples=400, deadline=None, suppress_health_check=QUIET)
N = 4
_count = itertools.count()

# -- mask files -------------------------------------------------------------------------------------------
ELEMENTS = st.sampled_from([0, 1, 0.0, 1.0, -1, 2, 0.5, -0.0, float("nan"), float("inf"), True, False, 1e300])
DTYPES = st.sampled_from(["f8", "f4", "i8", "u1", "bool", "c16", "U3", "O", "V4", "datetime64[s]"])
SHAPES = st.sampled_from([(N, N), (N, N), (N, N), (N,), (N, N + 1), (2, N, N), (), (0, 0), (1, 1)])


@st.composite
def npy_bytes(draw) -> bytes:
    """A .npy file: an array of some shape, dtype and values, or such a file's bytes cut, flipped or replaced."""
    shape, dtype = draw(SHAPES), draw(DTYPES)
    values = draw(st.lists(ELEMENTS, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    buffer = io.BytesIO()
    try:
        with np.errstate(all="ignore"):
            array = np.array(values, dtype=object).reshape(shape).astype(dtype)
    except (ValueError, TypeError, OverflowError):
        array = np.zeros(shape)
    np.save(buffer, array, allow_pickle=True)
    data = buffer.getvalue()
    damage = draw(st.sampled_from(["none", "none", "cut", "flip", "random"]))
    if damage == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif damage == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
    elif damage == "random":
        data = draw(st.binary(max_size=200))
    return data


INDEX = st.one_of(st.integers(-2, N + 1).map(str), st.sampled_from(["a", "1.0", "--1", "²", "٣", "0x1", "", "1e0"]))
edge_lines = st.lists(
    st.one_of(
        st.lists(INDEX, min_size=0, max_size=4).map(" ".join),
        st.builds(lambda a, b: f"{a} {b}  # note", INDEX, INDEX),
        st.text(max_size=10),
    ),
    max_size=6,
).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
edge_files = st.one_of(edge_lines, st.binary(max_size=60))


def check_mask(tmp_path: Path, suffix: str, data: bytes) -> None:
    path = tmp_path / f"mask{next(_count)}{suffix}"
    path.write_bytes(data)
    try:
        adj = graph_adjacency(str(path), N)
    except ConfigError as exc:
        assert exc.args and "\n" not in str(exc) and "mask=" in str(exc), str(exc)
        return
    assert adj.dtype == torch.bool and adj.shape == (N, N) and bool(adj.diagonal().all())  # self loops
    if suffix != ".npy":  # an edge list is undirected; a .npy adjacency may be directed
        assert torch.equal(adj, adj.T)
    else:
        kept = np.load(path, allow_pickle=False)
        assert np.isin(kept, (0, 1)).all() and torch.equal(
            adj, torch.from_numpy(kept != 0) | torch.eye(N, dtype=torch.bool)
        )


@FAST
@given(npy_bytes())
def test_fuzz_npy_mask_files(tmp_path_factory, data):
    check_mask(tmp_path_factory.mktemp("npy"), ".npy", data)


@FAST
@given(edge_files, st.sampled_from([".txt", ".edges", ".csv"]))
def test_fuzz_edge_list_mask_files(tmp_path_factory, data, suffix):
    check_mask(tmp_path_factory.mktemp("edges"), suffix, data)


def test_a_mask_file_on_the_command_line_is_one_line_or_runs(tmp_path):
    """The two readers' worst cases through ``simulate --mask``: exit 2 with one line naming mask, or a run."""
    cases = {
        "bad.txt": b"\xff\xfe\x00",
        "odd.txt": "0 \u00b2\n".encode(),
        "neg.txt": b"--1 2\n",
        "cut.npy": b"\x93NUMPY",
    }
    cases["ok.txt"] = b"0 1\n1 2\n2 3\n"
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        args = ["simulate", "--tokens", str(N), "--dim", "3", "--layers", "3", "--attention", "graph"]
        args += ["--mask", str(tmp_path / name)]
        result = runner.invoke(app, [*args, "--json"])
        assert "Traceback" not in result.output + result.stderr and result.exit_code in (0, 2), (name, result.output)
        if name == "ok.txt":
            assert result.exit_code == 0, result.output
        else:
            errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
            assert result.exit_code == 2 and len(errors) == 1 and "mask=" in errors[0], (name, result.stderr)


# -- plugin files -----------------------------------------------------------------------------------------
PART = """
class Part{k}:
    def __init__(self, *a, **k):
        pass

    @classmethod
    def from_config(cls, p):
        return cls()

    def drift(self, x, source=None):
        return x * 0
"""
STATEMENTS = st.sampled_from(
    [
        "import sys",
        "import torch",
        "from sdeformer.registry import ATTENTIONS, NOISES, OBSERVABLES, Param",
        PART,
        "ATTENTIONS.register('fz{k}', Part{k})",
        "ATTENTIONS.register('fz{k}', Part{k}, reads=('beta',), params=(Param('gain', float, 1.0),))",
        "ATTENTIONS.register('bad name{k}', Part{k})",
        "ATTENTIONS.register('softmax', Part{k})",
        "NOISES.register('fzn{k}', Part{k})",
        "ATTENTIONS.register('fzc{k}', Part{k}, claims=('telepathy',))",
        "ATTENTIONS.register('fzp{k}', Part{k}, params=(Param('beta', float, 'x'),))",
        "OBSERVABLES.register('fzo{k}', lambda x, beta, spec: x.sum())",
        "OBSERVABLES.register('fzo{k}', 3)",
        "raise ValueError('no')",
        "raise ImportError('missing dependency')",
        "raise GeneratorExit",
        "raise RecursionError",
        "sys.exit(0)",
        "sys.exit(3)",
        "sys.exit('bye')",
        "1 / 0",
        "def f(:",
        "\tindent",
        "x = undefined_name",
        "import no_such_module_fz",
        "ConfigError = 1",
    ]
)
plugin_sources = st.lists(STATEMENTS, max_size=6).map("\n".join)


def _registered() -> set[tuple[str, str]]:
    return {(r.kind, name) for r in (NOISES, NORMS, ATTENTIONS, SOLVERS, OBSERVABLES) for name in r.entries}


def check_plugin(tmp_path: Path, source: str) -> None:
    """Load the plugin in Python and on the command line; undo what it registered and its load."""
    k = next(_count)
    path = tmp_path / f"fuzz_plugin_{k}.py"
    path.write_text(source.replace("{k}", str(k)))
    before = _registered()
    try:
        try:
            plugins.load_plugins([str(path)])
        except ConfigError as exc:
            assert "\n" not in str(exc) and "plugin=" in str(exc), str(exc)
        result = runner.invoke(app, ["simulate", "--plugin", str(path), "--tokens", "4", "--dim", "3", "--json"])
        assert "Traceback" not in result.output + result.stderr and result.exit_code in (0, 2), result.output
        if result.exit_code == 2:
            errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
            assert len(errors) == 1 and "plugin=" in errors[0], result.stderr
    finally:
        registries = {r.kind: r for r in (NOISES, NORMS, ATTENTIONS, SOLVERS, OBSERVABLES)}
        for kind, name in _registered() - before:
            registries[kind].entries.pop(name)
        resolved = str(path.resolve())
        if resolved in plugins._loaded:
            plugins._loaded.remove(resolved)
        plugins._sources.pop(resolved, None)
        sys.modules.pop(f"sdeformer_plugin_{path.stem}", None)


@FAST
@given(plugin_sources)
def test_fuzz_plugin_files(tmp_path_factory, source):
    check_plugin(tmp_path_factory.mktemp("plugin"), source)


@pytest.mark.slow
@DEEP
@given(npy_bytes())
def test_fuzz_npy_mask_files_deep(tmp_path_factory, data):
    check_mask(tmp_path_factory.mktemp("npy"), ".npy", data)


@pytest.mark.slow
@DEEP
@given(edge_files, st.sampled_from([".txt", ".edges", ".csv"]))
def test_fuzz_edge_list_mask_files_deep(tmp_path_factory, data, suffix):
    check_mask(tmp_path_factory.mktemp("edges"), suffix, data)


@pytest.mark.slow
@DEEP
@given(plugin_sources)
def test_fuzz_plugin_files_deep(tmp_path_factory, source):
    check_plugin(tmp_path_factory.mktemp("plugin"), source)
