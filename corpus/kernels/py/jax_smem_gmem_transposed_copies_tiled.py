"""For `collfuzz import`: the kernel of JAX's tests/pallas/mosaic_gpu_test.py::
PallasCallTest.test_smem_gmem_transposed_copies with tiling plgpu.TilingTransform((32,)), as the
test writes it: `plgpu.transpose_ref(smem_ref, (1, 0, 2))` on a transformed scratch ref (which has
a memory_space, so the deprecated call works). A float32 (2, 2, 64) SMEM scratch tiled (32,),
seen transposed (1, 0, 2), is loaded from GMEM and stored back through the same view: the output
equals the input (the test's assertion). Lane semantics (the test class's default).
"""
import math

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  shape = (2, 2, 64)

  def kernel(src_ref, dst_ref, smem_ref, barrier_ref):
    smem_ref = plgpu.transpose_ref(smem_ref, (1, 0, 2))
    plgpu.copy_gmem_to_smem(src_ref, smem_ref, barrier_ref)
    plgpu.barrier_wait(barrier_ref)
    plgpu.copy_smem_to_gmem(smem_ref, dst_ref)

  k = plgpu.kernel(
      kernel, out_type=jax.ShapeDtypeStruct(shape, jnp.float32),
      scratch_types=[
          plgpu.SMEM(shape, jnp.float32, transforms=(plgpu.TilingTransform((32,)),)),
          plgpu.Barrier(),
      ],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
  x = jnp.arange(math.prod(shape), dtype=jnp.float32).reshape(shape)
  return k, [x]
