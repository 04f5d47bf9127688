"""Practice: the paper's practical suggestions (THEORY section 7) tested on real data.

``data`` (packaged corpora), ``models`` (a small causal character transformer and a small ViT), ``methods``
(baseline, common noise, NEFTune, stochastic depth, energy regulariser), ``tasks`` (what is trained),
``training`` (one seeded run), ``suite`` (resumable multi-seed suites and their statistics),
``probe`` (all-MiniLM-L6-v2 with and without injected noise), ``inference`` (random-batch attention),
``report`` (the results page).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the public names: the one re-export list (lazy_exports loads each on first use)
    from ._claims import claim_record, holm, seeds_to_resolve, verdict, welch
    from ._data import require, shakespeare_text
    from ._inference import (
        causal_random_batch_attention,
        far_positions,
        find_char_model,
        inference_settings,
        kernel_timing,
        run,
    )
    from ._methods import METHODS, get_methods
    from ._networks import NetConfig, ViT, full_attention
    from ._probe import DEFAULT_TEXT, ProbeNoise, load_minilm, probe, probe_settings
    from ._report import Drawing, build, judge, load_records, probe_section
    from ._suite import claim_suite_folder, run_suite, summarize
    from ._tasks import task_config
    from ._training import run_one

__all__, __getattr__, __dir__ = lazy_exports(__name__, __file__)
