#include "sim/serve/simulated_step_times.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/common/error.h"
#include "sim/common/text_file.h"
#include "sim/gen/step_graph.h"

extern char** environ;

namespace dfsim::serve {

namespace fs = std::filesystem;

Json make_step_graph(const ModelInfo& model, const StepShape& shape, int tp) {
  StepSpec s;
  s.tp = tp;  // dfsim gen --tp: one card's shard with its collectives (compile.cards = tp)
  s.batch = shape.batch;
  s.dtype = model.spec.dtype;
  if (shape.phase == Phase::decode) {
    s.phase = StepPhase::decode;
    s.context = std::max(0, shape.kv_tokens - 1);  // the KV length includes the new token
  } else {
    s.phase = StepPhase::prefill;
    s.tokens = shape.query_tokens;
    s.context = std::max(0, shape.kv_tokens - shape.query_tokens);  // earlier chunks of the prompt
  }
  return Json::parse(generate_step_graph(model.spec, s));
}

SimulatedStepTimes::SimulatedStepTimes(ModelInfo model, const ChipConfig& cfg, int tp, std::string cache_dir,
                                       std::string dfsim_binary, StepGraphBuilder builder)
    : model_(std::move(model)), config_json_(cfg.resolved.dump()), cache_dir_(std::move(cache_dir)),
      binary_(std::move(dfsim_binary)), tp_(tp), cores_(cfg.cores), builder_(std::move(builder)) {
  key_base_ = "dfsim " DFSIM_VERSION "\nmodel\n" + read_text_file(model_.file) + "\nconfig\n" + config_json_ +
              fmt::format("\ntp {}\n", tp_);
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec || !fs::is_directory(cache_dir_)) throw InputError(cache_dir_, "", "cannot create the step cache directory");
  std::ifstream in(cache_file());
  for (std::string line; std::getline(in, line);) {
    // A line cut short by an interrupted run is skipped; the shape is simulated again.
    try {
      Json j = Json::parse(line);
      cache_[j.at("key").get<std::string>()] = j.at("step_ns").get<std::int64_t>();
    } catch (const std::exception&) {
    }
  }
}

std::string SimulatedStepTimes::key_of(const StepShape& shape) const {
  return hash_hex(key_base_ + shape.text());
}

std::int64_t SimulatedStepTimes::step_ns(const StepShape& shape) {
  std::string key = key_of(shape);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    ++hits_;
    return it->second;
  }
  std::int64_t ns = simulate(shape, key);
  cache_[key] = ns;
  std::ofstream out(cache_file(), std::ios::app);
  out << Json{{"key", key}, {"model", model_.name}, {"tp", tp_}, {"phase", phase_name(shape.phase)},
              {"batch", shape.batch}, {"kv_tokens", shape.kv_tokens}, {"query_tokens", shape.query_tokens},
              {"step_ns", ns}, {"dfsim", DFSIM_VERSION}}.dump()
      << "\n";
  if (!out) throw InputError(cache_file(), "", "cannot be written");
  return ns;
}

std::int64_t SimulatedStepTimes::simulate(const StepShape& shape, const std::string& key) {
  Json graph = builder_(model_, shape, tp_);
  std::string dir = cache_dir_ + "/." + key + "." + std::to_string(getpid());
  fs::create_directories(dir);
  std::string graph_file = dir + "/step.json", config_file = dir + "/config.json", log = dir + "/log.txt";
  std::ofstream(graph_file) << graph.dump();
  std::ofstream(config_file) << config_json_;
  std::vector<std::string> args = {binary_, "run", "--workload", graph_file, "--config", config_file,
                                   "--out", dir + "/out", "--set", "sim.trace=false", "--quiet",
                                   "--cores", std::to_string(cores_)};  // the whole card
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, binary_.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  std::string out_log = read_text_file(log);
  std::int64_t ns = -1;
  if (rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    Json s = Json::parse(read_text_file(dir + "/out/summary.json"), nullptr, false);
    if (s.is_object() && s.contains("sim_time_ns")) ns = std::llround(s["sim_time_ns"].get<double>());
  }
  ++children_;
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ns <= 0) {
    while (!out_log.empty() && out_log.back() == '\n') out_log.pop_back();
    throw SimError(fmt::format("simulating the {} step of {} failed: {}", shape.text(), model_.name,
                               out_log.substr(out_log.rfind('\n') == std::string::npos ? 0 : out_log.rfind('\n') + 1)));
  }
  return ns;
}

std::string SimulatedStepTimes::describe() const {
  return fmt::format("simulated by dfsim ({} shapes run, cache {})", children_, cache_file());
}

}  // namespace dfsim::serve
