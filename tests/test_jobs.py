"""Jobs on the sweep executors (sweeps/_jobs.py): one atomic part per job, resume, the same arrays on Dask."""

from __future__ import annotations

import numpy as np

from sdeformer.sweeps import DaskExecutor, Job, run_jobs

CALLS: list[int] = []


def squares(n: int, offset: float = 0.0) -> dict[str, np.ndarray]:
    CALLS.append(n)
    return {"x": np.arange(n) ** 2 + offset}


def jobs(offset: float = 0.0) -> list[Job]:
    return [Job(squares, {"n": n, "offset": offset}, {"n": n, "offset": offset}, units=n) for n in (3, 1, 2)]


def test_jobs_in_order_then_resumed_from_their_parts(tmp_path):
    CALLS.clear()
    ticks: list[int] = []
    first = run_jobs(jobs(), tmp_path, progress=ticks.append)
    assert [list(a["x"]) for a in first] == [[0, 1, 4], [0], [0, 1]]
    assert sorted(ticks) == [1, 2, 3] and sorted(CALLS) == [1, 2, 3]
    (tmp_path / f"{jobs()[1].id}.npz").unlink()  # as if killed before that part was written
    again = run_jobs(jobs(), tmp_path)
    assert CALLS[3:] == [1]  # only the missing part ran
    assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(first, again))


def test_a_part_of_other_arguments_is_never_read(tmp_path):
    run_jobs(jobs(), tmp_path)
    moved = jobs(offset=0.5)
    for old, new in zip(jobs(), moved):  # same file names, other keys
        (tmp_path / f"{old.id}.npz").rename(tmp_path / f"{new.id}.npz")
    assert [float(a["x"][0]) for a in run_jobs(moved, tmp_path)] == [0.5, 0.5, 0.5]


def test_dask_gives_the_same_arrays(tmp_path):
    local = run_jobs(jobs(), tmp_path / "local")
    with DaskExecutor(2) as ex:
        remote = run_jobs(jobs(), tmp_path / "dask", ex)
    assert all(np.array_equal(a["x"], b["x"]) for a, b in zip(local, remote))
