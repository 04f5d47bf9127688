"""Core mathematics shared by every part: the sphere, randomness, activations, the kernel theory (THEORY
section 2), input validation and the one error type."""
