#!/usr/bin/env bash
# GPU readiness benchmark (benchmarks/_gpu.py): the engine at N = 64 ... 65,536 tokens and 1 ... 8,192
# runs, float32 and bfloat16, counter RNG against the generator loop, beside the GPU's measured matmul peak and
# copy bandwidth, then issue 42's harmonic attention, observables and MLP field (benchmarks/_gpu_scaling.py).
# Writes OUT/gpu.json and OUT/gpu.md. Sized for < 8 minutes on one H200: 250 s of settings after the peaks and
# 80 s of issue 42's parts (the rest is marked skipped), killed at 470 s. Without CUDA: skipped in one line.
# Extra arguments go to `python -m benchmarks gpu` (--budget-gb, --max-seconds, --scaling-seconds, --device). Python: $PYTHON, else .venv/bin/python, else python3.
# CPU check of this script: benchmarks/gpu.sh OUT --device cpu --tiny (tests/test_gpu_bench.py runs it).
set -euo pipefail
out="${1:?usage: benchmarks/gpu.sh OUT [--device cuda] [--tiny] [--budget-gb G] [--max-seconds S]}"
shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
[ -x "$python" ] || python="$(command -v python3)"
cd "$root"
export PYTHONPATH="$root/src:$root${PYTHONPATH:+:$PYTHONPATH}"
exec timeout 470 "$python" -m benchmarks gpu "$out" --device cuda --max-seconds 250 --scaling-seconds 80 "$@"
