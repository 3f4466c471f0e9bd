"""For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_copy_gmem_to_smem_raises_on_mismatched_shapes_partitioned_composite_index.

Cluster (2,) named by the composite axis ("x", "y"); a PARTITIONED(0) copy over that axis of
bf16[128] into bf16[32]; the test asserts a ValueError from jax.jit(kernel).lower(). Difference
from the test: it copies from its output ref, which a case cannot; here the source is an input of
the same shape and dtype.
"""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(o_ref, scratch_ref, barrier_ref):
    plgpu.copy_gmem_to_smem(o_ref, scratch_ref, barrier_ref, collective_axes=(("x", "y"),),
                            leader_tracked=plgpu.CopyPartition.PARTITIONED(0))
    plgpu.barrier_wait(barrier_ref)

  kernel = plgpu.kernel(
      body,
      out_type=(),
      scratch_types=[plgpu.SMEM((32,), jnp.bfloat16), plgpu.Barrier()],
      cluster=(2,),
      cluster_names=(("x", "y"),),
  )
  o = jnp.arange(1, 129, dtype=jnp.bfloat16)
  return kernel, [o]
