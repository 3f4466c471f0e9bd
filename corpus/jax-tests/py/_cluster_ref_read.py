"""The kernel of JAX 0.11.2's tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_cluster_ref_read,
for the per-parameter files cluster_ref_read__*.py beside it (`collfuzz import` puts this
directory on the import path).

The test's body as it is written, its parameter `axis_name` an argument: a cluster (2, 1) or
(1, 2) named ("x", "y"). Each CTA copies row lax.axis_index(axis_name) of x (f32[2, 64, 32]) into
a tiled (8, 32) and 128-byte swizzled SMEM buffer (the test's default_transforms for float32),
waits on its barrier, arrives at and waits on a ClusterBarrier over the axis, then stores the
peer CTA's buffer, plgpu.cluster_ref(scratch_ref, {axis_name: 1 - my_idx})[...], into its own row
of the output. The test asserts y == jnp.flip(x, axis=0); the hand-written cases
(../cluster_ref_read__*.json) hold that assertion. `self.kernel` becomes plgpu.kernel with
PallasCallTest's Lane lowering semantics, or PallasCallWGTest's Warpgroup ones (the same test,
inherited: the __wg files); the input is the test's
jnp.arange(2 * 64 * 32, dtype=jnp.float32).reshape(2, 64, 32).
"""
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel_and_args(axis_name, lowering_semantics=plgpu.LoweringSemantics.Lane):
  def kernel(src_ref, dst_ref, scratch_ref, copy_barrier, cluster_barrier):
    my_idx = lax.axis_index(axis_name)
    src_slice = src_ref.at[my_idx]
    plgpu.copy_gmem_to_smem(src_slice, scratch_ref, copy_barrier)
    plgpu.barrier_wait(copy_barrier)
    plgpu.barrier_arrive(cluster_barrier)
    plgpu.barrier_wait(cluster_barrier)
    peer_scratch = plgpu.cluster_ref(scratch_ref, {axis_name: 1 - my_idx})
    dst_ref[my_idx] = peer_scratch[...]

  cluster = (2, 1) if axis_name == "x" else (1, 2)
  transforms = (plgpu.TilingTransform((8, 32)), plgpu.SwizzleTransform(128))
  call = plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((2, 64, 32), jnp.float32),
      scratch_types=[
          plgpu.SMEM((64, 32), jnp.float32, transforms=transforms),
          plgpu.Barrier(),
          plgpu.ClusterBarrier(collective_axes=(axis_name,)),
      ],
      cluster=cluster,
      cluster_names=("x", "y"),
      compiler_params=plgpu.CompilerParams(lowering_semantics=lowering_semantics),
  )
  x = jnp.arange(2 * 64 * 32, dtype=jnp.float32).reshape(2, 64, 32)
  return call, [x]
