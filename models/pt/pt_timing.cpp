#include "models/pt/pt_timing.h"

#include <algorithm>

namespace dfsim {

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// One dimension of the array (size `pe`) folded over `extent`: `full` folds of `pe`, then
// one partial fold of `rest` (0: none).
struct Folding {
  std::uint64_t full, rest;
  std::uint64_t count() const { return full + (rest ? 1 : 0); }
  std::uint64_t last() const { return rest; }
};
Folding fold(std::uint64_t extent, std::uint64_t pe) { return {extent / pe, extent % pe}; }

// Cycles of every fold of a (rows x cols) folding with stream length T per fold: all but the
// last fold cost max(T, Sr) (the next fold's preload / the previous fold's shift-out overlap the
// stream); the last costs 2 Sr + Sc + T - 2 (its own preload or shift-out, skew and drain).
std::uint64_t folded_cycles(Folding fr, Folding fc, std::uint64_t R, std::uint64_t C, std::uint64_t T) {
  std::uint64_t sr_last = fr.rest ? fr.rest : R, sc_last = fc.rest ? fc.rest : C;
  std::uint64_t total = 0;
  // Sum of max(T, Sr) over all folds, then take the last one back out.
  total += fr.full * fc.count() * std::max(T, R);
  if (fr.rest) total += fc.count() * std::max(T, fr.rest);
  total -= std::max(T, sr_last);
  return total + 2 * sr_last + sc_last + T - 2;
}

// The same folding when no fold overlaps another and a fold streams at most `limit` rows
// before its accumulators drain: each part of ceil(T / limit) costs its own preload or
// shift-out, skew and drain, 2 Sr + Sc - 2, plus its stream.
std::uint64_t unoverlapped_cycles(Folding fr, Folding fc, std::uint64_t R, std::uint64_t C, std::uint64_t T,
                                  std::uint64_t limit) {
  const std::uint64_t parts = ceil_div(T, limit), folds = fr.count() * fc.count();
  const std::uint64_t sum_sr = (fr.full * R + fr.rest) * fc.count(), sum_sc = (fc.full * C + fc.rest) * fr.count();
  return parts * (2 * sum_sr + sum_sc - 2 * folds) + folds * T;
}

std::uint64_t fold_cycles(Folding fr, Folding fc, std::uint64_t R, std::uint64_t C, std::uint64_t T,
                          std::uint64_t limit) {
  return limit ? unoverlapped_cycles(fr, fc, R, C, T, limit) : folded_cycles(fr, fc, R, C, T);
}

}  // namespace

PtCost pt_matmul_cost(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols, int simd,
                      int corelets, Dataflow dataflow, Dtype in, bool broadcast, int fold_stream_limit) {
  PtCost c;
  if (m == 0 || n == 0 || k == 0) return c;
  const std::uint64_t R = static_cast<std::uint64_t>(rows), C = static_cast<std::uint64_t>(cols);
  const std::uint64_t L = static_cast<std::uint64_t>(std::max(corelets, 1));
  const std::uint64_t ks = ceil_div(k, static_cast<std::uint64_t>(std::max(simd, 1)));  // reduction steps
  const std::uint64_t readers = broadcast ? 1 : L;  // LX reads of the operand both corelets stream
  const auto limit = static_cast<std::uint64_t>(std::max(fold_stream_limit, 0));  // 0: folds overlap
  std::uint64_t feed_elems = 0;  // operand elements read from LX
  switch (dataflow) {
    case Dataflow::os: {
      // Corelets split m; both stream the same B columns (broadcast). Each PE holds one fp32
      // accumulator for the whole k: no partial sums leave the array.
      std::uint64_t mc = ceil_div(m, L);
      Folding fr = fold(mc, R), fc = fold(n, C);
      c.cycles = fold_cycles(fr, fc, R, C, ks, limit);
      c.folds = fr.count() * fc.count();
      c.fold_rows = std::min(mc, R);
      c.fold_cols = std::min(n, C);
      // A rows are streamed once per n fold, B columns once per m fold of a corelet.
      feed_elems = m * k * fc.count() + k * n * fr.count() * readers;
      break;
    }
    case Dataflow::ws: {
      // Corelets split n; each holds its own B (weights), both stream the same A rows.
      std::uint64_t nc = ceil_div(n, L);
      Folding fr = fold(ks, R), fc = fold(nc, C);
      c.cycles = fold_cycles(fr, fc, R, C, m, limit);
      c.folds = fr.count() * fc.count();
      c.fold_rows = std::min(ks, R);
      c.fold_cols = std::min(nc, C);
      feed_elems = k * n + m * k * fc.count() * readers;
      c.psum_bytes = (fr.count() - 1) * m * n * 4;
      break;
    }
    case Dataflow::is: {
      // Corelets split m; each holds its own A (inputs), both stream the same B columns.
      std::uint64_t mc = ceil_div(m, L);
      Folding fr = fold(ks, R), fc = fold(mc, C);
      c.cycles = fold_cycles(fr, fc, R, C, n, limit);
      c.folds = fr.count() * fc.count();
      c.fold_rows = std::min(ks, R);
      c.fold_cols = std::min(mc, C);
      feed_elems = m * k + k * n * fc.count() * readers;
      c.psum_bytes = (fr.count() - 1) * m * n * 4;
      break;
    }
  }
  c.feed_bytes = dtype_bytes(in, feed_elems);
  return c;
}

std::uint64_t pt_matmul_cycles(std::uint64_t m, std::uint64_t n, std::uint64_t k, int rows, int cols, int simd,
                               int corelets, Dataflow dataflow, int fold_stream_limit) {
  return pt_matmul_cost(m, n, k, rows, cols, simd, corelets, dataflow, Dtype::fp16, true, fold_stream_limit).cycles;
}

}  // namespace dfsim
