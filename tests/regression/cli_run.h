#pragma once
// The helpers for running the dfsim binary as a user does live in cli_helpers.h.
#include "tests/regression/cli_helpers.h"
