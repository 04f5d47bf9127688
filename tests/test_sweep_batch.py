"""``batch: auto``: tasks sized from a memory budget per task, the same numbers as any
fixed batch (batching changes no run's values)."""

import numpy as np
import pandas as pd
import pytest
import torch

from sdeformer import sweeps
from sdeformer.core._errors import ConfigError
from sdeformer.experiments._simulate import run_bytes
from sdeformer.sweeps import _table as table, _task as task
from sdeformer.sweeps._runner import run

pytestmark = pytest.mark.kernels  # numbers that depend on torch's CPU kernels: `make test-kernels`

SPEC = {
    "name": "auto",
    "base": {"tokens": 6, "dim": 3, "width": 32, "layers": 4, "horizon": 0.4},
    "axes": {"dim": [3, 24], "beta": [0.5, 2.0]},
    "seeds": 5,
    "observables": ["energy", "clusters"],
    "times": [0.0, 0.4],
}


def _table(spec: dict, out) -> pd.DataFrame:
    parsed = sweeps.parse_spec(spec)
    run(parsed, out)
    df = table.read(out)
    return df.sort_values(["dim", "beta", "seed", "t"]).reset_index(drop=True)


def test_auto_batch_follows_the_memory_budget(monkeypatch):
    parsed = sweeps.parse_spec({**SPEC, "batch": "auto"})
    runs = sweeps.expand(parsed)
    small, big = (next(r.config for r in runs if r.config.dim == d) for d in (3, 24))
    monkeypatch.setattr(task, "AUTO_TASK_BYTES", 3 * run_bytes(big, cosines=True))
    assert task.batch_size("auto", big) == 3 < task.batch_size("auto", small)
    sizes = {len(t.runs) for t in task.make_tasks(runs, "auto") if t.runs[0].config.dim == 24}
    assert max(sizes) == 3 and task.batch_size(7, big) == 7


def test_auto_batch_records_the_numbers_of_a_fixed_batch(tmp_path, monkeypatch):
    monkeypatch.setattr(
        task, "AUTO_TASK_BYTES", 2 * run_bytes(sweeps.expand(sweeps.parse_spec(SPEC))[0].config, cosines=True)
    )
    auto = _table({**SPEC, "batch": "auto"}, tmp_path / "auto")
    fixed = _table({**SPEC, "batch": 64}, tmp_path / "fixed")
    cols = ["dim", "beta", "seed", "t", "energy", "clusters"]
    pd.testing.assert_frame_equal(pd.DataFrame(auto[cols]), pd.DataFrame(fixed[cols]))


def test_a_batch_that_is_neither_a_count_nor_auto_is_refused():
    with pytest.raises(ConfigError, match="batch"):
        sweeps.parse_spec({**SPEC, "batch": "big"})


def test_device_is_validated_when_parsed_and_checked_when_run(tmp_path):
    assert sweeps.parse_spec({**SPEC, "device": "cuda:1"}).to_dict()["device"] == "cuda:1"
    assert "device" not in sweeps.parse_spec(SPEC).to_dict()  # cpu: the claims of older folders unchanged
    with pytest.raises(ConfigError, match="device"):
        sweeps.parse_spec({**SPEC, "device": "tpu"})
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="device"):
            run(sweeps.parse_spec({**SPEC, "device": "cuda"}), tmp_path / "gpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_sweep_on_the_gpu_records_the_cpu_numbers_to_rounding(tmp_path):
    gpu = _table({**SPEC, "device": "cuda"}, tmp_path / "gpu")
    cpu = _table(SPEC, tmp_path / "cpu")
    assert np.abs(gpu["energy"].to_numpy() - cpu["energy"].to_numpy()).max() < 1e-4
