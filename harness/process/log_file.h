// A log file for a child process's stderr, created safely: in `dir` when one is given (a
// campaign's <out>/logs), else in a private directory made with mkdtemp under $TMPDIR (or /tmp);
// opened with O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC (a name that exists, or a planted link, is never
// written through; a taken name gets a numbered suffix). When the object is destroyed, a log in a
// private directory is removed with its directory; a log in `dir` is removed when it is empty.
#pragma once

#include <cstddef>
#include <string>

namespace collfuzz::process {

class LogFile {
 public:
  // `stem`: the file name without ".log" (e.g. the executor's name). A log that cannot be
  // created leaves fd() at -1 (the child's stderr then goes to /dev/null) and says why in error().
  LogFile(const std::string& dir, const std::string& stem);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  const std::string& error() const { return error_; }
  // The last `bytes` bytes written to it.
  std::string tail(std::size_t bytes = 1200) const;

 private:
  std::string private_dir_;  // made by mkdtemp; empty when the log is in a given directory
  std::string path_;
  std::string error_;
  int fd_ = -1;
};

}  // namespace collfuzz::process
