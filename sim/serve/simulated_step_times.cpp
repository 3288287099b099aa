#include "sim/serve/simulated_step_times.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <exception>
#include <set>

#include "sim/common/child_stop.h"
#include "sim/common/error.h"
#include "sim/common/text_file.h"
#include "sim/app/cli.h"
#include "sim/gen/step_graph.h"

extern char** environ;

namespace dfsim::serve {

namespace fs = std::filesystem;

Json make_step_graph(const ModelInfo& model, const StepShape& shape, int tp, int layers) {
  StepSpec s;
  s.tp = tp;  // dfsim gen --tp: one card's shard with its collectives (compile.cards = tp)
  s.batch = shape.batch;
  s.dtype = model.spec.dtype;
  s.layers = layers;
  if (shape.phase == Phase::decode) {
    s.phase = StepPhase::decode;
    s.context = std::max(0, shape.kv_tokens - 1);  // the KV length includes the new token
  } else {
    s.phase = StepPhase::prefill;
    s.tokens = shape.query_tokens;
    s.context = std::max(0, shape.kv_tokens - shape.query_tokens);  // earlier chunks of the prompt
  }
  // A shape is padded (the query to the chunk, the KV length to its bucket) past the real
  // positions, which --max-model-len keeps within max_position_embeddings: the padding is no
  // position of the model, so gen's check of them is off (it named gen's --tokens, which serve
  // has not, for --max-model-len 16 on a model of 16 positions).
  ModelSpec spec = model.spec;
  spec.max_positions = 0;
  return Json::parse(generate_step_graph(spec, s));
}

SimulatedStepTimes::SimulatedStepTimes(ModelInfo model, const ChipConfig& cfg, int tp, std::string cache_dir,
                                       std::string dfsim_binary, StepSimMode mode, int jobs, StepGraphBuilder builder)
    : model_(std::move(model)), config_json_(cfg.resolved.dump()), config_name_(cfg.name), cache_dir_(std::move(cache_dir)),
      binary_(std::move(dfsim_binary)), tp_(tp), cores_(cfg.cores), mode_(mode), jobs_(std::max(1, jobs)),
      builder_(std::move(builder)) {
  // The binary's own bytes are in the key: a rebuilt dfsim (a compiler or model change under
  // the same version) simulates again rather than reuse times it would no longer give.
  // Hashed once: a key is then the hash of this hash and the run (discovery asks per step).
  key_base_ = hash_hex("dfsim " DFSIM_VERSION " " + hash_hex(read_text_file(binary_)) + "\nmodel\n" +
                       read_text_file(model_.file) + "\nconfig\n" + config_json_ + fmt::format("\ntp {}\n", tp_));
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec || !fs::is_directory(cache_dir_)) throw InputError(cache_dir_, "", "cannot create the step cache directory");
  std::ifstream in(cache_file());
  for (std::string line; std::getline(in, line);) {
    // A line cut short by an interrupted run is skipped; the run is simulated again.
    try {
      Json j = Json::parse(line);
      cache_[j.at("key").get<std::string>()] = {j.at("step_ns").get<std::int64_t>(), j.value("energy_j", -1.0)};
    } catch (const std::exception&) {
    }
  }
}

std::vector<int> SimulatedStepTimes::layer_runs() const {
  if (mode_ == StepSimMode::full || model_.layers <= 2) return {0};
  return {1, 2};
}

std::string SimulatedStepTimes::key_of(const StepShape& shape, int layers) const {
  return hash_hex(fmt::format("{}\n{}\nlayers {}", key_base_, shape.text(), layers));
}

bool SimulatedStepTimes::cached(const StepShape& shape) const {
  for (int l : layer_runs())
    if (!cache_.count(key_of(shape, l))) return false;
  return true;
}

void SimulatedStepTimes::prefetch(const std::vector<StepShape>& shapes) {
  std::vector<Run> missing;
  std::set<std::string> seen;
  for (const auto& s : shapes)
    for (int l : layer_runs()) {
      std::string k = key_of(s, l);
      if (!cache_.count(k) && seen.insert(k).second) missing.push_back({s, l});
    }
  if (!missing.empty()) simulate(missing);
}

StepCost SimulatedStepTimes::cost(const StepShape& shape) {
  prefetch({shape});
  std::vector<int> runs = layer_runs();
  const Result& a = cache_.at(key_of(shape, runs[0]));
  if (runs.size() == 1) return {a.ns, a.energy_j};
  // Layers 2..L cost what the second layer added; the first run holds the embedding, the first
  // layer and the head.
  const Result& b = cache_.at(key_of(shape, runs[1]));
  std::int64_t more = model_.layers - 1;
  StepCost c{a.ns + more * std::max<std::int64_t>(0, b.ns - a.ns)};
  if (a.energy_j >= 0 && b.energy_j >= 0) c.energy_j = a.energy_j + static_cast<double>(more) * std::max(0.0, b.energy_j - a.energy_j);
  return c;
}

void SimulatedStepTimes::remember(const Run& run, const std::string& key, const Result& r) {
  cache_[key] = r;
  std::ofstream out(cache_file(), std::ios::app);
  out << Json{{"key", key}, {"model", model_.name}, {"tp", tp_}, {"phase", phase_name(run.shape.phase)},
              {"batch", run.shape.batch}, {"kv_tokens", run.shape.kv_tokens}, {"query_tokens", run.shape.query_tokens},
              {"layers", run.layers}, {"step_ns", r.ns}, {"energy_j", r.energy_j}, {"dfsim", DFSIM_VERSION}}.dump()
      << "\n";
  if (!out) throw InputError(cache_file(), "", "cannot be written");
}

