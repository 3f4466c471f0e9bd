// Runs f(i) for i in [0, n) on up to `threads` threads (the calling thread included), in
// contiguous chunks; inline when n is small or one thread is asked for. f must be safe to call
// concurrently for different i. The case pipeline lowers, encodes and decodes cases with it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace collfuzz::gpu {

template <typename F>
void parallel_for(std::size_t n, std::size_t threads, std::size_t min_per_thread, F&& f) {
  const std::size_t workers =
      std::max<std::size_t>(1, std::min(threads, min_per_thread ? n / min_per_thread : n));
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  const std::size_t chunk = (n + workers - 1) / workers;
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  for (std::size_t w = 1; w < workers; ++w) {
    const std::size_t begin = w * chunk;
    const std::size_t end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([&f, begin, end] {
      for (std::size_t i = begin; i < end; ++i) f(i);
    });
  }
  for (std::size_t i = 0; i < std::min(n, chunk); ++i) f(i);
}

}  // namespace collfuzz::gpu
