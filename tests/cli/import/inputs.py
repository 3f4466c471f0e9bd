"""A kernel called with the inputs of issue 27's import papercut: each becomes a fill holding
exactly what the kernel was called with (tests/cli/import_cli_test.cmake checks it, element for
element, with tests/cli/import/inputs_check.py). Each input is copied to SMEM and on to an
output, so the reference's predicted outputs show the C++ fills' bytes."""
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

# name -> (the argument, the fill pattern the import must give it)
def arguments():
  return [
      (jnp.arange(128, dtype=jnp.float32), "arange"),                        # 0..127, not iota
      ((jnp.arange(64, dtype=jnp.int32) * 3 - 5).reshape(8, 8), "arange"),   # start -5, step 3
      (jnp.full((4, 32), 7, jnp.int8), "constant"),
      (jax.random.normal(jax.random.key(1), (16, 8), jnp.float32), "values"),
      (jax.random.normal(jax.random.key(2), (4, 32), jnp.bfloat16), "values"),
      (jnp.arange(4096, dtype=jnp.float32).reshape(64, 64), "values"),      # past float32's 2047
      (jnp.arange(32, 0, -1, dtype=jnp.uint8).reshape(2, 16), "arange"),     # a negative step
      # jax.random draws: the recipe that draws them (jax_random), found by import
      (jax.random.uniform(jax.random.split(jax.random.key(3))[1], (8, 64), jnp.float16),
       "jax_random"),
      (jax.random.bits(jax.random.key(5), (4, 128), jnp.uint8), "jax_random"),
  ]

# Past the 65,536 numbers of a values fill and no recipe: iota, with a warning (not copied).
BIG = 70000


def collfuzz_case():
  args = [a for a, _ in arguments()]
  n = len(args)

  def body(*refs):
    ins, outs = refs[:n], refs[n + 1:2 * n + 1]
    smems, bars = refs[2 * n + 1:3 * n + 1], refs[3 * n + 1:]
    for i in range(n):
      plgpu.copy_gmem_to_smem(ins[i], smems[i], bars[i])
      plgpu.barrier_wait(bars[i])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smems[i], outs[i])
    plgpu.wait_smem_to_gmem(0)

  kernel = plgpu.kernel(
      body,
      out_type=[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args],
      scratch_types=[plgpu.SMEM(a.shape, a.dtype) for a in args] + [plgpu.Barrier()] * n)
  big = jax.random.normal(jax.random.key(3), (BIG,), jnp.float32)  # no recipe draws normal
  return kernel, args[:n] + [big]
