"""The report's list of the model family: one table per registry (noise fields, attention drifts, normalization
schemes, SDE solvers, sweep observables), generated from ``registry`` so that a registered part (a plugin's too)
is listed with the config fields it reads, the capabilities it claims and its one-line description (BEYOND
section 0)."""

from __future__ import annotations

from ..io._report import Section, Table
from ..registry import ATTENTIONS, NOISES, NORMS, OBSERVABLES, SOLVERS, Registry

TITLES = {
    "noise": "noise fields (config key noise)",
    "attention": "attention drifts (config key attention)",
    "norm": "normalization schemes (config key norm)",
    "scheme": "SDE solvers (scheme)",
    "observable": "sweep observables (spec key observables)",
}


def parts_table(registry: Registry) -> Table:
    """One row per registered part: name, what it reads, what it claims, its description."""
    rows = [[r["name"], r["reads"] or "-", r["claims"] or "-", r["doc"]] for r in registry.table()]
    return Table(["name", "reads", "claims", "description"], rows, TITLES[registry.kind])


def parts_section() -> Section:
    """The section listing every registered part (import ``sweeps._observables`` first for the built-in
    observables, as this function does)."""
    from ..sweeps import _observables as observables  # noqa: F401  (registers the built-in observables)

    return Section(
        "The model family",
        ["Every part a config, a spec or the command line can name, as registered (sdeformer.registry)."],
        [parts_table(r) for r in (NOISES, ATTENTIONS, NORMS, SOLVERS, OBSERVABLES)],
    )
