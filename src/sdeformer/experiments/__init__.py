"""One module per experiment: settings -> a typed result (``results.Result``) with ``to_json()``.

Each check has one ``run_and_write(out, ...)`` that runs it, writes its JSON, .npz and PNG files and returns the
result; the commands (``sdeformer.cli``) and the reproduce report (``reproduce``, ``theorems``) both call it.
"""
