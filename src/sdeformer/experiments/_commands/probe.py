"""The command ``probe``: all-MiniLM-L6-v2's per-layer mean token cosine, E_beta and clusters, without and with
common noise (THEORY sections 5 and 7); its settings are the text, the scales and ``ProbeNoise``'s (torch-free)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core._errors import ConfigError
from ...params import Param, params_of
from ...practice._probe_settings import ProbeNoise
from .options import force, table

NOISE = params_of(ProbeNoise)  # --samples, --dt, --activation, --width, --bias-std, ...
SETTINGS = (
    Param("text", str, None, doc="text to probe [a fixed 20-token sentence]"),
    Param("file", Path, None, doc="read the text from this file instead"),
    Param("scale", list[float], [0.1, 0.3, 1.0, 3.0], doc="noise scales of the sweep (repeat)"),
    Param("out", Path, None,
          doc="also write the JSON record to this file (a record of other settings there is refused)"),
    force("overwrite --out holding a record of other settings"),
    *NOISE,
)  # fmt: skip


def probe(s: dict[str, Any]) -> dict:
    from ...core._activations import get_activation
    from ...core._validate import finite_float, positive_float, positive_int, seed as check_seed
    from ...io._formats import write_json
    from ...practice._claims import claim_record
    from ...practice._probe import DEFAULT_TEXT, probe as run, probe_settings, record_settings
    from ...real._inputs import read_text
    from .bounds import bound, probe_bytes

    text, file, scales, out = s["text"], s["file"], s["scale"], s["out"]
    if text is not None and file is not None:
        raise ConfigError("text", text, "give --text or --file, not both")
    options = {p.name: s[p.name] for p in NOISE}
    o = ProbeNoise(**options)
    if not -1.0 < finite_float("threshold", o.threshold) < 1.0:
        raise ConfigError("threshold", o.threshold, "a cosine strictly between -1 and 1")
    check_seed("seed", o.seed)
    positive_float("dt", o.dt)  # the noise's settings, before the model loads
    positive_int("width", o.width)
    get_activation(o.activation)
    body = read_text(file, "file") if file is not None else (DEFAULT_TEXT if text is None else text)  # regular UTF-8
    bound("samples/width", (o.samples, o.width), probe_bytes(len(body), positive_int("samples", o.samples), o.width))
    if out is not None:  # before the model loads: the file is tied to the settings its record keeps
        claim_record(out, probe_settings(body, scales, **options), record_settings, "probe", force=s["force"])
    result = run(body, scales, **options)
    if out is not None:
        write_json(out, result, checksum=True)
    return result


def show(result: dict, s: dict[str, Any]) -> None:
    th, nz = result["theory"], result["noise"]
    title = (f"all-MiniLM-L6-v2, {result['n_tokens']} tokens; noise {s['activation']}, sU {nz['su']:g}, sW "
             f"{nz['sw']:g}: lambda_bar = {th['lambda_bar']:.4g}, synchronizes = {th['synchronizes']}")  # fmt: skip
    columns = ("layer", "mean cos / E / clusters (clean)", *(f"scale {r['scale']:g}" for r in result["noise_scales"]))
    scales = result["noise_scales"]
    rows = [[name, f"{result['mean_cos'][i]:.3f} / {result['energy'][i]:.3f} / {result['clusters'][i]:g}",
             *(f"{r['mean_cos'][i]:.3f} / {r['energy'][i]:.3f} / {r['clusters'][i]:.3g}" for r in scales)]
            for i, name in enumerate(result["layers"])]  # fmt: skip
    table(title, columns, rows, left=1)
