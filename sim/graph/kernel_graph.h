#pragma once
// In-memory form of a compiled kernel graph ("format": "dfsim.kernels"), as in the file:
// buffers, kernels and task templates (SPMD over a core range, affine per-core slices).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "sim/common/dtype.h"
#include "sim/common/time.h"
#include "sim/graph/id_lists.h"
#include "sim/graph/model_step.h"

namespace dfsim {

// value(core) = alpha * core + beta
struct Affine {
  std::int64_t alpha = 0;
  std::int64_t beta = 0;
  std::int64_t at(int core) const { return alpha * core + beta; }
};

enum class Space { hbm, lx };
enum class UnitKind { pt, sfp, dma, ring, link };

const char* space_name(Space s);
const char* unit_name(UnitKind u);
std::optional<Space> space_from_name(const std::string& s);
std::optional<UnitKind> unit_from_name(const std::string& s);

struct Buffer {
  std::string name;
  Space space = Space::hbm;
  std::uint64_t bytes = 0;      // per instance (LX buffers have one instance per core)
  Dtype dtype = Dtype::fp16;
  bool preloaded = false;       // holds its data before the run (graph inputs, weights)
  // LX: an earlier LX buffer whose space this one takes over on each core: it gets its space
  // only once that one is free there (a coarse-tile loop's iteration reuses the space of the
  // one before). -1: none.
  int after = -1;
  // HBM: stored in the card's stick layout (the compiler's memory.hbm_layout pass rewrote its
  // accesses), so its DMA requests are the card's: the memory port's request rate applies to
  // them under memory.port_request_scope "stick_layout". File key "layout": "stick".
  bool stick_layout = false;
};

// A byte range of one buffer instance read or written by a task.
struct Access {
  int buffer = -1;              // index into KernelGraph::buffers
  Affine offset;                // byte offset per core
  std::uint64_t bytes = 0;      // bytes per row (contiguous run)
  std::uint64_t rows = 1;       // strided pattern: `rows` runs of `bytes`, `stride` apart
  std::uint64_t stride = 0;     // bytes between row starts (0 when rows == 1)
  std::optional<Affine> core;   // LX instance of which core; absent: the task's own core
  std::uint64_t total_bytes() const { return bytes * rows; }
  bool streaming = false;       // a consumer may start once the first chunk has arrived
};

struct Task {
  std::string name;
  UnitKind unit = UnitKind::sfp;
  std::string op;               // dma: load|store|copy; pt: matmul; sfp: a function class
  int first_core = 0;           // SPMD: one instance on each core in [first_core, first_core+core_count)
  int core_count = 1;
  int corelet = -1;             // -1: spread over all corelets of the core
  Dtype dtype = Dtype::fp16;
  std::uint64_t m = 0, n = 0, k = 0;   // pt matmul shape per instance
  std::uint64_t elements = 0;          // sfp elements per instance
  std::vector<Access> reads, writes;
  int kernel = -1;              // index into KernelGraph::kernels
  // Cards that run this task (each runs the same template on its own buffers); empty: every
  // card of the graph. For a collective, the group in ring order.
  std::vector<int> cards;
  std::string algorithm;        // link collectives: "ring" (default) or "tree"
  int root = 0;                 // link broadcast: position in `cards` of the sending card
};

struct Kernel {
  std::string name;
  std::vector<int> tasks;       // indices into KernelGraph::tasks, in file order
};

struct KernelGraph {
  std::string name;
  std::string file;             // where it came from ("" if compiled in memory)
  int cores = 1;                // cores the program uses on each card
  int cards = 1;                // cards the program uses: every task runs on each of its cards
  std::vector<Buffer> buffers;
  std::vector<Task> tasks;
  std::vector<Kernel> kernels;

  std::string description;      // optional free text
  // A step of a whole model (the op graph's "model" object, kept by the compiler): `dfsim run`
  // adds the model report.
  std::optional<ModelStep> model;

  int find_buffer(const std::string& name) const;  // -1 if absent
  int find_task(const std::string& name) const;    // -1 if absent
  // JSON pointer of a task in the file form: /kernels/<k>/tasks/<position in kernel>.
  std::string task_path(int task) const;
  std::size_t instance_count() const;              // sum of instances_of over tasks
  std::size_t instances_of(const Task& t) const;   // core_count x the cards that run it
  // The cards that run task t (its `cards`, or every card of the graph).
  std::vector<int> cards_of(const Task& t) const;
};

// A concrete byte range of one buffer instance: an Access of a task instance.
struct Region {
  int buffer = -1;
  int core = -1;                // LX instance; -1 for HBM
  int card = 0;                 // the card whose buffer instance this is
  std::uint64_t offset = 0, bytes = 0, rows = 1, stride = 0;
  bool streaming = false;
  std::uint64_t total_bytes() const { return bytes * rows; }
};

// One task template instantiated on one core of one card: 12 bytes. Its regions are computed
// when used (reads_of, writes_of), its dependencies are in ExpandedGraph::deps.
struct TaskInstance {
  int task = -1;                // template
  int core = 0;
  int card = 0;
};

// Concrete region of access `a` of a task instance on core `core` of card `card`.
Region instance_region(const KernelGraph& g, const Access& a, int core, int card = 0);

// The concrete regions of one access list (reads or writes) of a task instance, computed
// from its template when read: instances do not store them.
class InstanceRegions {
 public:
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Region;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Region;
    iterator(const InstanceRegions* l, std::size_t i) : l_(l), i_(i) {}
    Region operator*() const { return (*l_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const { return i_ == o.i_; }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const InstanceRegions* l_;
    std::size_t i_;
  };

  InstanceRegions(const KernelGraph& g, const std::vector<Access>& list, int core, int card)
      : g_(&g), list_(&list), core_(core), card_(card) {}
  std::size_t size() const { return list_->size(); }
  bool empty() const { return list_->empty(); }
  Region operator[](std::size_t i) const { return instance_region(*g_, (*list_)[i], core_, card_); }
  Region at(std::size_t i) const { return instance_region(*g_, list_->at(i), core_, card_); }
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }

 private:
  const KernelGraph* g_;
  const std::vector<Access>* list_;
  int core_, card_;
};

// What instance `ti` of graph `g` reads and writes.
InstanceRegions reads_of(const KernelGraph& g, const TaskInstance& ti);
InstanceRegions writes_of(const KernelGraph& g, const TaskInstance& ti);

// A matmul (pt) task's operand precision: the dtype of its first read buffer (A), else its own.
Dtype pt_operand_dtype(const KernelGraph& g, const Task& t);

// The whole program as task instances with data dependencies (a reader depends on every
// writer of an overlapping range of the same buffer instance). Instances are ordered by
// template, then card, then core: that order is the tie-break when several are ready at once.
struct ExpandedGraph {
  std::vector<TaskInstance> instances;
  std::vector<int> first_instance;  // per template: index of its instance on its first core
  IdLists deps;                     // per instance: instances that write what it reads (sorted, unique)
  IdLists consumers;                // per instance: the inverse of deps (sorted, unique)
  // Per instance: released no earlier (a placed workload's start time); empty when all are 0.
  std::vector<Tick> not_before;
  Tick not_before_of(std::size_t i) const { return not_before.empty() ? 0 : not_before[i]; }
};

}  // namespace dfsim
