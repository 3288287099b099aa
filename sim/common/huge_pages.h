#pragma once
// Large C++ allocations on transparent huge pages (huge_pages.cpp).

namespace dfsim {

// Whether this build's operator new advises huge pages for large blocks (not in sanitizer
// builds, whose runtime owns the allocation functions).
bool huge_page_advice_built_in();

}  // namespace dfsim
