"""The experiment registry (``sdf.EXPERIMENTS``): every experiment of the report as one registered entry.

An entry names the experiment, the function that runs it into a report folder (``"module:function"``, so that
this module, the command line and ``--help`` import no torch), its one-line doc, the stage line printed when
it starts, the groups it belongs to (``all``, ``paper``, ``report``) and its cost in progress units. From the
registry come ``sdeformer reproduce NAME`` (its choices and help), the groups, the progress bars and the
report's sections (in registration order), and the API table of the experiments.

An entry may declare the experiment's settings (``params``: ``"module:NAME"`` of a tuple of ``params.Param``s,
imported when used, e.g. the ODE check's tokens and depths); ``sdeformer NAME --set NAME=VALUE`` checks a value
against its declaration and hands it to the run function as ``ctx.settings`` (part of the experiment's cache
key, so other settings never reuse a result).

The run function takes a ``Context`` and returns the report's ``Section``s (with their figures drawn): it runs
the experiment's computation (cached and resumable in its folder), has ``sdeformer.plots`` draw the result,
and builds the sections from it. A new experiment is one module with such a function, its plot function, its
test and one ``register`` line below.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core._errors import ConfigError
from ..params import Param


@dataclass(frozen=True)
class Context:
    """What a run function gets: the report folder, the seed, the quick size, a ``sweeps`` executor (None: this
    process), the progress callback ``advance(n)`` of the experiment's bar, the stage printer and the name the
    user asked for (an experiment or a group)."""

    out: Path
    seed: int = 0
    quick: bool = False
    executor: Any = None
    advance: Callable[[int], None] = field(default=lambda _n: None)
    stage: Callable[[str], None] = field(default=lambda _text: None)
    requested: str = ""
    settings: dict[str, Any] = field(default_factory=dict)  # declared settings given (``Experiment.params``)


@dataclass(frozen=True)
class Experiment:
    """One registered experiment (module docstring). ``units``: a function ``(seed, quick, settings) -> int`` (or
    its ``"module:function"``) giving its progress units (0: no bar) for the declared ``settings`` given
    (``Experiment.settings``); ``progress_units`` calls it. ``summary``: the path, under the report folder, of
    the JSON result that ``sdeformer NAME --json`` prints (empty: the command has no ``--json``). ``quick``: the
    quick size's settings, shown beside each declared setting's default in ``sdeformer NAME --help``.

    An entry with a ``command`` is a command of its own: ``sdeformer NAME`` gets one option per declared setting
    (``params``; the first ``arguments`` of them positional), ``--json`` and ``--plugin``, and calls
    ``command(settings)`` with every setting (the value given, else the declared default) and ``json``; the
    result is printed by ``show(result, settings)``, or as JSON (its ``to_json()`` where it has one), and the
    command exits with ``exit_code(result)`` where the entry names one. An entry without a ``target`` is a command
    only: no report section, not run by ``reproduce``."""

    name: str
    target: str | Callable[[Context], list[Any]]  # "module:function", or the function (a plugin's)
    doc: str
    stage: str
    groups: tuple[str, ...] = ()
    units: Callable[[int, bool, dict[str, Any]], int] | str = field(default=lambda _seed, _quick, _settings: 0)
    params: str = ""
    summary: str = ""  # the result's JSON file under the report folder: ``sdeformer NAME --json`` prints it
    quick: str = ""  # "module:ATTR[.ATTR]" of a function returning the quick size's settings (a dataclass)
    command: str = ""  # "module:function" of ``sdeformer NAME``'s own body (a command; below)
    show: str = ""  # "module:function" printing the command's result for the terminal (without --json)
    arguments: int = 0  # the command's first declared settings taken as positional arguments
    exit_code: str = ""  # "module:function" of the command's exit code for its result (0: success), once printed

    def call(self, attr: str, *args: Any) -> Any:
        """Call the entry's ``"module:function"`` named by ``attr`` (``command``, ``show`` or ``exit_code``)."""
        module, _, name = getattr(self, attr).partition(":")
        return getattr(importlib.import_module(module), name)(*args)

    def declared(self) -> tuple[Param, ...]:
        """The settings the experiment declares (none without ``params``)."""
        module, _, attr = self.params.partition(":")
        return getattr(importlib.import_module(module), attr) if self.params else ()

    def quick_values(self) -> dict[str, Any]:
        """The declared settings whose value differs at the quick size (``--quick``): name -> quick value."""
        if not self.quick:
            return {}
        module, _, path = self.quick.partition(":")
        found: Any = importlib.import_module(module)
        for attr in path.split("."):
            found = getattr(found, attr)
        quick = vars(found())
        return {p.name: quick[p.name] for p in self.declared() if quick.get(p.name, p.default) != p.default}

    def settings(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` settings checked against the declared ones (type and range); ConfigError naming an undeclared
        or bad one."""
        declared = {p.name: p for p in self.declared()}
        for name in given:
            if name not in declared:
                raise ConfigError("set", name, f"not a setting of {self.name}; its settings: {sorted(declared)}")
        return {name: declared[name].check(name, value) for name, value in given.items()}

    def progress_units(self, seed: int, quick: bool, settings: dict[str, Any]) -> int:
        """The experiment's progress units for these settings (``units``)."""
        units = self.units
        if isinstance(units, str):
            module, _, attr = units.partition(":")
            units = getattr(importlib.import_module(module), attr)
        return units(seed, quick, settings)

    def run(self, ctx: Context) -> list[Any]:
        """The experiment's report sections, computed into ``ctx.out``."""
        if not self.target:
            raise ConfigError("part", self.name, f"a command (sdeformer {self.name}), not a report section")
        if callable(self.target):
            return self.target(ctx)
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)(ctx)


class ExperimentRegistry:
    """Named experiments in report order, and the groups they form."""

    def __init__(self) -> None:
        self.entries: dict[str, Experiment] = {}

    def register(self, experiment: Experiment) -> Experiment:
        if experiment.name in self.entries or experiment.name in self.groups():
            raise ConfigError("experiment name", experiment.name, f"already taken: {self.names()}")
        self.entries[experiment.name] = experiment
        return experiment

    def names(self) -> list[str]:
        return list(self.entries)

    def groups(self) -> dict[str, tuple[str, ...]]:
        """Group name -> its experiments, in report order."""
        out: dict[str, list[str]] = {}
        for e in self.entries.values():
            for g in e.groups:
                out.setdefault(g, []).append(e.name)
        return {g: tuple(names) for g, names in out.items()}

    def select(self, name: str) -> list[Experiment]:
        """The experiments of a group, or the one named; ConfigError for an unknown name."""
        groups = self.groups()
        if name in groups:
            return [self.entries[n] for n in groups[name]]
        if name in self.entries and self.entries[name].target:
            return [self.entries[name]]
        raise ConfigError("part", name, f"one of {[*groups, *(e.name for e in self.reports())]}")

    def __getitem__(self, name: str) -> Experiment:
        if name not in self.entries:
            raise ConfigError("experiment", name, f"one of {self.names()}")
        return self.entries[name]

    def __iter__(self) -> Iterator[Experiment]:
        return iter(list(self.entries.values()))

    def reports(self) -> list[Experiment]:
        """The experiments with a report section (``reproduce NAME``), not the commands only."""
        return [e for e in self if e.target]

    def table(self) -> list[dict[str, str]]:
        """One row per experiment with a report section (name, groups, doc): the API page and ``reproduce --help``."""
        return [{"name": e.name, "groups": ", ".join(e.groups), "doc": e.doc} for e in self.reports()]


def _paper_units(part: str) -> Callable[[int, bool, dict[str, Any]], int]:
    def units(seed: int, _quick: bool, _settings: dict[str, Any]) -> int:
        from . import _steps as steps

        return steps.paper_units(part, seed)

    return units


EXPERIMENTS = ExperimentRegistry()
_S = "sdeformer.experiments._steps:"
_PAPER, _ALL, _REPORT = ("all", "paper", "report"), ("all", "report"), ("report",)
EXPERIMENTS.register(
    Experiment("table1", _S + "table1", "Table 1: the kernel constants (THEORY section 2)", "Table 1: kernel constants",
               _PAPER)
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("figure1", _S + "figure1", "Figure 1: relu and tanh, 2000 layers each (THEORY section 6)",
               "Figure 1: relu and tanh, 2000 layers each (or their cached parts)", _PAPER, _paper_units("figure1"))
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("grid", _S + "grid", "Figures 2-6: the grid of panels (THEORY section 6)",
               "Figures 2-6: the grid of panels", _PAPER, _paper_units("grid"))
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("theorems", _S + "theorems", "the theorem checks: rates, synchronization, Lyapunov, phase",
               "part 2: theorem checks", _ALL, lambda _s, _q, _g: 11)
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("spde", _S + "spde", "the SPDE solved as a density: solver checks (docs/spde.md)",
               "the SPDE as a density: solver checks against the linear theory and the particles", _REPORT)
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("beyond", _S + "beyond", "part 3: the stochastic-transformer family (docs/beyond.md)",
               "part 3: beyond the paper")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("architectures", _S + "architectures",
               "part 4: normalization, ALiBi, graph masks, two species (docs/beyond.md sections 6-9)",
               "part 4: the architectures people build (normalization, ALiBi, graph masks, two species)")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("real", _S + "real", "a pretrained transformer (all-MiniLM-L6-v2) against the theory (docs/real.md)",
               "a real transformer: measuring all-MiniLM-L6-v2's token dynamics")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("ode", "sdeformer.experiments._ode:report",
               "the noise-free limit ODE against the discrete model: first order in the layer step (THEORY 3)",
               "the noise-free limit: discrete model against the ODE", (), "sdeformer.experiments._ode:units",
               "sdeformer.experiments._ode_settings:SETTINGS",
               quick="sdeformer.experiments._ode_settings:OdeSettings.quick")
)  # fmt: skip
_F = "sdeformer.experiments._field."  # the field's 2026 results (docs/field.md), group "field"
EXPERIMENTS.register(
    Experiment("long-context", _F + "_long_context:report",
               "one query over n uniform keys: beta*(n) ~ n^(2/(d-1)) (Bruno et al. 2026; docs/field.md)",
               "long contexts: beta*(n) against n^(2/(d-1))", ("field",), _F + "_long_context:units",
               _F + "_long_context:SETTINGS", "long-context/long_context.json",
               _F + "_long_context:LongContextSettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("independent-noise", _F + "_independent_noise:report",
               "unnormalized attention, per-token noise: the critical beta*_d (Mun, Rosenzweig 2026; docs/field.md)",
               "independent noise: beta*_d from Bessel functions, the stationary branch and particles", ("field",),
               _F + "_independent_noise:units", _F + "_independent_noise:SETTINGS",
               "independent-noise/independent_noise.json", _F + "_independent_noise:IndependentNoiseSettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("context-chaos", _F + "_context_chaos:report",
               "a token moved by n context tokens against infinite context: n^(-1/2) (Chen et al. 2026; docs/field.md)",
               "context chaos: the deviation from infinite context against n", ("field",),
               _F + "_context_chaos:units", _F + "_context_chaos:SETTINGS", "context-chaos/context_chaos.json",
               _F + "_context_chaos:ContextChaosSettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("escape", _F + "_escape:report",
               "a linear feed-forward map trained in the noisy model: escape from clustering (Isobe et al. 2026)",
               "escape: the trained map's tokens leave the cluster near the final layers", ("field",),
               _F + "_escape:units", _F + "_escape:SETTINGS", "escape/escape.json", _F + "_escape:EscapeSettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("low-temperature", _F + "_low_temperature:report",
               "large beta: W2 to the zero-temperature push-forward against beta (Alcalde et al. 2026; docs/field.md)",
               "low temperature: W2 to the push-forward and the escape time against beta", ("field",),
               _F + "_low_temperature:units", _F + "_low_temperature:SETTINGS", "low-temperature/low_temperature.json",
               _F + "_low_temperature:LowTemperatureSettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("auxiliary", _F + "_auxiliary_report:report",
               "positions as auxiliary variables: the token law is their push-forward (Imaizumi et al. 2026)",
               "auxiliary variables: W2 to the push-forward of the positions' law", ("field",),
               _F + "_auxiliary:units", _F + "_auxiliary:SETTINGS", "auxiliary/auxiliary.json",
               _F + "_auxiliary:AuxiliarySettings.quick")
)  # fmt: skip
EXPERIMENTS.register(
    Experiment("heads", _F + "_heads_report:report",
               "H i.i.d. heads per layer against H -> infinity at fixed depth: H^(-1/2) (Gibson, Reisinger 2026)",
               "many heads: the deviation from the H -> infinity limit against H", ("field",),
               _F + "_heads:units", _F + "_heads:SETTINGS", "heads/heads.json", _F + "_heads:HeadsSettings.quick")
)  # fmt: skip

from . import _commands  # noqa: E402, F401  (the commands that are experiments of their own register here)
