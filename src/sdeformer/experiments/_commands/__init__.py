"""The commands that are experiments of their own (``Experiment.command``): each entry names its declared settings
(``params``), its body (``command``) and its terminal output (``show``), all in one module of this package;
``sdeformer NAME`` is generated from the entry (one option per setting, ``--json``, ``--plugin``). Torch-free: the
modules named are imported when the command runs (or shows its ``--help``)."""

from __future__ import annotations

from dataclasses import replace

from .._registry import EXPERIMENTS, Experiment


def command(name: str, at: str, doc: str = "", arguments: int = 0) -> None:
    """Register ``sdeformer NAME`` from ``at`` = ``"module:SETTINGS:body:show"`` (``show`` may be empty); a report
    experiment of that name (spde, real) becomes a command too, its doc kept."""
    module, settings, body, show = at.split(":")
    path = f"sdeformer.experiments._commands.{module}:"
    fields = {"params": path + settings, "command": path + body, "show": path + show if show else "",
              "arguments": arguments}  # fmt: skip
    if name in EXPERIMENTS.entries:
        EXPERIMENTS.entries[name] = replace(EXPERIMENTS[name], **fields)
    else:
        EXPERIMENTS.register(Experiment(name, "", doc, "", **fields))


# fmt: off
command("train", "practice:TRAIN:train:show_train", """Train every method over seeds on a real task; report final \
metric mean +- std and steps to target.

With --out, OUT/TASK is tied to the settings (run.json) before any run: the same settings resume, other settings are \
refused (exit 2) unless --force.""")
command("probe", "probe:SETTINGS:probe:show", "Probe all-MiniLM-L6-v2: per-layer mean token cosine, E_beta and \
clusters, without and with common noise.")
command("infer-practice", "practice:INFER:infer:show_infer", """Perplexity and tokens/s of block random-batch \
attention against full attention (trained char model).

Writes RESULTS/inference.json; a record of other settings (p, block, n, repeats) there is refused (exit 2) unless \
--force.""")
command("report-practice", "practice:REPORT:report:show_report", """The practice results page: every method against \
the baseline, probe and random-batch inference.

The report folder is tied to the results folder: rebuilding it from the same results folder (after more runs) \
overwrites it; a report of another results folder there is refused (exit 2) unless --force.""")
command("real", "real:SETTINGS:real:show")
# fmt: on
