"""Input and output: the result store, one module per concern (``atomic`` writes, ``checksums``, ``damage``
(damaged files moved aside and recovered), ``formats`` (JSON, CSV, npz read verified), ``hashing``, ``claims`` (run
folders tied to a config), ``cache``, ``lock`` (one writer per folder)), progress lines and bars (``progress``) and
the self-contained HTML report (``report``)."""
