"""One module per experiment: settings -> a typed result (``results.Result``) with ``to_json()``.

Each check has one ``run_and_write(out, ...)`` that runs it, writes its JSON and .npz files and returns the
result; the commands (``sdeformer.cli``) and the reproduce report (``reproduce``, ``theorems``) both call it.
The experiments never draw: ``sdeformer.plots`` draws their results, called by the commands and by
the report's orchestrators (``reproduce`` and the registered run functions of ``steps``, the modules here that
import ``plots``).
"""
