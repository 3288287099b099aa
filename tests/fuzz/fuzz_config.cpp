// libFuzzer target: config parsing and validation. The input is written as a config file next
// to a copy of configs/spyre.json (so "extends": "spyre.json" resolves, and "fuzz.json"
// extending itself is a loop), then loaded with load_chip_config; its first line is also
// tried as a `--set` override on spyre.json.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/fuzz/fuzz_common.h"

int sc_main(int, char*[]) { return 0; }

namespace fs = std::filesystem;

namespace {

const fs::path& work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("dfsim_fuzz_config_" + std::to_string(getpid()));
    fs::create_directories(d);
    fs::copy_file(fs::path(DFSIM_SOURCE_DIR) / "configs" / "spyre.json", d / "spyre.json",
                  fs::copy_options::overwrite_existing);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dfsim;
  std::string text = fuzz::as_text(data, size);
  fs::path file = work_dir() / "fuzz.json";
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << text;
  }
  fuzz::expect_input_errors_only([&] { parse_json_text(text, "fuzz.json"); });
  fuzz::expect_input_errors_only([&] { load_chip_config(file.string()); });
  std::string first_line = text.substr(0, std::min(text.find('\n'), std::size_t{256}));
  fuzz::expect_input_errors_only([&] { load_chip_config((work_dir() / "spyre.json").string(), {first_line}); });
  return 0;
}
