// Outcomes with their bytes outside the JSON: the CUDA worker's binary framing. Every CTA's SMEM
// buffers travel with an outcome, and as hex inside JSON they cost more than running the case;
// framed, a buffer or output is {"alloc"/"name", "blob": [offset, size]} into a byte string that
// follows the JSON line (docs/external-executor-protocol.md, "Binary framing"). No digests are
// computed; the bytes are what the device wrote.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/case.h"
#include "harness/core/outcome.h"

namespace collfuzz::gpu {

// The outcome's JSON with its buffer and output bytes moved to the end of `blob`.
nlohmann::json outcome_to_framed_json(Outcome&& o, std::string& blob);

// The outcome back, its bytes taken from `blob`; throws InputError (path-prefixed) for a malformed
// outcome or a range outside the blob.
Outcome outcome_from_framed_json(nlohmann::json j, const Case& c, const std::string& blob,
                                 const std::string& path);

}  // namespace collfuzz::gpu
