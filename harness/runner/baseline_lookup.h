// Where the known-divergence baseline (ci/known-divergences.json, baseline.h) and the known JAX
// bugs (ci/known-jax-bugs.json, known_jax_bugs.h) are found, the same for `fuzz`, `replay` and
// collfuzz_bugfind, from any working directory (issue 27):
//   1. the flag (--baseline FILE), when given;
//   2. $COLLFUZZ_ROOT/ci/known-divergences.json;
//   3. next to the binary: DIR/known-divergences.json, or DIR/../ci/ or DIR/../../ci/ (a build
//      folder inside the source tree: build/release/collfuzz);
//   4. the working directory's ci/known-divergences.json;
//   5. the source tree collfuzz was built from.
// The first that exists is taken; `looked` lists every place tried, for the warning when none is.
#pragma once

#include <string>
#include <vector>

namespace collfuzz {

struct BaselineLocation {
  std::string path;                 // "" when none was found
  std::string from;                 // which of the places above: "--baseline", "COLLFUZZ_ROOT", ...
  std::vector<std::string> looked;  // every path tried, in order
};

// `flag`: the --baseline value ("" when not given). A given flag is taken as is (a missing file
// is then Baseline::load's error, naming it). `exe`: the running binary's path ("" to use
// /proc/self/exe). `source_dir`: the source tree collfuzz was built from ("" for the one compiled
// in; tests pass another).
BaselineLocation find_known_divergences(const std::string& flag, const std::string& exe = "",
                                        const std::string& source_dir = "");

// The same places, for another file of ci/ (known-jax-bugs.json: known_jax_bugs.h); `flag_name`
// is what `from` says when the flag gave it.
BaselineLocation find_ci_file(const std::string& file_name, const std::string& flag,
                              const std::string& flag_name, const std::string& exe = "",
                              const std::string& source_dir = "");

// The line a command prints first: "baseline: PATH (from WHERE)", or a warning that none was
// found, with where it looked and what that means for the run.
std::string baseline_location_line(const BaselineLocation& where);
// The same for the known JAX bugs list: "known JAX bugs: PATH (from WHERE)", or a warning.
std::string known_bugs_location_line(const BaselineLocation& where);

}  // namespace collfuzz
