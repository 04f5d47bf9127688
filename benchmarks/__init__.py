"""The benchmarks: our engine beside straightforward baselines and this machine's floor, in one run.

Not in the wheel (a user of the library does not need them): ``python -m benchmarks suite`` and ``make bench``
run ``benchmarks._run.run_benchmarks`` from a checkout, beside the other programs (``python -m
benchmarks``). Parts (each
returns a JSON-able dict, written to ``<out>/<part>.json``):

- ``grid`` (``grid.py``): the paper-scale Figures 2-6 grid (5 MLP choices x 18 panels, N = 64, L = 150,
  m = 2048) with the batched engine (``sweep.run_sweep``), default and conditional sampling, against a
  per-setting plain-PyTorch loop and against the floor ``normals / randn rate + flops / matmul rate`` (rates
  measured in the same run). Per layer and setting the direct MLP draws ``2 m d + m + d`` normals and does
  ``4 N m d`` flops; attention does ``4 N^2 d`` flops.
- ``sde`` (``sde.py``): the limit SDE (N = 256, d = 16, 1000 steps, softmax attention; exact Gaussian field
  and random features M = 1024) with our Euler-Maruyama against torchsde's, unbatched and as a batch of 32,
  per run-step. torchsde gets the common noise written as general noise twice: straightforwardly (``g``
  returns the (N d) x (k d) diffusion matrix, default ``g_prod``) and the expert way (a custom ``g_prod``
  calling our field).
- ``attention`` (``attention.py``): the drift at N = 1k ... 64k, d = 64: plain softmax(QK^T)V (where its N^2
  scores fit), the memory-efficient path, random-batch attention (p = 256): time, extra peak memory, and the
  random-batch error against full attention (and its fall with p).
- ``throughput`` (``attention.py``): the discrete model at N = 16,384 tokens (4,096 with --quick), full vs
  random-batch attention, fp32 vs bf16 MLP.
- ``precision`` (``precision.py``): the effect of bf16 MLP matmuls on the energies of the paper-scale
  d = 64 panels.
- ``rng`` (``rng.py``): normals per second of the counter-based streams (``core._counter``) and of the
  per-generator loop (``core._rng.Streams``) at batch 1 / 32 / 1024 / 8192, against ``torch.randn`` of the same
  count (the floor).

Every part times its contenders interleaved (A B C, B C A, ...) over ``rounds`` (default 3) with one torch
thread unless asked, and reports min / median / max, the ratio of two contenders within each round and the
load average before each round (``timing.interleaved``, ``timing.ratio``): on a shared machine a single
timing moves by 10-80x. ``timing.py`` holds the measuring tools (interleaved rounds, spreads, per-round
ratios, the conditions, peak memory, machine info, sampling and matmul rates). ``sweeps.py`` (run as
``python -m benchmarks sweeps``) times the sweep executors the same way.
Speeds are never tested; correctness of each fast path is (tests/test_attention_fast.py,
tests/test_sampling_shortcut.py, tests/test_perf.py).
"""
