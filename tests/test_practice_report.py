"""The practice results page (practice._report): its probe section and figures, written atomically."""

import json

import sdeformer.plots._save as save
from sdeformer.plots import PRACTICE_FIGURES
from sdeformer.practice._report import probe_section


def _probe_record() -> dict:
    stats = {"mean_cos": [0.1, 0.2], "energy": [0.7, 0.6], "clusters": [4.0, 3.0]}
    noise = {"activation": "gelu", "su": 0.2, "sw": 0.0, "width": 8, "dt": 1.0, "samples": 1, "cluster_threshold": 0.95}
    theory = {"horizon": 1.0, "dim": 384, "kappa1": 0.01, "lambda_bar": -1.0, "lambda_bar_prime": -0.5}
    return {
        "text": "a b c",
        "n_tokens": 4,
        "layers": ["embeddings", "layer1"],
        **stats,
        "noise": noise,
        "theory": {**theory, "synchronizes": True},
        "noise_scales": [{"scale": 1.0, **stats}],
    }


def test_practice_report_writes_figures_atomically(tmp_path, monkeypatch):
    written = []
    real = save.atomic_write_bytes
    monkeypatch.setattr(save, "atomic_write_bytes", lambda path, data: written.append(path) or real(path, data))
    (tmp_path / "probe_x.json").write_text(json.dumps(_probe_record()))
    section = probe_section(tmp_path, tmp_path, PRACTICE_FIGURES)
    assert section is not None and written == [tmp_path / "probe_x.png"]
    assert "sU = 0.2, sW = 0" in section.paragraphs[0]
