// Large C++ allocations on transparent huge pages: the global operator new asks the kernel
// (madvise MADV_HUGEPAGE) to back every allocation of 4 MiB and more with 2 MiB pages.
//
// Why: expanding a whole-model graph touches gigabytes of fresh memory (the 2048-token
// prefill: 5.3 M task instances, 1.9 GB), and with 4 KiB pages that is about a million page
// faults, each costly on a virtual machine. With huge pages the prefill's load, compile and
// expansion fault about 140 000 times instead of 955 000 and take about a third less time
// (docs/performance.md, "Huge pages for large allocations"); peak memory moves by 0.2 %.
//
// How: a replacement of the allocation functions (allowed by the C++ standard) that calls
// malloc and free as the default ones do, and advises the 2 MiB-aligned inside of large
// blocks. glibc serves such blocks with fresh mmap'd pages, so the advice comes before the
// first touch. Where the kernel does not offer huge pages ("never"), madvise fails and nothing
// changes. Not in sanitizer builds, whose runtime replaces these functions itself.
#include "sim/common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define DFSIM_NO_ALLOCATOR_REPLACEMENT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DFSIM_NO_ALLOCATOR_REPLACEMENT 1
#endif

#ifdef DFSIM_NO_ALLOCATOR_REPLACEMENT
bool dfsim::huge_page_advice_built_in() { return false; }
#else
bool dfsim::huge_page_advice_built_in() { return true; }

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAdviseFrom = 2 * kHugePage;  // holds at least one aligned huge page

// DFSIM_NO_HUGE_PAGES=1 turns the advice off (to compare, or where huge pages misbehave).
bool advise_enabled() noexcept {
  static const bool on = [] {
    const char* e = std::getenv("DFSIM_NO_HUGE_PAGES");
    return e == nullptr || *e == '\0' || *e == '0';
  }();
  return on;
}

void* allocate(std::size_t n) noexcept {
  void* p = std::malloc(n != 0 ? n : 1);
  if (p != nullptr && n >= kAdviseFrom && advise_enabled()) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t lo = (a + kHugePage - 1) & ~(kHugePage - 1), hi = (a + n) & ~(kHugePage - 1);
    if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice only: errors ignored
  }
  return p;
}

// The throwing form: the new-handler loop of the standard's default operator new.
void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = allocate(n)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

}  // namespace

void* operator new(std::size_t n) { return allocate_or_throw(n); }
void* operator new[](std::size_t n) { return allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

#endif  // DFSIM_NO_ALLOCATOR_REPLACEMENT
