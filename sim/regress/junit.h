#pragma once
// JUnit XML (testsuites / testsuite / testcase / failure | error), the shape Jenkins, GitLab
// and GitHub display. No timestamps or host times: the same results give the same bytes.
#include <string>
#include <vector>

namespace dfsim {

struct JUnitCase {
  explicit JUnitCase(std::string case_name = "") : name(std::move(case_name)) {}
  std::string name;
  enum class Outcome { pass, failure, error } outcome = Outcome::pass;
  std::string message;  // one line (the failure's message attribute)
  std::string detail;   // the failure's text: one line per metric out of tolerance
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

// Writes the suites to `file` (atomically); InputError if the file cannot be written.
void write_junit(const std::string& file, const std::vector<JUnitSuite>& suites);

}  // namespace dfsim
