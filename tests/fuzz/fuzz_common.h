#pragma once
// Shared by the libFuzzer targets: InputError is the expected outcome of bad input; any other
// exception escapes LLVMFuzzerTestOneInput on purpose, so libFuzzer reports it as a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/common/error.h"
#include "sim/config/chip_config.h"

// SystemC's library main() wants sc_main; the fuzzers never start the SystemC kernel.
extern "C" int sc_main(int, char*[]);

namespace dfsim::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The shipped 32-core config, loaded once.
inline const ChipConfig& spyre() {
  static const ChipConfig cfg = load_chip_config(std::string(DFSIM_SOURCE_DIR) + "/configs/spyre.json");
  return cfg;
}

// Runs `f`; an InputError is fine (bad input rejected cleanly).
template <class F>
void expect_input_errors_only(F&& f) {
  try {
    f();
  } catch (const InputError&) {
  }
}

}  // namespace dfsim::fuzz
