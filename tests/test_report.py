"""The reproduction report: figures and tables land in one self-contained index.html."""

from __future__ import annotations

import numpy as np

from sdeformer.experiments.grid import grid_configs, run_and_write, sections
from sdeformer.report import write_report
from sdeformer.store import read_npz


def test_grid_section_small_scale(tmp_path):
    results = run_and_write(tmp_path, choices=("tanh", "none"), layers=12, width=32)
    report = sections(results)
    assert [s.title for s in report] == ["Figure 2: tanh MLP", "Figure 3: no MLP"]
    arrays = read_npz(tmp_path / "grid_tanh.npz")
    assert arrays["cos"].shape == (18, 13, 64 * 63 // 2) and arrays["energy"].shape == (18, 13)
    assert np.all(np.abs(arrays["cos"].astype(np.float32)) <= 1.0 + 1e-3)
    # no MLP, s = 0: nothing moves, so the energy is constant
    none = read_npz(tmp_path / "grid_none.npz")
    frozen = [i for i, c in enumerate(grid_configs("none", layers=12, width=32)) if c.attention_scale == 0.0]
    assert np.allclose(none["energy"][frozen], none["energy"][frozen][:, :1], rtol=1e-5)
    path = write_report(tmp_path, "test", report)
    html = path.read_text()
    assert html.count("data:image/png;base64,") == 2 and "odd field" in html
    # cached arrays are reused (resume): a second call does not recompute
    mtime = (tmp_path / "grid_tanh.npz").stat().st_mtime_ns
    run_and_write(tmp_path, choices=("tanh",), layers=12, width=32)
    assert (tmp_path / "grid_tanh.npz").stat().st_mtime_ns == mtime
