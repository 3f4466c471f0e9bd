"""A kernel `collfuzz import` refuses: a loop whose trip count is not static."""
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body():
    def scope(bar):
      def trip(i, carry):
        plgpu.barrier_arrive(bar)
        plgpu.barrier_wait(bar)
        return carry
      lax.fori_loop(0, lax.axis_index("x") + 1, trip, None)  # line 14: a per-CTA trip count

    pl.run_scoped(scope, plgpu.Barrier())

  kernel = plgpu.kernel(body, out_type=(), cluster=(2,), cluster_names=("x",))
  return kernel, []
