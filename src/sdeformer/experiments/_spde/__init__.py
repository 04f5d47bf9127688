"""``sdeformer spde`` and the report's SPDE section (THEORY section 4; docs/spde.md):
one run of the density solver (``run``) and the report's checks in full size (``study``).
"""
