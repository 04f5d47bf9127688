"""The power table of report part 3 (docs/beyond.md): each theory check of ``check_specs`` at the test or report
size, one JSON line per check record (catch rates at -+10, -+20 % over K seeds, size_80, the right model's false
alarm rate) appended to OUT as each check finishes, and a plain-text line per record on stdout.

    PYTHONPATH=src python scripts/power_table.py OUT [--quick] [--only SUBSTRING ...]
"""

from __future__ import annotations

import argparse
import json
import time

from sdeformer.checks._power import describe
from sdeformer.core._threads import torch_threads
from sdeformer.experiments._beyond.report import check_specs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="*", default=[], help="run the specs whose label contains one of these")
    args = parser.parse_args()
    specs = [s for s in check_specs(args.quick) if not args.only or any(o in s.label for o in args.only)]
    with torch_threads(1), open(args.out, "a") as out:
        for spec in specs:
            start = time.perf_counter()
            for check in spec.run():
                r = check.record() | {"label": spec.label, "wall_s": time.perf_counter() - start}
                out.write(json.dumps(r) + "\n")
                out.flush()
                print(f"{spec.label} {r['setting'].get('tau', '')}: {r['verdict']}; {describe(r)} "
                      f"({r['wall_s']:.0f} s)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
