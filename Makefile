# Two commands are the whole set-up: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
EXTRAS ?= test,lab

.PHONY: lab test test-fast demo notebooks clean install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Re-install only when the project's requirements change.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

lab: $(STAMP)  ## open JupyterLab on the first notebook
	$(BIN)/jupyter lab notebooks/00_start_here.ipynb

test: $(STAMP)  ## every test: unit, doctests, notebooks, exercises, browser
	$(BIN)/python -m pytest

test-fast: $(STAMP)  ## unit tests and doctests only
	$(BIN)/python -m pytest -m "not slow and not browser" -q

demo: $(STAMP)  ## the three Lares scenarios in the terminal, offline model
	$(BIN)/lares demo

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
