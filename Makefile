# Reshard: `make run` and `make test` each do their own set-up (dependencies,
# configure, build) on a fresh Debian 12 machine.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
# DEPS_FLAGS=--no-python: no Python environment (image builds).
DEPS_FLAGS ?=
# RESHARD_TOOLS (install-deps.sh's tools folder) reaches CMake and ruff too.
TOOLS_FLAG := $(if $(RESHARD_TOOLS),-DRESHARD_TOOLS=$(RESHARD_TOOLS))
RUFF       ?= $(or $(RESHARD_TOOLS),/opt/reshard)/venv/bin/ruff
CMAKE_GEN  := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: deps configure build run test test-asan bench format format-check clean

deps:
	bash scripts/install-deps.sh $(DEPS_FLAGS)

configure: deps
	cmake -S . -B $(BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(TOOLS_FLAG)

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# The main job: the planner service on 127.0.0.1:50051, in the foreground
# (Ctrl-C or SIGTERM drains and exits). Try it from another shell:
#   build/client/reshardctl plan --mesh A=2,B=2,C=2 --flatten A,C --shape 16,16 \
#     --from 'P(sum),R,P(sum)' --to 'R,R,R'
run: build
	$(BUILD)/server/reshard-planner --listen 127.0.0.1:50051

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The C++ suite's `sanitize` label (tests/CMakeLists.txt: the unit and
# property suites and one multi-process suite per component) under
# AddressSanitizer + UndefinedBehaviorSanitizer; the random property tests
# run a fifth of their cases there (sanitized code is several times slower;
# the plain run covers all of them and every other test). Line tables only
# (-g1): a sanitizer's report still names file and line, and the build is a
# fraction of the disk that full debug info takes.
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_GEN) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(TOOLS_FLAG) \
	  -DRESHARD_SANITIZE=ON -DRESHARD_BUILD_BENCH=OFF \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	RESHARD_PROPERTY_CASES_DIVISOR=5 ctest --test-dir $(ASAN_BUILD) \
	  --output-on-failure -j$(JOBS) -L sanitize -LE python

bench: build
	$(BUILD)/bench/planner_bench --benchmark_repetitions=5 \
	  --benchmark_report_aggregates_only=true
	$(BUILD)/bench/optimal_bench --benchmark_repetitions=3 \
	  --benchmark_report_aggregates_only=true --benchmark_min_time=0.1

# C++: clang-format (Google style). Python: ruff (ruff.toml), from the
# project's environment that install-deps.sh makes.
SOURCES    := $(shell git ls-files '*.cc' '*.h')
PY_SOURCES := $(shell git ls-files '*.py')
format:
	clang-format -i $(SOURCES)
	$(RUFF) format $(PY_SOURCES)
format-check:
	clang-format --dry-run --Werror $(SOURCES)
	$(RUFF) format --check $(PY_SOURCES)
	$(RUFF) check $(PY_SOURCES)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
