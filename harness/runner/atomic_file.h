// Writing files so that a reader (or a killed process) never sees half of one: write to a
// temporary file in the same directory, flush and fsync it, then rename it over the target. A
// write that fails leaves the earlier version of the file as it was.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace collfuzz {

// The file system is full (ENOSPC, EDQUOT, EFBIG): nothing more can be saved, so a campaign
// stops instead of retrying.
class DiskFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws DiskFullError when the disk is full, std::runtime_error on another I/O error.
void write_file_atomically(const std::filesystem::path& file, std::string_view contents);

// Throws DiskFullError or std::runtime_error for a failed write of `what` with errno `error`.
[[noreturn]] void throw_write_error(const std::string& what, int error);

// For tests: true while the file named by $COLLFUZZ_FAULT_DISK_FULL exists; every write through
// this file then fails with ENOSPC, as on a full disk.
bool disk_full_injected();

}  // namespace collfuzz
