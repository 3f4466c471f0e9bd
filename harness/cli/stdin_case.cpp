#include "harness/cli/stdin_case.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "harness/core/case_json.h"
#include "harness/core/errors.h"
#include "harness/core/limits.h"

namespace collfuzz::cli {
namespace {

// A private directory (mkdtemp: mode 0700, a fresh name) holding one file; removed with it.
class PrivateTempFile {
 public:
  PrivateTempFile() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "collfuzz-stdin-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = pattern;
  }
  ~PrivateTempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  PrivateTempFile(const PrivateTempFile&) = delete;
  PrivateTempFile& operator=(const PrivateTempFile&) = delete;
  std::filesystem::path file() const { return dir_ / "case.json"; }

 private:
  std::filesystem::path dir_;
};

std::string read_stdin_bounded() {
  std::string data;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(kStdinName, std::string("cannot read: ") + std::strerror(errno));
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > static_cast<std::size_t>(limits::kMaxJsonBytes)) {
      throw InputError(kStdinName, "the input is larger than the limit of " +
                                       std::to_string(limits::kMaxJsonBytes) + " bytes");
    }
  }
  return data;
}

}  // namespace

Case load_case_from_stdin(nlohmann::json* expect) {
  const std::string data = read_stdin_bounded();
  const PrivateTempFile temp;
  {
    const int fd = ::open(temp.file().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error(std::string("open: ") + std::strerror(errno));
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        ::close(fd);
        throw std::runtime_error(std::string("write: ") + std::strerror(e));
      }
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  }
  try {
    return load_case_file(temp.file(), expect);
  } catch (const InputError& e) {
    // The temporary name means nothing to the user: the errors name standard input.
    const std::string name = temp.file().string();
    std::string path = e.path();
    std::string what = e.what();
    if (path.starts_with(name)) path = kStdinName + path.substr(name.size());
    const std::string message = what.substr(std::min(what.size(), e.path().size() + 2));
    throw InputError(path, message);
  }
}

}  // namespace collfuzz::cli
