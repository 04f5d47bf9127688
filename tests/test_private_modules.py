"""The private-module convention of docs/design.md ("Public and private"): inside a subpackage every module is
private (``_name.py``); the package's ``__init__`` is its public face, and the imports of its ``if TYPE_CHECKING:``
block are its one re-export list, loaded on first use (``sdeformer._lazy``)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from sdeformer._lazy import _listed

SRC = Path(__file__).resolve().parents[1] / "src" / "sdeformer"
ENTRY_POINTS: set[str] = set()  # none: the benchmark programs run as ``python -m benchmarks PROGRAM``
PACKAGES = sorted(p.parent for p in SRC.glob("*/__init__.py"))


def test_every_module_inside_a_subpackage_is_private():
    public = []
    for package in PACKAGES:
        for path in package.iterdir():
            name = path.relative_to(SRC).as_posix()
            if path.suffix == ".py" and path.stem not in ("__init__", "__main__") and not path.stem.startswith("_"):
                public.append(name)
            elif path.is_dir() and (path / "__init__.py").exists() and not path.name.startswith("_"):
                public.append(name + "/")
    assert sorted(set(public) - ENTRY_POINTS) == []


@pytest.mark.parametrize("package", [SRC, *PACKAGES], ids=lambda p: p.name)
def test_each_listed_name_loads_and_all_is_the_list(package):
    name = "sdeformer" + ("" if package == SRC else "." + package.name)
    module = importlib.import_module(name)
    listed = _listed(str(package / "__init__.py"))
    for public in listed:
        assert getattr(module, public) is not None, f"{name}.{public}"
    assert set(listed) <= set(module.__all__) and set(listed) <= set(dir(module))


def test_an_unlisted_name_is_an_attribute_error():
    import sdeformer.dynamics

    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        sdeformer.dynamics.nothing_here  # noqa: B018


def test_importing_a_package_imports_nothing_heavy():
    """The re-export list is lazy: importing every package's public face loads neither torch nor numpy."""
    names = ["sdeformer"] + ["sdeformer." + p.name for p in PACKAGES if p.name not in ("plots", "cli", "peers")]
    heavy = "print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))"
    code = f"import sys\nfor n in {names!r}: __import__(n)\n{heavy}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_subpackage_listed_at_the_root_is_the_subpackage():
    """``sdf.real`` (``from . import real`` in the root's list) is the package, loaded on first use."""
    import sdeformer as sdf

    assert sdf.real.__name__ == "sdeformer.real" and callable(sdf.real.measure) and "real" in sdf.__all__
