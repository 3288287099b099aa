#include "sim/serve/serving_loop.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>

#include "sim/common/error.h"

namespace dfsim::serve {

PrefillLayout prefill_layout(int tokens, int block_size, int chunk) {
  int padded_prompt = (tokens + block_size - 1) / block_size * block_size;
  int padded = (padded_prompt + chunk - 1) / chunk * chunk;
  return {padded - padded_prompt, padded / chunk};
}

namespace {

int ceil_div(std::int64_t a, std::int64_t b) { return static_cast<int>((a + b - 1) / b); }

// One request's progress.
struct Live {
  int cached = 0;       // tokens in the KV cache
  int generated = 0;    // output tokens produced
  int target = 0;       // tokens the current prefill computes (prompt + generated: recompute)
  PrefillLayout layout;
  int chunk = 0;        // prefill chunks done
  int blocks = 0;       // KV blocks held
  int slot = -1;
  Ns slot_start = 0;
  std::int64_t admitted = 0;  // admission order (the latest admitted is preempted first)
  Ns last_token = -1;
};

class Loop {
 public:
  Loop(const std::vector<Request>& reqs, const SchedulerParams& p, const BucketSpec& b, StepTimeProvider& t)
      : reqs_(reqs), p_(p), b_(b), times_(t), live_(reqs.size()), slot_owner_(p.max_num_seqs, -1) {
    res_.requests.resize(reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) res_.requests[i].req = reqs[i];
  }

  ServeResult run() {
    std::size_t n = reqs_.size();
    while (finished_ < n) {
      while (next_ < n && reqs_[next_].arrival <= now_) waiting_.push_back(static_cast<int>(next_++));
      bool must_decode = p_.interleave && last_prefill_ && !running_.empty();
      bool progressed = (!must_decode && prefill_step()) || (!running_.empty() && decode_step());
      if (progressed) continue;
      if (next_ < n) {
        now_ = std::max(now_, reqs_[next_].arrival);
        continue;
      }
      throw SimError(fmt::format("serving stuck at {:.3f} ms: {} waiting, {} decoding, prefill {}, {} of {} KV blocks free",
                                 now_ / 1e6, waiting_.size(), running_.size(), prefilling_ ? "in progress" : "none",
                                 free_blocks(), p_.num_blocks));
    }
    return std::move(res_);
  }

 private:
  std::int64_t free_blocks() const { return p_.num_blocks - used_blocks_; }
  int processed_after(const Live& l, int chunk) const {
    return std::clamp((chunk + 1) * p_.prefill_chunk - l.layout.left_pad, 0, l.target);
  }
  int blocks_for(int tokens) const { return ceil_div(tokens, p_.block_size); }

  // Volumetric admission (plugin docs, "Volumetric constraint"): with `i` joining the decode
  // batch, batch x max tkv stays within the limit at every future step. Decode step k (k >= 1)
  // from now runs the requests with at least k tokens left, each at tkv0 + k; existing requests
  // get one block of slack for padding realignment, as the plugin projects.
  bool volumetric_ok(int i) const {
    struct Proj {
      std::int64_t tkv0, left;
    };
    std::vector<Proj> v;
    for (int r : running_) {
      const Live& l = live_[r];
      v.push_back({l.layout.left_pad + l.cached + p_.block_size, reqs_[r].output_tokens - l.generated});
    }
    const Live& l = live_[i];
    v.push_back({l.layout.left_pad + l.target, reqs_[i].output_tokens - l.generated - 1});
    for (const auto& k : v) {
      std::int64_t batch = 0, max_tkv = 0;
      for (const auto& x : v)
        if (x.left >= k.left) {
          ++batch;
          max_tkv = std::max(max_tkv, x.tkv0);
        }
      if (batch * (max_tkv + k.left) > p_.volumetric_limit) return false;
    }
    return true;
  }

  bool prefill_step() {
    int i;
    bool fresh = !prefilling_;
    Live trial;
    if (fresh) {
      if (waiting_.empty() || static_cast<int>(running_.size()) >= p_.max_num_seqs) return false;
      i = waiting_.front();
      trial = live_[i];
      trial.target = reqs_[i].prompt_tokens + trial.generated;
      trial.layout = prefill_layout(trial.target, p_.block_size, p_.prefill_chunk);
      trial.chunk = 0;
      trial.cached = 0;
    } else {
      i = *prefilling_;
      trial = live_[i];
    }
    bool last = trial.chunk + 1 == trial.layout.chunks;
    bool joins_decode = reqs_[i].output_tokens - trial.generated - 1 > 0;
    if (last && joins_decode) {
      if (static_cast<int>(running_.size()) >= p_.max_num_seqs) return false;
      std::swap(live_[i], trial);
      bool ok = volumetric_ok(i);
      std::swap(live_[i], trial);
      if (!ok) return false;
    }
    int done = processed_after(trial, trial.chunk);
    int need = blocks_for(done) - trial.blocks;
    if (need > free_blocks()) return false;

    Live& l = live_[i];
    if (fresh) {
      l = trial;
      waiting_.pop_front();
      prefilling_ = i;
      l.admitted = ++admissions_;
      take_slot(i);
      if (res_.requests[i].scheduled < 0) res_.requests[i].scheduled = now_;
    }
    StepRecord s;
    int before = processed_after(l, l.chunk - 1);
    s.real_tokens = done - before;
    s.shape = {Phase::prefill, 1, b_.kv_bucket((l.chunk + 1) * p_.prefill_chunk),
               b_.query_bucket(blocks_for(s.real_tokens) * p_.block_size)};
    s.batch = 1;
    s.max_tkv = l.layout.left_pad + done;
    s.request = reqs_[i].id;
    s.chunk = l.chunk + 1;
    s.chunks = l.layout.chunks;
    fill_counts(s);  // counts before the blocks are taken
    l.blocks += need;
    used_blocks_ += need;
    s.blocks_used = used_blocks_;
    run_step(s);
    charge(i, s.energy_j);
    last_prefill_ = true;
    l.chunk += 1;
    l.cached = done;
    if (l.chunk == l.layout.chunks) {
      prefilling_.reset();
      emit_token(i);
      if (l.generated == reqs_[i].output_tokens) finish(i);
      else running_.push_back(i);
    }
    return true;
  }

