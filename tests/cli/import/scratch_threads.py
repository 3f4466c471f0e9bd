"""plgpu.kernel scratch_types with two Pallas threads: imported as a run_scoped collective over the
thread axis (tests/cli/import_cli_test.cmake; corpus/scratch_shapes.kernel__thread_collective_shared_barrier.json)."""
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body(src, dst, bar):
    @pl.when(lax.axis_index("wg") == 0)
    def _():
      plgpu.copy_gmem_to_smem(src, dst, bar, collective_axes="x")

    plgpu.barrier_wait(bar)

  kernel = plgpu.kernel(body, out_type=(),
                        scratch_types=[plgpu.SMEM((64, 64), jnp.float32), plgpu.Barrier()],
                        cluster=(2,), cluster_names=("x",), num_threads=2, thread_name="wg")
  return kernel, [jnp.full((64, 64), 3, jnp.float32)]
