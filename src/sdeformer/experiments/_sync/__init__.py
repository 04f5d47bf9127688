"""The synchronization check of THEORY section 5 (``check``: its settings, runs and result in ``settings``,
``runs``, ``result``), its certified eps, adversarial starts and resolution floor (``eps``), and where the theorem
applies across the family of BEYOND sections 6-9 (``architecture``: the rule, part by part; ``cells``: the phase
diagram's verdict per cell; BEYOND section 11)."""
