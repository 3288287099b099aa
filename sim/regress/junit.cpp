#include "sim/regress/junit.h"

#include "sim/regress/write_file.h"

namespace dfsim {

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string counts(const std::vector<JUnitCase>& cases) {
  int failures = 0, errors = 0;
  for (const auto& c : cases) {
    failures += c.outcome == JUnitCase::Outcome::failure;
    errors += c.outcome == JUnitCase::Outcome::error;
  }
  return "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"" +
         std::to_string(errors) + "\"";
}

}  // namespace

void write_junit(const std::string& file, const std::vector<JUnitSuite>& suites) {
  std::vector<JUnitCase> all;
  for (const auto& s : suites) all.insert(all.end(), s.cases.begin(), s.cases.end());
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += "<testsuites name=\"dfsim\" " + counts(all) + ">\n";
  for (const auto& s : suites) {
    x += "  <testsuite name=\"" + xml_escape(s.name) + "\" " + counts(s.cases) + " skipped=\"0\">\n";
    for (const auto& c : s.cases) {
      x += "    <testcase classname=\"" + xml_escape(s.name) + "\" name=\"" + xml_escape(c.name) + "\"";
      if (c.outcome == JUnitCase::Outcome::pass) {
        x += "/>\n";
        continue;
      }
      bool failure = c.outcome == JUnitCase::Outcome::failure;
      std::string tag = failure ? "failure" : "error";
      x += ">\n      <" + tag + " message=\"" + xml_escape(c.message) + "\" type=\"" +
           (failure ? "regression" : "error") + "\">" + xml_escape(c.detail) + "</" + tag + ">\n    </testcase>\n";
    }
    x += "  </testsuite>\n";
  }
  x += "</testsuites>\n";
  write_file_atomically(file, x, "--junit");
}

}  // namespace dfsim
