// Errors that cross module boundaries, and the exit codes the CLI maps them to.
#pragma once

#include <stdexcept>
#include <string>

namespace collfuzz {

// Exit codes of every collfuzz command (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitMismatch = 1;  // a case failed, or a finding was made
inline constexpr int kExitBadInput = 2;  // a malformed case, outcome or flag
inline constexpr int kExitInternal = 3;  // collfuzz itself failed (I/O, an executor's protocol)

// Bad input: `path` is the JSON path of the offending value (e.g. $.program[2].collective_axes[1])
// or a file name; `what()` is "path: message".
class InputError : public std::runtime_error {
 public:
  InputError(std::string path, const std::string& message)
      : std::runtime_error(path + ": " + message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace collfuzz
