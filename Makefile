# Thin wrapper over the CMake presets. Quick start: `make demo`, then `make test`.
PRESET ?= release
JOBS ?= $(shell nproc)
CONFIG ?= configs/spyre.json
WORKLOAD ?= workloads/add_2048x1024.json

.PHONY: deps configure build demo test bench accuracy asan-test clean

deps:
	@tools/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
	@build/$(PRESET)/dfsim run --config $(CONFIG) --workload $(WORKLOAD)

test: build
	@ctest --preset $(PRESET)

bench: build
	@build/$(PRESET)/tools/dfsim_bench

accuracy: build
	@build/$(PRESET)/dfsim accuracy --config $(CONFIG) --jobs $(JOBS)

asan-test:
	@$(MAKE) --no-print-directory test PRESET=asan

clean:
	rm -rf build out
