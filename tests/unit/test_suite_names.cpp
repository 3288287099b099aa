// The test suite's own hygiene: every test case is one ctest test that runs it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

TEST_CASE("tests: no test case name holds a semicolon (ctest would split it into names that run nothing)") {
  // catch_discover_tests reads the names as a CMake list; tests/CMakeLists.txt also passes
  // --warn NoTests so that such a fragment fails rather than passes.
  const std::vector<Catch::TestCase>& all = Catch::getRegistryHub().getTestCaseRegistry().getAllTests();
  REQUIRE(all.size() > 400);
  for (const Catch::TestCase& t : all) {
    INFO(t.name);
    CHECK(t.name.find(';') == std::string::npos);
  }
}
