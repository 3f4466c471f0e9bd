#!/usr/bin/env python3
"""What Mosaic GPU makes of vector broadcasts along other dims than new leading ones (issue 24).

    JAX_PLATFORMS=cpu .venv-jax/bin/python tools/jax_probe_broadcasts.py
    JAX_PLATFORMS=cpu .venv-jax-0.12.0.1/bin/python tools/jax_probe_broadcasts.py

Lowers (for CUDA, on the CPU: nothing runs) a one-CTA kernel that copies x into an SMEM tile,
waits, and stores each expression below (`v` the tile's value) under Lane and Warpgroup semantics,
and prints "lowered" or the exception, its message and where JAX raised it. The findings are in
docs/case-format.md ("Broadcasts along other dims"): no expectation of a
corpus case is copied from this output.
"""

import traceback

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import mosaic_gpu as plgpu

IOTA = ("plgpu.layout_cast(lax.broadcasted_iota(jnp.float32, (128,), 0), "
        "plgpu.Layout.WG_STRIDED((128,), vec_size=1))")
# (expression, output shape, the tile's shape)
CASES = [
    ("jnp.broadcast_to(v, (2, 128))", (2, 128), (128,)),  # new leading dims: held
    ("jnp.broadcast_to(v[None, :], (2, 128))", (2, 128), (128,)),
    ("jnp.broadcast_to(v[:, None], (128, 4))", (128, 4), (128,)),
    ("lax.broadcast_in_dim(v, (128, 4), (0,))", (128, 4), (128,)),
    ("lax.broadcast_in_dim(v + 1.0, (128, 2), (0,))", (128, 2), (128,)),
    ("lax.broadcast_in_dim(v, (2, 128, 4), (1,))", (2, 128, 4), (128,)),
    ("jnp.broadcast_to(v[:, None, :], (2, 4, 128))", (2, 4, 128), (2, 128)),
    ("jnp.broadcast_to(v[:, :1], (2, 128))", (2, 128), (2, 128)),
    ("lax.broadcast_in_dim(jnp.full((128,), 3.0, jnp.float32), (128, 4), (0,))", (128, 4), (128,)),
    (f"lax.broadcast_in_dim({IOTA}, (128, 4), (0,))", (128, 4), (128,)),
    # a splat along other dims beside a strided value (what a kernel adds a column to)
    ("lax.broadcast_in_dim(jnp.full((128,), 3.0, jnp.float32), (128, 4), (0,)) + v",
     (128, 4), (128, 4)),
    ("lax.broadcast_in_dim(jnp.full((128,), 3.0, jnp.float32), (128, 4), (0,))", (128, 4), (128, 4)),
    ("lax.broadcast_in_dim(jnp.full((2, 128), 3.0, jnp.float32), (2, 3, 128), (0, 2))",
     (2, 3, 128), (2, 3, 128)),
    ("lax.broadcast_in_dim(v, (2, 3, 128), (0, 2))", (2, 3, 128), (2, 128)),
    ("lax.broadcast_in_dim(v, (2, 128, 3), (0, 1))", (2, 128, 3), (2, 128)),
    ("lax.broadcast_in_dim(v.astype(jnp.float16).astype(jnp.float32), (128, 4), (0,))",
     (128, 4), (128,)),
    ("lax.broadcast_in_dim(jnp.broadcast_to(v, (2, 128)), (2, 128, 2), (0, 1))", (2, 128, 2), (128,)),
    # operands of fewer than 128 elements (constants lower under Warpgroup, whatever the count)
    ("lax.broadcast_in_dim(jnp.full((4,), 3.0, jnp.float32), (4, 32), (0,)) + v", (4, 32), (4, 32)),
    ("lax.broadcast_in_dim(jnp.full((2, 4), 3.0, jnp.float32), (2, 4, 16), (0, 1)) + v",
     (2, 4, 16), (2, 4, 16)),
    ("lax.broadcast_in_dim(v[0], (16, 16), (0,)) + v", (16, 16), (16, 16)),
    # size-1 dims along the trailing dims: before the kept dims, and after one
    ("jnp.broadcast_to(v, (2, 128))", (2, 128), (1, 128)),
    ("jnp.broadcast_to(v, (3, 2, 128))", (3, 2, 128), (1, 2, 128)),
    ("jnp.broadcast_to(v, (2, 3, 128))", (2, 3, 128), (2, 1, 128)),
]


def lower(expr: str, out_shape: tuple, tile_shape: tuple, semantics: str) -> str:
  def body(x_ref, o_ref, smem, bar):
    plgpu.copy_gmem_to_smem(x_ref, smem, bar.at[0])
    plgpu.barrier_wait(bar.at[0])
    v = smem[...]  # noqa: F841 (the expressions read it)
    o_ref[...] = eval(expr, {"jnp": jnp, "lax": lax, "plgpu": plgpu, "v": v})  # pylint: disable=eval-used

  params = plgpu.CompilerParams(lowering_semantics=getattr(plgpu.LoweringSemantics, semantics))
  kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct(out_shape, jnp.float32),
                        scratch_types=[plgpu.SMEM(tile_shape, jnp.float32),
                                       plgpu.Barrier(num_barriers=1)],
                        compiler_params=params)
  try:
    jax.jit(kernel).trace(jnp.zeros(tile_shape, jnp.float32)).lower(lowering_platforms=("cuda",))
    return "lowered"
  except Exception as e:  # pylint: disable=broad-except
    last = traceback.extract_tb(e.__traceback__)[-1]
    where = last.filename.split("site-packages/")[-1]
    return f"{type(e).__name__}: {e} ({where}:{last.lineno})"


def main() -> None:
  for semantics in ("Lane", "Warpgroup"):
    for expr, out_shape, tile_shape in CASES:
      print(f"jax {jax.__version__} {semantics}: {expr}\n  -> {lower(expr, out_shape, tile_shape, semantics)}",
            flush=True)


if __name__ == "__main__":
  main()
