// Meshes (plgpu.Mesh), valid and at JAX's limits: cluster ranks 0 to 4, sizes up to 16 and
// beyond, duplicate, missing, extra and composite cluster names, num_threads 1 to 17, a thread
// name with and without num_threads, grids with and without names.
#pragma once

#include <cstdint>

#include <rapidcheck/Gen.h>

#include "harness/core/case.h"

namespace collfuzz::generators {

// Mistakes and oddities in cluster_names.
enum class NameVariant : std::uint8_t {
  kPlain,
  kReversed,
  kDuplicate,
  kComposite,
  kMissing,
  kExtra
};

// What the thread fields hold.
enum class ThreadVariant : std::uint8_t { kNone, kBoth, kNumOnly, kNameOnly };

enum class GridVariant : std::uint8_t {
  kNone,
  kOne,          // (2,) named g
  kTwo,          // (2, 3) named gx, gy
  kHuge,         // (70000, 1): CUDA y over 65535
  kUnnamed,      // (2,) without names
  kClusterName,  // (2,) named like the first cluster axis
  kFourD,        // (2, 1, 1, 2): squashed into CUDA z
};

// The choices a mesh is built from.
struct MeshChoice {
  Shape cluster;
  std::size_t scheme = 0;  // x y z w, c0 c1 c2 c3, or a b c d
  NameVariant names = NameVariant::kPlain;
  ThreadVariant threads = ThreadVariant::kNone;
  std::int64_t num_threads = 1;
  std::size_t thread_name = 0;  // 0: wg, 1: t, 2: the first cluster name
  GridVariant grid = GridVariant::kNone;
};

// `clean`: drop the choices that make JAX reject the mesh (a case meant to be accepted).
Mesh build_mesh(MeshChoice choice, bool clean);

rc::Gen<MeshChoice> mesh_choice();
rc::Gen<Mesh> mesh();

// The cluster dims (product at most 64, the parser's limit).
rc::Gen<Shape> cluster_dims();

}  // namespace collfuzz::generators
