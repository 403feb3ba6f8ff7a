# The whole set-up: `make demo` and `make test` (each creates .venv on first use).
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first, pinned, so the CPU wheel is taken and no CUDA packages are pulled.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e .
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# the suite on two workers (pytest-xdist), a test file to a worker: module fixtures are built once.
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the suite's
# subprocesses (the CLI, benchmark smokes) each import baco, ~1 CPU s more from source.
TEST_ENV := PYTHONDONTWRITEBYTECODE=

test: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadfile

test-all: $(STAMP)
	$(TEST_ENV) $(PY) -m pytest -q -n 2 --dist loadfile -m "slow or not slow"

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
