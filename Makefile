# Thin wrapper over the CMake presets. Quick start: `make demo`, then `make test`.
PRESET ?= release
JOBS ?= $(shell nproc)
CONFIG ?= configs/spyre.json
WORKLOAD ?=
# The demo: one decode step of Llama-3.1-8B (batch 1, context 2048), its first DEMO_LAYERS
# layers (the whole step takes ~3.5 s of CPU: docs/performance.md). WORKLOAD=FILE runs
# that workload instead.
DEMO_LAYERS ?= 4
DEMO_GRAPH = out/llama-3.1-8b-decode-$(DEMO_LAYERS)l.json

.PHONY: deps configure build demo test bench accuracy asan-test clean

deps:
	@tools/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

demo: build
ifeq ($(WORKLOAD),)
	@echo "demo: one decode step of Llama-3.1-8B, batch 1, context 2048: its first $(DEMO_LAYERS) of 32 layers"
	@mkdir -p out
	@build/$(PRESET)/dfsim gen llama-3.1-8b --phase decode --batch 1 --context 2048 --layers $(DEMO_LAYERS) -q -o $(DEMO_GRAPH)
	@build/$(PRESET)/dfsim run --config $(CONFIG) --workload $(DEMO_GRAPH)
else
	@build/$(PRESET)/dfsim run --config $(CONFIG) --workload $(WORKLOAD)
endif

test: build
	@ctest --preset $(PRESET)

bench: build
	@build/$(PRESET)/tools/dfsim_bench
	@echo
	@build/$(PRESET)/tools/dfsim_bench stream_1gib
	@echo
	@/usr/bin/time -f "serve: 1000 ShareGPT-like requests (~200/200 tokens) on Llama-3.1-8B, step table: %e s host, %M KiB peak RSS" \
	  build/$(PRESET)/dfsim serve -q --model llama-3.1-8b --step-table workloads/serving/llama-3.1-8b_spyre_steps.csv \
	  --rate 0.5 --num-requests 1000 --prompt-len normal:200,100 --output-len normal:200,100 -o out/bench-serve
	@rm -rf out/bench-step-cache
	@/usr/bin/time -f "serve: the same, step times simulated by dfsim, cold cache: %e s host, %M KiB peak RSS" \
	  build/$(PRESET)/dfsim serve -q --model llama-3.1-8b --step-cache out/bench-step-cache \
	  --rate 0.5 --num-requests 1000 --prompt-len normal:200,100 --output-len normal:200,100 -o out/bench-serve-sim
	@/usr/bin/time -f "serve: the same, warm cache: %e s host, %M KiB peak RSS" \
	  build/$(PRESET)/dfsim serve -q --model llama-3.1-8b --step-cache out/bench-step-cache \
	  --rate 0.5 --num-requests 1000 --prompt-len normal:200,100 --output-len normal:200,100 -o out/bench-serve-sim

accuracy: build
	@build/$(PRESET)/dfsim accuracy --config $(CONFIG) --jobs $(JOBS)

asan-test:
	@$(MAKE) --no-print-directory test PRESET=asan

clean:
	rm -rf build out
