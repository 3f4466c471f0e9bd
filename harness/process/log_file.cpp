#include "harness/process/log_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace collfuzz::process {

LogFile::LogFile(const std::string& dir, const std::string& stem) {
  std::string where = dir;
  if (where.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/collfuzz-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      error_ = "cannot make a private log directory " + pattern + ": " + std::strerror(errno);
      return;
    }
    private_dir_ = buf.data();
    where = private_dir_;
  } else {
    std::error_code ec;
    std::filesystem::create_directories(where, ec);
  }
  const std::string base = where + "/" + stem + "-" + std::to_string(::getpid());
  for (int n = 0; n < 1000 && fd_ < 0; ++n) {
    const std::string candidate = base + (n ? "." + std::to_string(n) : "") + ".log";
    fd_ = ::open(candidate.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600);
    if (fd_ >= 0) {
      path_ = candidate;
    } else if (errno != EEXIST) {
      error_ = "cannot create " + candidate + ": " + std::strerror(errno);
      break;
    }
  }
  if (fd_ < 0 && error_.empty()) error_ = "cannot create a log file " + base + ".log";
  if (fd_ < 0 && !private_dir_.empty()) {
    ::rmdir(private_dir_.c_str());
    private_dir_.clear();
  }
}

LogFile::~LogFile() {
  bool empty = false;
  if (fd_ >= 0) {
    struct stat st {};
    empty = ::fstat(fd_, &st) == 0 && st.st_size == 0;
    ::close(fd_);
  }
  if (!private_dir_.empty()) {
    if (!path_.empty()) ::unlink(path_.c_str());
    ::rmdir(private_dir_.c_str());
  } else if (empty && !path_.empty()) {
    ::unlink(path_.c_str());
  }
}

std::string LogFile::tail(std::size_t bytes) const {
  if (fd_ < 0) return "";
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return "";
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t from = size > bytes ? size - bytes : 0;
  std::string out(size - from, '\0');
  const ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(from));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

}  // namespace collfuzz::process
