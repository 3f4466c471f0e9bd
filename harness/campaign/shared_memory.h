// An object in memory shared with forked child processes (an anonymous MAP_SHARED mapping), so
// that a worker's counters survive the worker and the supervisor can read them while it runs.
// T must be trivially copyable; it is value-initialised.
#pragma once

#include <sys/mman.h>

#include <new>
#include <stdexcept>
#include <type_traits>

namespace collfuzz::campaign {

template <typename T>
class SharedMemory {
  static_assert(std::is_trivially_destructible_v<T>, "shared objects are never destroyed");

 public:
  SharedMemory() {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map shared memory");
    object_ = new (p) T{};
  }
  ~SharedMemory() { ::munmap(object_, sizeof(T)); }
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  T& operator*() const { return *object_; }
  T* operator->() const { return object_; }

 private:
  T* object_;
};

}  // namespace collfuzz::campaign
