"""Labelled results: a run's saved states as an ``xarray.Dataset`` (docs/design.md, "Results and caching"), and
``Runs``, the one result type of every batch API (``config.run_sweep``, ``config.sweep_measure``,
``sweeps.run_jobs``; a sweep folder opens as the same kind of Dataset with ``sweeps.open_sweep``).

xarray is the ecosystem's convention for labelled N-d results (NetCDF or Zarr on disk); it is imported only
when a result is converted, so the library does not need it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

BATCH_DIMS = ("run",)  # the name of a single batch axis; more batch axes are run0, run1, ...


def state_dims(ndim: int) -> tuple[str, ...]:
    """The dims of one saved state array ``(S, ..., N, d)``: time, the batch axes, token, dim."""
    batch = ndim - 3
    names = BATCH_DIMS if batch == 1 else tuple(f"run{i}" for i in range(batch))
    return ("time", *names, "token", "dim")


def trajectory_dataset(traj: Any, config: Mapping[str, Any] | None = None) -> Any:
    """``traj`` (a ``loop.Trajectory``) as an ``xarray.Dataset``: ``x`` with dims time x [run] x token x dim (a
    tuple state gives ``x``, ``x1``, ... with the trailing dims of each), coordinates ``time`` (t = k dt) and
    ``step`` (k), the run's stats as attributes and ``config`` (e.g. ``ModelConfig.to_dict()``) as scalar
    coordinates (but a value named like a dim, ``dim``, which is that dim's size). Raises ImportError naming the
    extra that installs xarray."""
    try:
        import xarray as xr
    except ImportError:  # pragma: no cover - the sweeps extra installs it
        raise ImportError("to_xarray needs xarray: pip install 'sdeformer[sweeps]'") from None
    states = traj.x if isinstance(traj.x, tuple) else (traj.x,)
    data = {}
    for i, state in enumerate(states):
        array = state.detach().to("cpu", torch.float64).numpy() if state.is_floating_point() else state.cpu().numpy()
        dims = state_dims(array.ndim) if array.ndim >= 3 else ("time", *(f"x{i}_{j}" for j in range(array.ndim - 1)))
        if i and array.shape[-1] != states[0].shape[-1]:  # e.g. the radius (S, ..., N, 1) of a Pre-LN state
            dims = (*dims[:-1], f"x{i}_{dims[-1]}")
        data["x" if i == 0 else f"x{i}"] = (dims, array)
    coords: dict[str, Any] = {"time": traj.t.cpu().numpy(), "step": ("time", traj.steps.cpu().numpy())}
    dims = {d for dims, _ in data.values() for d in dims}
    scalars = {k: v for k, v in (config or {}).items() if isinstance(v, (int, float, str, bool))}
    coords.update({k: v for k, v in scalars.items() if k not in dims})  # ``dim``'s value is the size of dim
    return xr.Dataset(data, coords=coords, attrs={k: float(v) for k, v in traj.stats.items()})


def _label_runs(ds: Any, labels: Sequence[Mapping[str, Any]]) -> Any:
    """``ds`` with the scalar label values that differ between runs as coordinates along ``run`` and those the
    runs share as attributes."""
    import numpy as np

    keys = [k for k in labels[0] if all(k in c for c in labels)]
    scalar = [k for k in keys if all(isinstance(c[k], (int, float, str, bool)) for c in labels)]
    varying = [k for k in scalar if len({c[k] for c in labels}) > 1]
    ds = ds.assign_coords({k: ("run", np.array([c[k] for c in labels])) for k in varying})
    shared = {k: int(labels[0][k]) if isinstance(labels[0][k], bool) else labels[0][k] for k in scalar}
    ds.attrs.update({k: v for k, v in shared.items() if k not in varying and k not in ds.dims})
    return ds


def runs_dataset(trajectories: Sequence[Any], configs: Sequence[Mapping[str, Any]]) -> Any:
    """Trajectories of several runs (``config.run_sweep``: one per config, the same saved times and state shape)
    as one ``xarray.Dataset``: ``x`` with dims time x run x token x dim, the config values that differ between
    the runs as coordinates along ``run``, those they share as attributes. Raises ValueError for runs saved at
    other times or with other shapes (label them one by one with ``Trajectory.to_xarray``)."""
    if not trajectories:
        raise ValueError("no runs to label")
    first = trajectories[0]
    for k, traj in enumerate(trajectories):
        if not torch.equal(traj.t, first.t) or tuple(traj.x.shape) != tuple(first.x.shape):
            raise ValueError(f"run {k} is saved at other times or with another shape than run 0: label it alone")
    stacked = type(first)(torch.stack([t.x for t in trajectories], dim=1), first.steps, first.t, dict(first.stats))
    return _label_runs(trajectory_dataset(stacked), configs)  # x: (time, run, token, dim)


def arrays_dataset(records: Sequence[Mapping[str, Any]], labels: Sequence[Mapping[str, Any]]) -> Any:
    """Named arrays of several runs (one mapping per run, the same names and shapes) as one ``xarray.Dataset``:
    each name with dims run x NAME_0 x NAME_1 ..., the labels as in ``runs_dataset``. Raises ValueError naming an
    array whose shape differs between runs."""
    import numpy as np
    import xarray as xr

    if not records:
        raise ValueError("no runs to label")
    data = {}
    for name in records[0]:
        arrays = [np.asarray(r[name].cpu() if isinstance(r[name], torch.Tensor) else r[name]) for r in records]
        if any(a.shape != arrays[0].shape for a in arrays):
            raise ValueError(f"array {name!r} has another shape in some runs: label the runs one by one")
        data[name] = (("run", *(f"{name}_{j}" for j in range(arrays[0].ndim))), np.stack(arrays))
    return _label_runs(xr.Dataset(data), labels)


class Runs(list):
    """The result of a batch API, one entry per run in the input order (a list): a ``loop.Trajectory``
    (``config.run_sweep``) or a mapping of named arrays (``config.sweep_measure``, ``sweeps.run_jobs``), with
    what labels each run (``labels``: a config's values or a job's key). ``to_xarray()`` labels them as one
    ``xarray.Dataset`` with dim ``run`` (``runs_dataset`` or ``arrays_dataset``); ``stack()`` gives a mapping
    entry's arrays stacked along a first run axis."""

    def __init__(self, results: Sequence[Any], labels: Sequence[Mapping[str, Any]]):
        super().__init__(results)
        self.labels = [dict(label) for label in labels]

    def to_xarray(self) -> Any:
        if self and isinstance(self[0], Mapping):
            return arrays_dataset(self, self.labels)
        return runs_dataset(self, self.labels)

    def stack(self) -> dict[str, Any]:
        """{name: the runs' arrays of that name stacked along a new first axis} (tensors stay tensors)."""
        import numpy as np

        def join(values: list[Any]) -> Any:
            return torch.stack(values) if isinstance(values[0], torch.Tensor) else np.stack(values)

        return {name: join([r[name] for r in self]) for name in self[0]}
