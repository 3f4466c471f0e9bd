"""The kernel of JAX 0.11.2's tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_tma_load_multicast,
for the per-parameter files tma_load_multicast__*.py beside it (`collfuzz import` puts this
directory on the import path).

The test's body as it is written, with its parameters as arguments: a tiled (8, 64) and 128-byte
swizzled f16 SMEM buffer filled by a multicast of x.at[noncollective_idx] over the collective
cluster axes, then each collective CTA stores its 8 rows, smem.at[pl.ds(8 * collective_idx, 8)],
back to out; the test asserts out == x. `self.kernel` becomes plgpu.kernel with PallasCallTest's
Lane lowering semantics, or PallasCallWGTest's Warpgroup ones (the same test, inherited; the
tma_load_multicast_wg__*.py files); its input is the test's np.arange(np.prod(shape), dtype=float16).
"""
import math

import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import numpy as np


def kernel_and_args(collective_dims, noncollective_dims, collective_dim_size,
                    lowering_semantics=plgpu.LoweringSemantics.Lane):
  dtype = jnp.float16
  cluster = [1, 1, 1]
  for d in collective_dims:
    cluster["xyz".index(d)] = collective_dim_size
  for d in noncollective_dims:
    cluster["xyz".index(d)] = 2

  collective_size = math.prod(cluster["xyz".index(d)] for d in collective_dims)
  noncollective_size = math.prod(cluster) // collective_size

  swizzle = 128
  swizzle_elems = swizzle // jnp.dtype(dtype).itemsize
  transforms = (
      plgpu.TilingTransform((8, swizzle_elems)),
      plgpu.SwizzleTransform(swizzle),
  )
  shape = (noncollective_size, collective_size * 8, swizzle_elems)

  def body(x_gmem, out_gmem, smem, tma_barrier):
    # Compute the index in a subset of the cluster.
    def cluster_id(axes):
      idx, stride = 0, 1
      for d in sorted(axes):
        idx += lax.axis_index(d) * stride
        stride *= lax.axis_size(d)
      return idx

    noncollective_idx = cluster_id(noncollective_dims)
    collective_idx = cluster_id(collective_dims)

    plgpu.copy_gmem_to_smem(
        x_gmem.at[noncollective_idx],
        smem,
        tma_barrier,
        collective_axes=collective_dims)
    plgpu.barrier_wait(tma_barrier)

    plgpu.commit_smem()
    collective_slice = pl.ds(8 * collective_idx, 8)
    plgpu.copy_smem_to_gmem(
        smem.at[collective_slice],
        out_gmem.at[noncollective_idx, collective_slice, :],
    )
    plgpu.wait_smem_to_gmem(0)

  x = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
  kernel = plgpu.kernel(
      body,
      grid=cluster,
      grid_names=("grid_x", "grid_y", "grid_z"),
      cluster=cluster,
      cluster_names=("x", "y", "z"),
      out_type=jax.ShapeDtypeStruct(shape, dtype),
      scratch_types=(
          plgpu.SMEM(shape[1:], dtype, transforms=transforms),
          plgpu.Barrier(),
      ),
      compiler_params=plgpu.CompilerParams(lowering_semantics=lowering_semantics),
  )
  return kernel, [x]
