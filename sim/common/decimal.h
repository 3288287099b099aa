#pragma once
// Numbers in the text inputs (CSV cells, command-line lists) read as plain decimals.
#include <string>

namespace dfsim {

// Reads `s` whole as a decimal number ("12", "-3.5", "1e-3", "+5") into `v`. False for anything
// else, including what strtod alone takes: hex ("0x10", "0x1p3"), "inf", "nan", surrounding
// spaces, and an empty string.
bool parse_decimal(const std::string& s, double& v);  // (a finite one: 1e400 is refused)

}  // namespace dfsim
