"""The suite's bound on a subprocess or a wait: a guard against a hang, never a time limit. It is far above what
any step takes on an idle machine (seconds), because a loaded machine (other CPU-bound processes on every core)
stretches start-up and imports many times over and the suite must pass there too (no test asserts a time)."""

HANG_S = 600  # seconds
