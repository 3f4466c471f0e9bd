#include "gpu/worker_process.h"

namespace collfuzz::gpu {

WorkerProcess::WorkerProcess(std::vector<std::string> argv, const std::string& log_dir)
    : argv_(std::move(argv)), log_(log_dir, "cuda-worker") {}

bool WorkerProcess::start(std::string& why_not) { return child_.spawn(argv_, log_.fd(), why_not); }

WorkerProcess::Read WorkerProcess::convert(process::ChildProcess::Read r) {
  switch (r) {
    case process::ChildProcess::Read::kLine:
      return Read::kLine;
    case process::ChildProcess::Read::kTimeout:
      return Read::kTimeout;
    default:
      return Read::kEof;
  }
}

WorkerProcess::Read WorkerProcess::read_line(double seconds, std::string& line) {
  return convert(child_.read_line(seconds, kMaxLineBytes, line));
}

WorkerProcess::Read WorkerProcess::read_bytes(std::size_t n, double seconds, std::string& out) {
  return convert(child_.read_bytes(n, seconds, out));
}

}  // namespace collfuzz::gpu
