"""The commands that are experiments of their own (``Experiment.command``): each entry names its declared settings
(``params``), its body (``command``) and its terminal output (``show``), all in one module of this package;
``sdeformer NAME`` is generated from the entry (one option per setting, ``--json``, ``--plugin``). Torch-free: the
modules named are imported when the command runs (or shows its ``--help``)."""

from __future__ import annotations

from dataclasses import replace

from .._registry import EXPERIMENTS, Experiment


def command(name: str, at: str, doc: str = "", arguments: int = 0, exit_code: str = "") -> None:
    """Register ``sdeformer NAME`` from ``at`` = ``"module:SETTINGS:body:show"`` (``show`` may be empty); a report
    experiment of that name (spde, real) becomes a command too, its doc kept."""
    module, settings, body, show = at.split(":")
    path = f"sdeformer.experiments._commands.{module}:"
    fields = {"params": path + settings, "command": path + body, "show": path + show if show else "",
              "arguments": arguments, "exit_code": path + exit_code if exit_code else ""}  # fmt: skip
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
command("rates", "checks:RATES:rates:summary", """Measured convergence rate with log-log slope, bootstrap interval and \
the theory's slope (THEORY 5). The runs go in chunks, jobs on the executor; an interrupted measurement resumes with \
the chunks it lacks.""", arguments=1)
command("sync-check", "checks:SYNC:sync_check:summary", """Check E E_beta(t) <= exp((eps + lambda_bar_prime) t) \
E E_beta(0) on an SDE and a discrete ensemble, with the power record (the SDE with the noise covariance cut \
--power-factor times must fail); verdict: holds, not resolved, fails, below resolution or not applicable (with the \
reason: a kernel condition, or an architecture part that breaks the theorem's assumptions; the energies are \
simulated all the same). The chunks of runs are jobs on the executor; a rerun into OUT computes only the chunks it \
lacks.""")
command("lyapunov", "checks:LYAPUNOV:lyapunov:show_lyapunov", "Top Lyapunov exponent of the noise-only flow from two \
nearby tokens, against lambda_1 (THEORY 2).")
command("phase", "checks:PHASE:phase:show_phase", """P(sync) over activation x d x bias std x attention scale, heat \
maps with lambda_bar = 0 (THEORY 5), and each cell's theorem verdict ("not applicable" where an architecture part \
breaks its assumptions). The ensemble is a resumable sweep in OUT/sweep (draw it with `sdeformer sweep plot \
OUT/sweep`).""")
command("kernel", "model:KERNEL:kernel:show_kernel", "Kernel constants of THEORY section 2: kappa(1), kappa'(1), \
lambda_1, lambda_bar, lambda_bar_prime.")
command("simulate", "model:SIMULATE:simulate:summary", "Run the discrete stochastic transformer (THEORY section 1) \
and report E_beta per saved layer.")
command("spde", "model:SPDE:spde:summary")
command("peer", "peer:SETTINGS:peer:show", """Run a peer's experiment at its default settings; with --compare, count \
the cells equal to the peer's (docs/peers.md; the peer's own script is run by the repository tool \
tools/run_peer.py, not by this command).""", arguments=1)
command("sweep run", "sweep:RUN:run:show_run", """Run every run of SPEC not yet recorded in OUT (resumes after a \
crash; failed runs are kept as errors; damaged parts are moved into OUT/damaged and rerun). One sweep at a time \
writes into OUT. Exit code 1 when every run that ran failed.""", 1, "all_failed")
command("sweep status", "sweep:STATUS:status:show_status", "Done / failed / pending runs of the folder's spec.", 1)
command("sweep plot", "sweep:PLOT:plot:show_plot", "Heat map or curves from the folder's table.", 1)
# fmt: on
