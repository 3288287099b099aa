#!/usr/bin/env bash
# Installs the Debian packages dfsim needs to build and test, skipping those already present.
# Run as root (it calls apt-get); otherwise it prints the exact command to run.
set -euo pipefail

packages=(
  build-essential cmake pkg-config make
  libsystemc-dev            # SystemC 2.3.4 + TLM: the simulation kernel
  libboost-program-options-dev
  libspdlog-dev libfmt-dev  # logging and formatting
  nlohmann-json3-dev        # JSON for configs, graphs and outputs
  zlib1g-dev                # trace.json.gz
  catch2                    # unit tests (Catch2 v2)
  python3-numpy python3-matplotlib   # tools/: plots (Debian's python3)
  python3-jsonschema        # tests: shipped configs and graphs validate against docs/schemas
  python3-distributed       # dfsim sweep --dask (tools/sweep_dask.py) and its test's scheduler and workers
  python3-torch python3-onnx  # tools/import_torch.py, tools/import_onnx.py (torch.fx, ONNX shape inference) and their tests
  clang libclang-rt-14-dev  # fuzzing (.ci/run): clang with the libFuzzer and sanitizer runtimes
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "dfsim: missing packages: ${missing[*]}" >&2
  echo "run as root: apt-get update && $cmd" >&2
  exit 1
fi

echo "dfsim: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
