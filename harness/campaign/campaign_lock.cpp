#include "harness/campaign/campaign_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <utility>

#include "harness/core/errors.h"

namespace collfuzz::campaign {
namespace {

int open_lock_file(const std::filesystem::path& out, bool create) {
  const auto file = CampaignLock::file(out);
  const int fd =
      ::open(file.c_str(), (create ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && (create || errno != ENOENT))
    throw std::runtime_error("cannot open " + file.string() + ": " + std::strerror(errno));
  return fd;
}

[[noreturn]] void throw_held(const std::filesystem::path& out, int fd) {
  char buf[512] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string holder = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\r')) holder.pop_back();
  for (char& ch : holder) {
    if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
  }
  ::close(fd);
  throw InputError("--out", out.string() + " is in use by another campaign (" +
                                (holder.empty() ? "holder unknown" : holder) +
                                "; its worker processes may outlive it by a moment): wait for "
                                "it to end, or choose another --out");
}

}  // namespace

CampaignLock::CampaignLock(const std::filesystem::path& out) {
  std::filesystem::create_directories(out);
  fd_ = open_lock_file(out, true);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw_held(out, std::exchange(fd_, -1));
    const std::string err = std::strerror(errno);
    ::close(std::exchange(fd_, -1));
    throw std::runtime_error("cannot lock " + file(out).string() + ": " + err);
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[64] = {};
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string holder =
      "pid " + std::to_string(::getpid()) + " on host " + host + ", started " + when + "\n";
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const auto n = ::pwrite(fd_, holder.data(), holder.size(), 0);
  }
}

CampaignLock::~CampaignLock() {
  // Closing (not LOCK_UN): processes that inherited the descriptor keep the lock until they end.
  if (fd_ >= 0) ::close(fd_);
}

void CampaignLock::check_free(const std::filesystem::path& out) {
  const int fd = open_lock_file(out, false);
  if (fd < 0) return;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw_held(out, fd);
  }
  ::close(fd);
}

}  // namespace collfuzz::campaign
