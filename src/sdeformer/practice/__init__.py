"""Practice: the paper's practical suggestions (THEORY section 7) tested on real data.

``data`` (packaged corpora), ``models`` (a small causal character transformer and a small ViT), ``methods``
(baseline, common noise, NEFTune, stochastic depth, energy regulariser), ``tasks`` (what is trained),
``training`` (one seeded run), ``suite`` (resumable multi-seed suites and their statistics),
``probe`` (all-MiniLM-L6-v2 with and without injected noise), ``inference`` (random-batch attention),
``report`` (the results page).
"""
