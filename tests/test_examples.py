"""The gallery scripts in examples/ run and each writes its figure (slow: ~20 s together)."""

import subprocess
import sys
from pathlib import Path

import pytest
from hang_guard import HANG_S

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script: Path, tmp_path: Path) -> None:
    assert len(script.read_text().splitlines()) <= 40, "gallery examples stay short"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, timeout=HANG_S)
    assert (tmp_path / f"{script.stem}.png").stat().st_size > 0
    # the gallery shows the committed figure of the same name
    assert (script.parents[1] / "docs" / "examples" / f"{script.stem}.png").is_file()
