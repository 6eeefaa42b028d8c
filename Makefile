# The two commands of the README. Each installs the Debian packages it needs (as root, non-interactive),
# configures into build/ and builds on all cores.
BUILD_DIR ?= build
JOBS      ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

DEB_PACKAGES := cmake g++ make ccache libhalide14-0-dev nlohmann-json3-dev libsqlite3-dev libgtest-dev \
                libgmock-dev libbenchmark-dev libcli11-dev libjemalloc-dev parallel
# clang-14 with libFuzzer and the sanitizer runtimes, for fuzz, fuzz-ci and sanitize.
CLANG_PACKAGES := clang-14 libclang-rt-14-dev

# fuzz: seconds per harness; fuzz-ci: runs per harness (a fixed amount of work, as CI wants).
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?= 20000
FUZZ_DIR     ?= build-fuzz
ASAN_DIR     ?= build-asan
FUZZERS      := program:program machine_json:machine layout:layout ktir:ktir tuned_schedule:tuned \
                llama_checkpoint:checkpoint

# fuzz-diff: random pipelines x random schedules against the CPU (tests/fuzz_diff). MIN_MATCHED:
# the run fails if fewer cases matched the CPU (a refused case compares nothing). MAX_REFUSAL_RATE:
# it fails if a larger percentage of the valid programs (schedules Halide's CPU runs) was refused;
# MAX_CATEGORY_REFUSAL_RATE: the same in any one category of pipelines.
N    ?= 1000
SEED ?= 1
MIN_MATCHED ?= 0
MAX_REFUSAL_RATE ?= 100
MAX_CATEGORY_REFUSAL_RATE ?= 100

.PHONY: all deps clang-deps install-packages configure build test sweep demo package fuzz fuzz-ci fuzz-build fuzz-diff fuzz-ktir sanitize clean

all: build

# Installs only what is missing, so a machine that has everything never calls apt-get.
deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"

clang-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(CLANG_PACKAGES) cmake make nlohmann-json3-dev"

install-packages:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" -ne 0 ]; then echo "error: missing packages ($$missing) and not root; install them with apt-get" >&2; exit 1; fi; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The whole suite but the rest of the parameter sweeps whose representative cases it runs (label `sweep`).
test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE sweep

# The rest of those sweeps (more odd shapes of every catalogue app x schedule, flash attention,
# mirror-boundary, conv1d, RoPE and shifted-read shapes); CI runs it after `make test`.
sweep: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -L sweep

# The calibration suite (also written to $(BUILD_DIR)/report/calibration.{md,svg,json}), the tour,
# then every generator x schedule through spyre-gen, run against the CPU reference, as tables here
# and in $(BUILD_DIR)/report/ (report.md, <app>.svg, traces/, kernels/).
demo: build
	@rm -rf $(BUILD_DIR)/report
	$(BUILD_DIR)/bin/spyre-calibrate --out $(BUILD_DIR)/report
	@echo
	$(BUILD_DIR)/bin/spyre-tour
	@echo
	$(BUILD_DIR)/bin/spyre-report --out $(BUILD_DIR)/report --spyre-gen $(BUILD_DIR)/bin/spyre-gen

# The Debian package of `cmake --install` (CPack): $(BUILD_DIR)/spyre-halide_<version>_<arch>.deb,
# for `apt install ./spyre-halide_*.deb`.
package: build
	@cd $(BUILD_DIR) && cpack -G DEB > /dev/null && ls -1 $(CURDIR)/$(BUILD_DIR)/spyre-halide_*.deb

# libFuzzer harnesses (tests/fuzz) over the .spyre reader + verifier + simulator, the machine JSON
# reader, the layout code and the KTIR reader + importer, with ASan + UBSan, seeded from hand-built
# programs and KTIR kernels. A finding leaves crash-*/timeout-* files in $(FUZZ_DIR) and fails the
# target.
fuzz-build: clang-deps
	@cmake -S tests/fuzz -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug > /dev/null
	@cmake --build $(FUZZ_DIR) -j $(JOBS)
	@$(FUZZ_DIR)/make_fuzz_seeds $(FUZZ_DIR)/seeds

fuzz: fuzz-build
	@cd $(FUZZ_DIR) && for f in $(FUZZERS); do h=$${f%%:*}; c=$${f##*:}; mkdir -p corpus/$$h; \
	  echo "fuzz_$$h: $(FUZZ_SECONDS) s"; \
	  ./fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	    corpus/$$h seeds/$$c > fuzz_$$h.log 2>&1 || { tail -30 fuzz_$$h.log; exit 1; }; \
	  grep -E "^stat::number_of_executed_units" fuzz_$$h.log; done; echo "fuzzers: 0 findings"

fuzz-ci: fuzz-build
	@cd $(FUZZ_DIR) && for f in $(FUZZERS); do h=$${f%%:*}; c=$${f##*:}; \
	  echo "fuzz_$$h: $(FUZZ_RUNS) runs"; \
	  ./fuzz_$$h -runs=$(FUZZ_RUNS) -seed=1 -timeout=10 -rss_limit_mb=2048 seeds/$$c > fuzz_$$h.log 2>&1 \
	    || { tail -30 fuzz_$$h.log; exit 1; }; done; echo "fuzzers: 0 findings"

# N random pipelines with random Spyre schedules, compiled, simulated and compared with the CPU,
# JOBS at a time; each failure prints its repro command and its pipeline and schedule as C++
# (ctest runs 60 cases with seed 1, .ci/run 400).
fuzz-diff: build
	$(BUILD_DIR)/bin/spyre-fuzz-diff -n $(N) -s $(SEED) -j $(JOBS) --min-matched $(MIN_MATCHED) --max-refusal-rate $(MAX_REFUSAL_RATE) \
	  --max-category-refusal-rate $(MAX_CATEGORY_REFUSAL_RATE)

# N random KTIR kernels imported, simulated and compared with a reference interpreter (ctest: 200).
fuzz-ktir: build
	$(BUILD_DIR)/bin/spyre-ktir-fuzz -n $(N) -s $(SEED)

# The simulator and device tests (everything that reads a .spyre file, a machine file or a
# layout) built with clang's ASan + UBSan and run.
sanitize: clang-deps deps
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" > /dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS) --target device_tests sim_tests
	$(ASAN_DIR)/bin/device_tests --gtest_brief=1
	$(ASAN_DIR)/bin/sim_tests --gtest_brief=1

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) $(ASAN_DIR)
