"""For `collfuzz import`: the kernel of JAX 0.11.2's
tests/pallas/mosaic_gpu_test.py::PallasCallTest.test_collective_arrival_count.

A ClusterBarrier over x (cluster (2,)) with num_arrivals=4: every CTA arrives four times, then
waits. Difference from the test: its kernel ends with a vector store of ones into its output
(`dst[...] = ...`), which a case cannot hold (`collfuzz import` refuses the `swap` primitive,
naming its line); the store and the output are left out, so the case states what the rest of the
kernel does: it completes.
"""
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def collfuzz_case():
  def body():
    def scope(collective_barrier):
      for _ in range(4):
        plgpu.barrier_arrive(collective_barrier)
      plgpu.barrier_wait(collective_barrier)

    pl.run_scoped(scope, plgpu.ClusterBarrier(collective_axes=("x",), num_arrivals=4))

  kernel = plgpu.kernel(body, out_type=(), cluster=(2,), cluster_names=("x",))
  return kernel, []
