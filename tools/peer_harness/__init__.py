"""The peer-script harness of ``tools/run_peer.py`` (docs/peers.md, "Running the peer's own script"): ``jobs`` (what
runs, per peer), ``process`` (how: verified, announced, time-limited, in its own process group), ``shim`` (the
peer's process)."""
