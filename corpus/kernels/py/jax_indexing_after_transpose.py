"""For `collfuzz import`: the kernel of JAX's tests/pallas/mosaic_gpu_test.py::
PallasCallTest.test_indexing_after_transpose, written with the method
`smem_ref.transpose((1, 0, 2, 3))` (plgpu.transpose_ref on an untransformed scratch ref raises
the memory_space ValueError on JAX 0.11.2 and 0.12.0.1). Each of two copies loads the float32
(32, 2, 128) input into `smem_transposed.at[:, i]` (JAX commutes it into `smem.at[i]` with the
identity permutation); the whole (2, 32, 2, 128) scratch is then stored. Lane semantics.
"""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def kernel(x_ref, o_ref, smem_ref, barrier_ref):
    smem_transposed = smem_ref.transpose((1, 0, 2, 3))
    for i in range(2):
      plgpu.copy_gmem_to_smem(x_ref, smem_transposed.at[:, i], barrier_ref)
      plgpu.barrier_wait(barrier_ref)
    plgpu.copy_smem_to_gmem(smem_ref, o_ref)

  k = plgpu.kernel(
      kernel, out_type=jax.ShapeDtypeStruct([2, 32, 2, 128], jnp.float32),
      scratch_types=[plgpu.SMEM([2, 32, 2, 128], jnp.float32), plgpu.Barrier()],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
  x = jnp.arange(32 * 2 * 128, dtype=jnp.float32).reshape(32, 2, 128)
  return k, [x]
