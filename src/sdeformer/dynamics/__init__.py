"""Dynamics: the one time loop (``loop``), the discrete model (THEORY section 1), the limit SDE and its solvers
(THEORY section 3), couplings, the mean field as particles (THEORY section 4) and the batched engine."""
