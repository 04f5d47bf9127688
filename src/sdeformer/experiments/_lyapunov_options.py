"""The settings of ``sdeformer lyapunov`` (THEORY section 2), declared once and torch-free (its ``--help``
imports no torch); ``experiments._lyapunov.lyapunov`` takes its defaults from here."""

from __future__ import annotations

from ..params import Param

OPTIONS = (
    Param("activation", str, None, doc="one activation (default: relu, silu, sigmoid, tanh)"),
    Param("dim", int, None, doc="token dimension d (default: 5 and 64)"),
    Param("bias_std", float, 0.1, doc="sU = sW"),
    Param("runs", int, 32, doc="independent pairs"),
    Param("steps", int, None, doc="time steps (default: max(1000, T |lambda_1| / 0.01))"),
    Param("horizon", float, 10.0, doc="T"),
)
"""Unset activation or d: those of ``_lyapunov.DEFAULT_SETTINGS``."""
DEFAULTS = {p.name: p.default for p in OPTIONS}