  bool decode_step() {
    // Blocks for this step's tokens; preempt the latest admitted request until they fit.
    auto needs_block = [&](int r) { return blocks_for(live_[r].cached + 1) > live_[r].blocks; };
    for (;;) {
      std::int64_t need = std::count_if(running_.begin(), running_.end(), needs_block);
      if (need <= free_blocks()) break;
      int victim = running_.back();
      if (prefilling_ && live_[*prefilling_].admitted > live_[victim].admitted) victim = *prefilling_;
      preempt(victim);
      if (running_.empty()) return true;  // state changed; the loop decides again
    }
    StepRecord s;
    fill_counts(s);
    int max_tkv = 0;
    for (int r : running_) {
      Live& l = live_[r];
      if (needs_block(r)) {
        ++l.blocks;
        ++used_blocks_;
      }
      max_tkv = std::max(max_tkv, l.layout.left_pad + l.cached + 1);
    }
    int batch = static_cast<int>(running_.size());
    if (static_cast<std::int64_t>(batch) * max_tkv > p_.volumetric_limit)
      throw std::logic_error(fmt::format("volumetric limit broken: {} x {}", batch, max_tkv));
    s.shape = {Phase::decode, b_.batch_bucket(batch), b_.kv_bucket(max_tkv), 1};
    s.batch = batch;
    s.real_tokens = batch;
    s.max_tkv = max_tkv;
    s.blocks_used = used_blocks_;
    run_step(s);
    for (int r : running_) charge(r, s.energy_j / batch);
    last_prefill_ = false;
    std::vector<int> still;
    for (int r : running_) {
      live_[r].cached += 1;
      emit_token(r);
      if (live_[r].generated == reqs_[r].output_tokens) finish(r);
      else still.push_back(r);
    }
    running_.swap(still);
    return true;
  }

  void fill_counts(StepRecord& s) const {
    s.waiting = static_cast<int>(waiting_.size());
    s.running = static_cast<int>(running_.size());
    s.in_system = s.waiting + s.running + (prefilling_ ? 1 : 0);
  }

  void run_step(StepRecord& s) {
    StepCost c = times_.cost(s.shape);
    if (c.ns <= 0) throw std::logic_error("a step time must be > 0");
    s.start = now_;
    now_ += c.ns;
    s.energy_j = c.energy_j;
    if (!c.has_energy()) res_.energy = false;
    s.end = now_;
    res_.steps.push_back(s);
  }

  void charge(int i, double j) {
    if (j > 0) res_.requests[i].energy_j += j;
  }

  void emit_token(int i) {
    Live& l = live_[i];
    l.generated += 1;
    if (res_.requests[i].first_token < 0) res_.requests[i].first_token = now_;
    else res_.itl.push_back(now_ - l.last_token);
    l.last_token = now_;
  }

  void take_slot(int i) {
    auto it = std::find(slot_owner_.begin(), slot_owner_.end(), -1);
    if (it == slot_owner_.end()) throw std::logic_error("no free batch slot");
    *it = i;
    live_[i].slot = static_cast<int>(it - slot_owner_.begin());
    live_[i].slot_start = now_;
  }

  void release(int i, bool preempted) {
    Live& l = live_[i];
    used_blocks_ -= l.blocks;
    l.blocks = 0;
    res_.slots.push_back({l.slot, reqs_[i].id, l.slot_start, now_, preempted});
    slot_owner_[l.slot] = -1;
    l.slot = -1;
  }

  void finish(int i) {
    release(i, false);
    res_.requests[i].finish = now_;
    ++finished_;
  }

  void preempt(int i) {
    release(i, true);
    Live& l = live_[i];
    l.cached = 0;
    l.chunk = 0;
    ++res_.requests[i].preemptions;
    ++res_.preemptions;
    if (prefilling_ && *prefilling_ == i) prefilling_.reset();
    else running_.erase(std::find(running_.begin(), running_.end(), i));
    waiting_.push_front(i);
  }

  const std::vector<Request>& reqs_;
  const SchedulerParams& p_;
  const BucketSpec& b_;
  StepTimeProvider& times_;
  std::vector<Live> live_;
  std::vector<int> slot_owner_;
  std::deque<int> waiting_;
  std::vector<int> running_;  // decoding, in admission order
  std::optional<int> prefilling_;
  std::int64_t used_blocks_ = 0, admissions_ = 0;
  std::size_t next_ = 0, finished_ = 0;
  Ns now_ = 0;
  bool last_prefill_ = false;
  ServeResult res_;
};

}  // namespace

ServeResult run_serving(const std::vector<Request>& requests, const SchedulerParams& p, const BucketSpec& b,
                        StepTimeProvider& times) {
  return Loop(requests, p, b, times).run();
}

}  // namespace dfsim::serve
