"""Input and output: atomic run folders (``store``), progress lines and bars (``progress``) and the
self-contained HTML report (``report``)."""
