// Catch2 entry point. SystemC wants sc_main; it hands over to Catch2.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <systemc>

int sc_main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }

int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // no banner in test output
  return sc_core::sc_elab_and_sim(argc, argv);
}
