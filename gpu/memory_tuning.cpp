#include "gpu/memory_tuning.h"

#include <malloc.h>

namespace collfuzz::gpu {

void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // do not give the heap top back after each batch
  mallopt(M_MMAP_THRESHOLD, 64 << 20);  // large buffers from the heap, not fresh mappings
#endif
}

}  // namespace collfuzz::gpu
