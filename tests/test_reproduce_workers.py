"""``reproduce`` with an executor: two or more built-in experiments that spread no jobs themselves go to the
workers whole; the ones that do (``_steps.spreads_jobs``) and plugins' run in the driver with the executor; the
report keeps registration order whatever order the workers finish in (experiments._reproduce)."""

from __future__ import annotations

import re

from sdeformer.experiments import _reproduce
from sdeformer.experiments._registry import Context, Experiment, ExperimentRegistry
from sdeformer.experiments._steps import spreads_jobs
from sdeformer.io._report import Section

RAN: list[tuple[str, bool]] = []  # (experiment, whether its context held the executor)


def _named(name: str):
    def run(ctx: Context) -> list[Section]:
        RAN.append((name, ctx.executor is not None))
        return [Section(f"section of {name}")]

    return run


first, second, third = _named("first"), _named("second"), _named("third")
spreading = spreads_jobs(_named("spreading"))


class ReversedExecutor:
    """A stand-in for the Dask executor: runs the calls here, in reverse order (as workers may finish)."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def map_calls(self, fn, calls, keys=None):
        self.names += [call[0] for call in calls]
        for args in reversed(list(calls)):
            yield fn(*args)


def _registry(*names: str) -> ExperimentRegistry:
    registry = ExperimentRegistry()
    for name in names:
        target = _named("plugin") if name == "plugin" else f"{__name__}:{name}"
        registry.register(Experiment(name, target, f"doc of {name}", f"stage of {name}", groups=("group",)))
    return registry


def _titles(page: str) -> list[str]:
    """The experiments' section titles in the order the page first names them (its contents, then its body)."""
    return list(dict.fromkeys(re.findall(r"section of (\w+)", page)))


def test_a_groups_plain_experiments_go_to_the_workers_and_the_report_keeps_their_order(tmp_path, monkeypatch):
    """first, second, third on the workers (finishing in reverse); spreading and the plugin in the driver with
    the executor. Wrong models: a reproduce that ignores the executor (nothing sent), or one that writes sections
    in the order the workers finish (third before first)."""
    monkeypatch.setattr(_reproduce, "EXPERIMENTS", _registry("first", "spreading", "second", "plugin", "third"))
    RAN.clear()
    executor = ReversedExecutor()
    page = _reproduce.reproduce("group", tmp_path, executor=executor, show_progress=False).read_text()
    assert executor.names == ["first", "second", "third"]
    assert _titles(page) == ["first", "spreading", "second", "plugin", "third"]
    on_workers = {name: held for name, held in RAN}
    assert on_workers == {"first": False, "second": False, "third": False, "spreading": True, "plugin": True}


def test_one_plain_experiment_runs_in_the_driver(tmp_path, monkeypatch):
    """A single plain experiment gains nothing on a one-thread worker: it runs here, with the executor."""
    monkeypatch.setattr(_reproduce, "EXPERIMENTS", _registry("first", "spreading"))
    RAN.clear()
    executor = ReversedExecutor()
    page = _reproduce.reproduce("group", tmp_path, executor=executor, show_progress=False).read_text()
    assert executor.names == [] and _titles(page) == ["first", "spreading"]
    assert RAN == [("first", True), ("spreading", True)]


def test_without_an_executor_everything_runs_here_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(_reproduce, "EXPERIMENTS", _registry("first", "second", "third"))
    RAN.clear()
    page = _reproduce.reproduce("group", tmp_path, show_progress=False).read_text()
    assert _titles(page) == ["first", "second", "third"]
    assert [(n, False) for n in ("first", "second", "third")] == RAN
