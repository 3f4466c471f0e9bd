#include "harness/runner/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace collfuzz {

bool disk_full_injected() {
  const char* flag = std::getenv("COLLFUZZ_FAULT_DISK_FULL");
  if (!flag || !*flag) return false;
  struct stat st {};
  return ::stat(flag, &st) == 0;
}

void throw_write_error(const std::string& what, int error) {
  const std::string message = what + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT || error == EFBIG) throw DiskFullError(message);
  throw std::runtime_error(message);
}

void write_file_atomically(const std::filesystem::path& file, std::string_view contents) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path dir = file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path tmp =
      dir / ("." + file.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
             std::to_string(counter++));
  if (disk_full_injected()) throw_write_error("cannot write " + file.string(), ENOSPC);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_write_error("cannot create " + tmp.string(), errno);
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw_write_error("cannot write " + tmp.string(), err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw_write_error("cannot flush " + tmp.string(), err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_write_error("cannot flush " + tmp.string(), err);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw_write_error("cannot rename " + tmp.string() + " to " + file.string(), err);
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace collfuzz
