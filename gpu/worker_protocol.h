// The CUDA worker's side of the external-executor protocol (collfuzz-executor/1,
// docs/external-executor-protocol.md), with its batch extension: a request
// {"id": n, "cases": [case, ...]} is answered by {"id": n, "outcomes": [outcome, ...]}, one
// outcome per case in order; {"id": n, "case": case} is answered as in the base protocol. The
// hello says "batch": true. A request with "binary": true is answered with its outcomes' bytes
// framed (gpu/framed_outcome.h): the line carries "binary_bytes": N and N raw bytes follow it.
// Independent of the device, so that tests drive it with a fake.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

inline constexpr const char* kProtocol = "collfuzz-executor/1";

struct WorkerHello {
  std::string name = "cuda";
  std::string unavailable;  // non-empty: every case is answered `unavailable` with this
  std::map<std::string, std::string> info;
};

using RunCases = std::function<std::vector<Outcome>(const std::vector<Case>&)>;

std::string hello_line(const WorkerHello& hello);

struct WorkerResponse {
  std::string line;  // no newline; empty for a blank request line
  std::string blob;  // written right after the line's newline (binary framing only)
};

WorkerResponse handle_request(const std::string& line, const WorkerHello& hello,
                              const RunCases& run);

}  // namespace collfuzz::gpu