namespace {

struct Child {             // a running child simulation
  std::size_t run = 0;     // index into the runs
  std::string key, dir;
};

pid_t spawn_quietly(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, a[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// The dfsim gen command line that writes the step graph of `shape` (what a refusal's JSON path
// points into).
std::string gen_command(const std::string& model, const StepShape& shape, int tp, int layers) {
  std::string s = "dfsim gen " + model + " --phase " + phase_name(shape.phase) + fmt::format(" --batch {}", shape.batch);
  if (shape.phase == Phase::decode) s += fmt::format(" --context {}", std::max(0, shape.kv_tokens - 1));
  else s += fmt::format(" --tokens {} --context {}", shape.query_tokens, std::max(0, shape.kv_tokens - shape.query_tokens));
  if (tp > 1) s += fmt::format(" --tp {}", tp);
  if (layers > 0) s += fmt::format(" --layers {}", layers);
  return s;
}

std::string last_line(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

void SimulatedStepTimes::simulate(const std::vector<Run>& runs) {
  std::map<pid_t, Child> running;
  std::string failure;
  bool refused = false;  // the failure is a child's exit 2: the step graph does not compile or fit on this config
  std::exception_ptr launch_error;  // a graph that cannot be built (bad input): rethrown as it is
  std::size_t next = 0;
  // Reaps one child: its result joins the cache, or its last log line becomes the failure.
  auto reap = [&]() {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0 && errno == EINTR) return;  // a signal: the loop below stops the children
    auto it = running.find(pid);
    if (it == running.end()) {
      if (pid < 0) running.clear();  // no children left (should not happen)
      return;
    }
    Child c = std::move(it->second);
    running.erase(it);
    ++children_;
    const Run& run = runs[c.run];
    Result r{-1, -1};
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      Json s = Json::parse(read_text_file(c.dir + "/out/summary.json"), nullptr, false);
      if (s.is_object() && s.contains("sim_time_ns")) r.ns = std::llround(s["sim_time_ns"].get<double>());
      if (s.is_object() && s.contains("energy") && s["energy"].contains("total_j"))
        r.energy_j = s["energy"]["total_j"].get<double>();
    }
    std::string log = read_text_file(c.dir + "/log.txt");
    std::error_code ec;
    fs::remove_all(c.dir, ec);
    if (r.ns > 0) remember(run, c.key, r);
    else if (failure.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 2) {
      // Bad input, not a failed simulation: this model's step does not compile (or fit) on this
      // config. It was exit 1 naming the scratch graph, deleted by then (llama-3.1-8b on
      // configs/small.json: its LM head fits no division of 2 cores).
      std::string why = last_line(log);
      const std::string scratch = c.dir + "/step.json: ";
      if (why.rfind(scratch, 0) == 0) why = why.substr(scratch.size());
      refused = true;
      failure = fmt::format("{} cannot be served on config \"{}\": its {} step ({}) is refused: {}", model_.name,
                            config_name_, run.shape.text(), gen_command(model_arg(), run.shape, tp_, run.layers), why);
    } else if (failure.empty())
      failure = fmt::format("simulating the {} step of {} ({} layers) failed: {}", run.shape.text(), model_.name,
                            run.layers ? std::to_string(run.layers) : "all", last_line(log));
  };
  ChildStopGuard stop;
  while (next < runs.size() || !running.empty()) {
    if (stop.requested()) {  // no more launches; the running children are stopped and reaped
      if (failure.empty()) failure = stop.reason();
      std::vector<pid_t> pids;
      for (const auto& [pid, _] : running) pids.push_back(pid);
      stop.forward(pids);
      next = runs.size();
    }
    if (next < runs.size() && failure.empty() && static_cast<int>(running.size()) < jobs_) {
      const Run& run = runs[next];
      std::string key = key_of(run.shape, run.layers);
      Child c{next++, key, cache_dir_ + "/." + key + "." + std::to_string(getpid())};
      std::string graph;
      try {
        graph = builder_(model_, run.shape, tp_, run.layers).dump();
      } catch (...) {
        launch_error = std::current_exception();
        failure = "-";
        continue;
      }
      fs::create_directories(c.dir);
      std::string graph_file = c.dir + "/step.json", config_file = c.dir + "/config.json";
      std::ofstream(graph_file) << graph;
      std::ofstream(config_file) << config_json_;
      pid_t pid = spawn_quietly({binary_, "run", "--workload", graph_file, "--config", config_file, "--out", c.dir + "/out",
                                 "--set", "sim.trace=false", "--quiet", "--cores", std::to_string(cores_)},  // the whole card
                                c.dir + "/log.txt");
      if (pid < 0) {
        failure = "cannot start " + binary_;
        std::error_code ec;
        fs::remove_all(c.dir, ec);
      } else {
        running.emplace(pid, std::move(c));
      }
      continue;
    }
    if (running.empty()) break;  // a failure stopped the launches and every child is reaped
    reap();
  }
  if (stop.requested()) throw SimError(stop.reason());
  if (launch_error) std::rethrow_exception(launch_error);
  if (refused) throw InputError("--model", "", failure);
  if (!failure.empty()) throw SimError(failure);
}

std::string SimulatedStepTimes::model_arg() const {
  std::error_code ec;
  return fs::equivalent(model_.file, default_models_dir() + "/" + model_.name + ".json", ec) ? model_.name : model_.file;
}

std::string SimulatedStepTimes::method() const {
  return layer_runs().size() == 1 ? "all layers" : "1 and 2 layers, extrapolated";
}

std::string SimulatedStepTimes::describe() const {
  return fmt::format("simulated by dfsim ({}; cache {})", method(), cache_file());
}

}  // namespace dfsim::serve
