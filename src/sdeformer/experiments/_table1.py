"""Table 1 of the paper: kernel constants for 24 (activation, d, sigma) settings (THEORY section 6)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..io._formats import write_csv
from ..io._report import Section, Table
from ._kernel_cache import kernel_theory
from ._results import Result

ACTIVATIONS = ("relu", "silu", "sigmoid", "tanh")
DIMS = (5, 64, 128)
SIGMAS = (0.0, 0.1)
CSV_COLUMNS = ["activation", "dim", "sigma", "kappa1", "dkappa1", "lambda1", "lambda_bar"]
# the report's column headers, as in the paper (the CSV keeps the ASCII names)
HEADERS = {
    "activation": "activation",
    "dim": "d",
    "sigma": "σ",
    "kappa1": "κ(1)",
    "dkappa1": "κ'(1)",
    "lambda1": "λ₁",
    "lambda_bar": "λ̄",
    "lambda_bar_prime": "λ̄' (β = 1)",
    "odd_field": "odd field",
    "synchronizes": "synchronizes",
}


def table1_rows(beta: float = 1.0) -> list[dict]:
    """One row per setting (sU = sW = sigma), with the CSV columns plus lambda_bar_prime and verdicts."""
    rows = []
    for act in ACTIVATIONS:
        for d in DIMS:
            for s in SIGMAS:
                k = kernel_theory(act, d, bias_std=s, beta=beta)
                rows.append(
                    {
                        "activation": act,
                        "dim": d,
                        "sigma": s,
                        "kappa1": k.kappa1,
                        "dkappa1": k.dkappa1,
                        "lambda1": k.lambda1,
                        "lambda_bar": k.lambda_bar,
                        "lambda_bar_prime": k.lambda_bar_prime,
                        "odd_field": k.odd_field,
                        "synchronizes": k.synchronizes,
                    }
                )
    return rows


@dataclass(frozen=True)
class Table1Result(Result):
    """The rows of ``table1_rows``."""

    rows: tuple[dict[str, Any], ...]


def run_and_write(out: Path) -> Table1Result:
    """Compute the table and write ``table1.csv`` (the paper's columns)."""
    result = Table1Result(tuple(table1_rows()))
    write_csv(Path(out) / "table1.csv", result.rows, CSV_COLUMNS)
    return result


def section(result: Table1Result) -> Section:
    """The report section of Table 1."""
    cols = CSV_COLUMNS + ["lambda_bar_prime", "odd_field", "synchronizes"]
    return Section(
        "Table 1: kernel constants",
        [
            "κ(1), κ'(1), λ₁ and λ̄ (THEORY section 2) for the paper's 24 settings, "
            "with sU = sW = σ. ReLU uses the arc-cosine closed form, the others 96x96-node Gauss-Hermite "
            "quadrature. λ̄' (β = 1) is the energy-decay rate of the synchronization theorem; "
            "'synchronizes' is the theorem's verdict: the field is not odd and λ̄ < 0. "
            "Written to table1.csv (the paper's columns, ASCII names kappa1, dkappa1, lambda1, lambda_bar).",
        ],
        tables=[Table([HEADERS[c] for c in cols], [[r[c] for c in cols] for r in result.rows], "Table 1 (computed)")],
    )
