"""For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_copy_gmem_to_smem_raises_on_mismatched_shapes_partitioned.

A PARTITIONED(0) copy over x (cluster (2,)) of bf16[127] into bf16[8]; the test asserts a
ValueError from jax.jit(kernel).lower(). Difference from the test: it copies from its output ref,
which a case cannot (a copy's source is an input: `collfuzz import` refuses the test's form, naming
the line); here the source is an input of the same shape and dtype (the check reads only the
shape).
"""
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(o_ref, scratch_ref, barrier_ref):
    plgpu.copy_gmem_to_smem(o_ref, scratch_ref, barrier_ref, collective_axes="x",
                            leader_tracked=plgpu.CopyPartition.PARTITIONED(0))
    plgpu.barrier_wait(barrier_ref)

  kernel = plgpu.kernel(
      body,
      out_type=(),
      scratch_types=[plgpu.SMEM((8,), jnp.bfloat16), plgpu.Barrier()],
      cluster=(2,),
      cluster_names=("x",),
  )
  o = jnp.arange(1, 128, dtype=jnp.bfloat16)
  return kernel, [o]
