#include "harness/core/allocator.h"

#include <cstdlib>
#include <string>

// mimalloc's entry points, declared weak: they resolve to null in a process that does not link
// mimalloc (a sanitizer build, the static build, a machine without libmimalloc-dev).
extern "C" {
int mi_version(void) __attribute__((weak));
bool mi_is_in_heap_region(const void* p) __attribute__((weak));
}

namespace collfuzz {

bool mimalloc_in_use() {
  if (mi_version == nullptr || mi_is_in_heap_region == nullptr) return false;
  // Linked is not enough: the C library's allocation functions must be mimalloc's.
  struct Probe {
    void* p = std::calloc(1, 64);  // zeroed: it is passed to a const void* parameter
    ~Probe() { std::free(p); }
  } probe;
  return probe.p != nullptr && mi_is_in_heap_region(probe.p);
}

std::string allocator_name() {
  if (!mimalloc_in_use()) return "system malloc";
  const int v = mi_version();  // major * 100 + minor * 10 + patch
  return "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
         std::to_string(v % 10);
}

}  // namespace collfuzz
