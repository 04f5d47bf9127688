"""The settings of ``sdeformer rates`` (THEORY section 5), declared once and torch-free (its ``--help`` imports
no torch); unset, each takes the kind's own value (``measure.DEFAULTS``, ``measure.QUICK``)."""

from __future__ import annotations

from ...params import Param

OPTIONS = (
    Param("runs", int, None, doc="independent coupled runs (>= 2)"),
    Param("x", str, None, doc="comma-separated L, m or N values"),
    Param("dim", int, None, doc="token dimension d"),
    Param("activation", str, None, doc="MLP activation"),
    Param("bias_std", float, None, doc="sU = sW"),
    Param("seed", int, None, doc="root seed"),
)
"""``sdeformer rates``' settings (unset: the kind's own, ``DEFAULTS`` or ``QUICK``)."""
