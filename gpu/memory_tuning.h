// Heap settings for a process that builds and drops large batches of outcomes (the worker, the
// benchmarks): freed memory stays in the process instead of being returned to the system and
// faulted in again on the next batch.
#pragma once

namespace collfuzz::gpu {

void keep_freed_memory();

}  // namespace collfuzz::gpu
