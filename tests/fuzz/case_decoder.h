// Decodes fuzzer bytes into a case: the same choices the RapidCheck generators draw (a mesh
// choice, a target, scopes of copies), read from the bytes, then built by the same
// ProgramBuilder, so that every decoded case is a valid case file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/core/case.h"

namespace collfuzz::fuzz {

Case decode_case(const std::uint8_t* data, std::size_t size);

}  // namespace collfuzz::fuzz
