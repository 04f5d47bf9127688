"""A modern-prose corpus from an installed package, one sentence per line, for ``sdeformer real --text``
(docs/real.md, "Two corpora"): the prose of the Python reference manual's help topics that every CPython ships
(``pydoc_data.topics``), deterministic. Usage: ``python benchmarks/real_corpus.py OUT.txt [COUNT]``.

A sentence is kept when it has 12-90 words, ends in ``.``, holds no code-like characters (``>>>``, ``::``, ``=``,
``(``, ``[``, ``{``, ``_``, ``*``, `` ` ``) and at least 80 % of its characters are letters or spaces; the kept
sentences are spread evenly over the text (every k-th), at most ``COUNT`` (default 256).
"""

from __future__ import annotations

import pydoc_data.topics as topics
import re
import sys
from pathlib import Path

CODE = re.compile(r">>>|::|[=(\[{_*`]")


def sentences(count: int = 256) -> list[str]:
    text = " ".join(topics.topics[k] for k in sorted(topics.topics))
    text = re.sub(r"\s+", " ", text)
    parts = [p.strip() for p in re.split(r"(?<=\.)\s+(?=[A-Z])", text)]
    kept = [
        p
        for p in parts
        if 12 <= len(p.split()) <= 90
        and p.endswith(".")
        and not CODE.search(p)
        and sum(c.isalpha() or c == " " for c in p) >= 0.8 * len(p)
    ]
    stride = max(1, len(kept) // count)
    return kept[::stride][:count]


if __name__ == "__main__":
    out = Path(sys.argv[1])
    chosen = sentences(int(sys.argv[2]) if len(sys.argv) > 2 else 256)
    out.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    print(f"{len(chosen)} sentences written to {out}")
