// A CPU stand-in for the interpreter kernel: it reads a batch image exactly as the kernel reads
// it and writes the results arena exactly as the kernel writes it, executing each cluster with
// the canonical schedule of docs/outcome-format.md (warpgroups in (rank, warpgroup) order, each
// until it blocks). A wait that can never complete is written as a timed-out wait, as the bounded
// wait on the GPU would write it. Tensor maps in the image are TensorMapParams whose
// global_address is a byte offset into the input arena. It tests the encoder, the batch layout
// and the decoder without a GPU, and backs the worker's --emulate mode; it is not hardware.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/batch_image.h"

namespace collfuzz::gpu {

// Status bit only the emulator sets: the case did something it gives no meaning to (an arrival
// on a phase with no pending arrival).
inline constexpr std::uint32_t kStatusEmulatorUndefined = 0x100;

void emulate_batch(const BatchImage& image, const std::vector<std::uint8_t>& inputs,
                   std::vector<std::uint8_t>& results);

}  // namespace collfuzz::gpu
