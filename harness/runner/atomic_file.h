// Writing files so that a reader (or a killed process) never sees half of one: write to a
// temporary file in the same directory, flush and fsync it, then rename it over the target.
#pragma once

#include <filesystem>
#include <string_view>

namespace collfuzz {

// Throws std::runtime_error on an I/O error.
void write_file_atomically(const std::filesystem::path& file, std::string_view contents);

}  // namespace collfuzz
