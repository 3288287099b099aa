// Structural checks of a kernel graph, with the JSON path of the offending field.
#include <fmt/format.h>

#include "models/pcie/collective_schedule.h"
#include "sim/common/error.h"
#include "sim/config/chip_config.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/unit_ops.h"

namespace dfsim {

namespace {

using i128 = __int128;

std::string str(i128 v) {
  char buf[48];
  char* p = buf + sizeof buf;
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  do { *--p = static_cast<char>('0' + static_cast<int>(u % 10)); u /= 10; } while (u > 0);
  if (neg) *--p = '-';
  return std::string(p, buf + sizeof buf);
}

// Checks one access of task `t` at JSON path `path`.
void check_access(const KernelGraph& g, const Task& t, const Access& a, const std::string& path) {
  const Buffer& b = g.buffers.at(a.buffer);
  auto fail = [&](const std::string& sub, const std::string& msg) {
    throw InputError(g.file, path + sub, msg);
  };
  if (a.rows > 1 && a.stride < a.bytes)
    fail("/stride", "stride " + std::to_string(a.stride) + " is smaller than the row bytes " +
                        std::to_string(a.bytes) + " (rows would overlap)");
  if (a.core && b.space == Space::hbm)
    fail("/core", "\"core\" selects an LX instance, but buffer \"" + b.name + "\" is in HBM");
  int cores[2] = {t.first_core, t.first_core + t.core_count - 1};  // affine: extremes suffice
  for (int c : cores) {
    if (a.core) {
      const i128 lc = i128(a.core->alpha) * c + a.core->beta;  // no wrap-around between the extremes
      if (lc < 0 || lc >= g.cores)
        fail("/core", "on core " + std::to_string(c) + " selects core " + str(lc) +
                          ", outside [0, " + std::to_string(g.cores) + ")");
    }
    i128 off = i128(a.offset.alpha) * c + a.offset.beta;
    if (off < 0) fail("/offset", "on core " + std::to_string(c) + " the offset is negative (" + str(off) + ")");
    i128 end = off + i128(a.rows - 1) * a.stride + a.bytes;
    if (end > i128(b.bytes))
      fail("", "on core " + std::to_string(c) + " the access ends at byte " + str(end) +
                   ", beyond the " + std::to_string(b.bytes) + " bytes of buffer \"" + b.name + "\"");
  }
}

Space space_of(const KernelGraph& g, const Access& a) { return g.buffers.at(a.buffer).space; }

// The work of a compute task is bounded by the LX data it touches (at most 2 elements per
// byte, int4), so a hand-written "elements" or "k" cannot ask for hours of simulated time
// (and the host memory to record it) on a few bytes.
void check_work_fits_accesses(const KernelGraph& g, const Task& t, const std::string& path, const std::string& what) {
  i128 bytes = 0;
  for (const auto* list : {&t.reads, &t.writes})
    for (const Access& a : *list) bytes += i128(a.rows) * a.bytes;
  const i128 limit = 2 * bytes;
  auto fail = [&](const std::string& field, const std::string& label, i128 n) {
    throw InputError(g.file, path + "/" + field,
                     label + str(n) + " elements, more than the " + what + "'s LX accesses hold (" + str(bytes) +
                         " B: at most " + str(limit) + " elements)");
  };
  if (t.unit == UnitKind::sfp && i128(t.elements) > limit) fail("elements", "", i128(t.elements));
  if (t.unit == UnitKind::pt) {
    if (i128(t.m) * t.k > limit) fail("k", "m x k = ", i128(t.m) * t.k);
    if (i128(t.k) * t.n > limit) fail("k", "k x n = ", i128(t.k) * t.n);
  }
}

// A PCIe link task: one instance per card, HBM in and out, sizes that fit its collective.
void check_link_rules(const KernelGraph& g, const Task& t, const std::string& path) {
  auto fail = [&](const std::string& msg) { throw InputError(g.file, path, msg); };
  std::string what = "link " + t.op + " task";
  if (t.core_count != 1) fail("a " + what + " runs once per card: give it \"core\", not \"cores\"");
  bool from = t.op == "from_host", to = t.op == "to_host";
  std::size_t nr = from ? 0 : 1, nw = to ? 0 : 1;
  if (t.reads.size() != nr || t.writes.size() != nw)
    fail("a " + what + " needs " + std::to_string(nr) + " read(s) and " + std::to_string(nw) + " write(s)");
  for (std::size_t i = 0; i < t.reads.size() + t.writes.size(); ++i) {
    bool rd = i < t.reads.size();
    const Access& a = rd ? t.reads[i] : t.writes[i - t.reads.size()];
    if (space_of(g, a) != Space::hbm)
      throw InputError(g.file, path + (rd ? "/reads/0" : "/writes/0") + "/buffer",
                       "a " + what + " moves off-chip (HBM) data, but buffer \"" + g.buffers[a.buffer].name + "\" is in LX");
  }
  if (from || to) return;
  auto n = static_cast<std::uint64_t>(g.cards_of(t).size());
  std::uint64_t in = t.reads[0].total_bytes(), out = t.writes[0].total_bytes();
  bool ok = t.op == "all_gather" ? out == n * in : t.op == "reduce_scatter" ? in == n * out : in == out;
  if (!ok)
    fail("a " + what + " over " + std::to_string(n) + " card(s) reads " + std::to_string(in) + " bytes and writes " +
         std::to_string(out) + (t.op == "all_gather" ? " (expected the read x cards)" : t.op == "reduce_scatter" ? " (expected the read / cards)" : " (expected the same)"));
  std::string why = collective_unsupported(t.op, t.algorithm, static_cast<int>(n));
  if (!why.empty()) throw InputError(g.file, path + "/algorithm", why);
  if (t.root >= static_cast<int>(n))
    throw InputError(g.file, path + "/root", "root position " + std::to_string(t.root) + " outside the group of " + std::to_string(n));
}

// Unit-specific shape of a task: which spaces its accesses use, the fields it needs.
void check_unit_rules(const KernelGraph& g, const Task& t, const std::string& path) {
  auto fail = [&](const std::string& msg) { throw InputError(g.file, path, msg); };
  std::string what = std::string(unit_name(t.unit)) + " " + t.op + " task";
  if (t.unit == UnitKind::link) return check_link_rules(g, t, path);
  if (!t.algorithm.empty()) throw InputError(g.file, path + "/algorithm", "only a link collective has an algorithm");
  if (t.unit == UnitKind::pt && (t.m == 0 || t.n == 0 || t.k == 0))
    fail("a pt task needs \"m\", \"n\" and \"k\" (its matmul shape per instance)");
  if (t.unit == UnitKind::sfp && t.elements == 0)
    fail("an sfp task needs \"elements\" (elements processed per instance)");
  if (t.unit == UnitKind::pt || t.unit == UnitKind::sfp) {
    if (t.reads.empty() || t.writes.empty()) fail("a " + what + " needs at least one read and one write");
    for (std::size_t i = 0; i < t.reads.size() + t.writes.size(); ++i) {
      bool rd = i < t.reads.size();
      const Access& a = rd ? t.reads[i] : t.writes[i - t.reads.size()];
      std::string ap = path + (rd ? "/reads/" + std::to_string(i) : "/writes/" + std::to_string(i - t.reads.size()));
      if (space_of(g, a) != Space::lx)
        throw InputError(g.file, ap + "/buffer", "a " + what + " works on LX, but buffer \"" +
                                                     g.buffers[a.buffer].name + "\" is in HBM");
      if (a.core) throw InputError(g.file, ap + "/core", "a " + what + " can only access its own core's LX");
    }
    check_work_fits_accesses(g, t, path, what);
    return;
  }
  // A dma load may multicast: one read delivered to several LX writes (one per destination).
  // A load may also gather several HBM reads, and a store scatter to several HBM writes: one
  // transfer whose off-chip side is a list of regions (the card's stick layout, compiler.md).
  const bool dma = t.unit == UnitKind::dma;
  bool multicast = dma && t.op == "load" && t.writes.size() > 1;
  bool gather = dma && t.op == "load" && t.reads.size() > 1, scatter = dma && t.op == "store" && t.writes.size() > 1;
  if (t.reads.empty() || t.writes.empty() || (t.reads.size() != 1 && !gather) ||
      (t.writes.size() != 1 && !multicast && !scatter))
    fail("a " + what + " needs exactly one read and one write" +
         (dma ? " (only a load may have several writes, a multicast, or several HBM reads, a gather; a store several HBM "
                "writes, a scatter)"
              : ""));
  const std::vector<Access>& off_chip = scatter ? t.writes : t.reads;
  std::uint64_t moved = 0;
  for (std::size_t i = 0; i < off_chip.size(); ++i) {
    if ((gather || scatter) && space_of(g, off_chip[i]) != Space::hbm)
      throw InputError(g.file, path + (scatter ? "/writes/" : "/reads/") + std::to_string(i) + "/buffer",
                       std::string("a ") + (scatter ? "scatter store writes" : "gather load reads") +
                           " HBM regions, but buffer \"" + g.buffers[off_chip[i].buffer].name + "\" is in LX");
    moved += off_chip[i].total_bytes();
  }
  const Access& r = t.reads[0];
  const std::uint64_t each = scatter ? r.total_bytes() : moved;
  for (std::size_t i = 0; i < (scatter ? 1 : t.writes.size()); ++i) {
    const Access& w = t.writes[i];
    const std::uint64_t out = scatter ? moved : w.total_bytes();
    if (each != out)
      throw InputError(g.file, path + "/writes/" + std::to_string(i),
                       "a " + what + " reads " + std::to_string(each) + " bytes but writes " + std::to_string(out));
    if (i > 0 && space_of(g, w) != Space::lx)
      throw InputError(g.file, path + "/writes/" + std::to_string(i) + "/buffer",
                       "a multicast load writes LX, but buffer \"" + g.buffers[w.buffer].name + "\" is in HBM");
  }
  const Access& w = t.writes[0];
  Space rs = space_of(g, r), ws = space_of(g, w);
  if (t.unit == UnitKind::ring) {
    if (rs != Space::lx || ws != Space::lx) fail("a ring copy moves LX to LX");
    if (!r.core && !w.core) fail("a ring copy needs \"core\" on its read or its write (the other core)");
  } else if (t.op == "load" && (rs != Space::hbm || ws != Space::lx)) {
    fail("a dma load reads HBM and writes LX");
  } else if (t.op == "store" && (rs != Space::lx || ws != Space::hbm)) {
    fail("a dma store reads LX and writes HBM");
  }
}

}  // namespace

void check_kernel_graph(const KernelGraph& g) {
  if (g.tasks.empty()) throw InputError(g.file, "/kernels", "the graph has no tasks");
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {  // (the reader checks a file's the same way)
    const int a = g.buffers[i].after;
    if (a >= 0 && (g.buffers[i].space != Space::lx || a >= static_cast<int>(i) ||
                   g.buffers[static_cast<std::size_t>(a)].space != Space::lx))
      throw InputError(g.file, "/buffers/" + std::to_string(i) + "/after",
                       "expected an LX buffer listed before this one, taken over by an LX buffer");
  }
  // Each task's position in its kernel's list, found once: task_path searches the list, which
  // per task would make the check quadratic in a kernel's tasks (a prefill has kernels of
  // tens of thousands).
  std::vector<int> pos(g.tasks.size(), -1);
  for (std::size_t k = 0; k < g.kernels.size(); ++k)
    for (std::size_t p = 0; p < g.kernels[k].tasks.size(); ++p) {
      int ti = g.kernels[k].tasks[p];
      if (ti >= 0 && static_cast<std::size_t>(ti) < pos.size() && g.tasks[ti].kernel == static_cast<int>(k) && pos[ti] < 0)
        pos[ti] = static_cast<int>(p);
    }
  for (std::size_t ti = 0; ti < g.tasks.size(); ++ti) {
    const Task& t = g.tasks[ti];
    std::string path = pos[ti] >= 0 ? "/kernels/" + std::to_string(t.kernel) + "/tasks/" + std::to_string(pos[ti])
                                    : g.task_path(static_cast<int>(ti));
    if (t.first_core < 0 || t.core_count < 1 || t.first_core + t.core_count > g.cores) {
      std::string range = fmt::format("[{}, {})", t.first_core, t.first_core + t.core_count);
      throw InputError(g.file, path + (t.core_count == 1 ? "/core" : "/cores"),
                       "cores " + range + " outside the graph's [0, " + std::to_string(g.cores) + ")");
    }
    for (std::size_t i = 0; i < t.cards.size(); ++i)
      if (t.cards[i] >= g.cards)
        throw InputError(g.file, path + "/cards/" + std::to_string(i),
                         "card " + std::to_string(t.cards[i]) + " outside the graph's " + std::to_string(g.cards) + " card(s)");
    if (!unit_accepts(t.unit, t.op))
      throw InputError(g.file, path + "/op", "unit " + std::string(unit_name(t.unit)) + " has no op \"" + t.op + "\"");
    check_unit_rules(g, t, path);
    for (std::size_t i = 0; i < t.reads.size(); ++i)
      check_access(g, t, t.reads[i], path + "/reads/" + std::to_string(i));
    for (std::size_t i = 0; i < t.writes.size(); ++i)
      check_access(g, t, t.writes[i], path + "/writes/" + std::to_string(i));
  }
}

void check_kernel_graph_fits(const KernelGraph& g, const ChipConfig& config) {
  if (g.cards > config.system.cards)
    throw InputError(g.file, "/cards", "the graph uses " + std::to_string(g.cards) + " cards but the system has " +
                                           std::to_string(config.system.cards) + " (system.cards)");
  if (g.cores > config.cores)
    throw InputError(g.file, "/cores", "the graph uses " + std::to_string(g.cores) +
                                           " cores but the chip has " + std::to_string(config.cores));
  // A precision the PT has 0 ways for is one it does not support (core.pt.simd): its matmuls
  // cannot run there (they ran at one way while the roofline counted a peak of 0).
  for (std::size_t k = 0; k < g.kernels.size(); ++k)
    for (std::size_t i = 0; i < g.kernels[k].tasks.size(); ++i) {
      const Task& t = g.tasks[static_cast<std::size_t>(g.kernels[k].tasks[i])];
      if (t.unit != UnitKind::pt) continue;
      const Dtype in = pt_operand_dtype(g, t);
      if (!config.pt_supports(in))
        throw InputError(config.file, fmt::format("/core/pt/simd/{}", dtype_name(in)),
                         fmt::format("0 ways: the PT does not multiply in {}, which {} does (task \"{}\", /kernels/{}/tasks/{})",
                                     dtype_name(in), g.file.empty() ? std::string("the graph") : g.file, t.name, k, i));
    }
  for (std::size_t i = 0; i < g.buffers.size(); ++i) {
    const Buffer& b = g.buffers[i];
    if (b.space == Space::lx && b.bytes > config.core.lx.usable_bytes)
      throw InputError(g.file, "/buffers/" + std::to_string(i) + "/bytes",
                       "LX buffer \"" + b.name + "\" needs " + std::to_string(b.bytes) +
                           " bytes but only " + std::to_string(config.core.lx.usable_bytes) +
                           " bytes of LX are usable per core");
  }
}

}  // namespace dfsim
