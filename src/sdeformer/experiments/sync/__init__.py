"""The synchronization check of THEORY section 6 (``check``) and its certified eps, adversarial starts and
resolution floor (``eps``)."""
