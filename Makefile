# The two commands of the README. Each installs the Debian packages it needs (as root, non-interactive),
# configures into build/ and builds on all cores.
BUILD_DIR ?= build
JOBS      ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

DEB_PACKAGES := cmake g++ make ccache libhalide14-0-dev nlohmann-json3-dev libgtest-dev \
                libgmock-dev libbenchmark-dev libcli11-dev

.PHONY: all deps configure build test demo clean

all: build

# Installs only what is missing, so a machine that has everything never calls apt-get.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
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

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

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

clean:
	rm -rf $(BUILD_DIR)
