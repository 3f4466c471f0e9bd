// `collfuzz run -`: the case file read from standard input. It goes through the same reader as a
// case file (the same limits and errors), from a private temporary copy; errors name "<stdin>".
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/case.h"

namespace collfuzz::cli {

inline constexpr const char* kStdinName = "<stdin>";

// Reads standard input to its end (refusing more than the case file size limit) and parses it.
Case load_case_from_stdin(nlohmann::json* expect);

}  // namespace collfuzz::cli
