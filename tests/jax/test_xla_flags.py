"""cfjax_xla_flags: every JAX process of collfuzz runs XLA's CPU code without FMA (docs/case-format.md,
"vector_store", Arithmetic), keeping an ISA its caller picked."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "harness", "jax"))

import cfjax_xla_flags  # noqa: E402


class PinCpuIsaTest(unittest.TestCase):

  def test_adds_the_flag_to_empty_or_other_flags(self):
    env = {}
    cfjax_xla_flags.pin_cpu_isa(env)
    self.assertEqual(env["XLA_FLAGS"], "--xla_cpu_max_isa=AVX")
    env = {"XLA_FLAGS": "--xla_dump_to=/tmp/d"}
    cfjax_xla_flags.pin_cpu_isa(env)
    self.assertEqual(env["XLA_FLAGS"], "--xla_dump_to=/tmp/d --xla_cpu_max_isa=AVX")

  def test_keeps_an_isa_the_caller_picked(self):
    env = {"XLA_FLAGS": "--xla_cpu_max_isa=AVX2"}
    cfjax_xla_flags.pin_cpu_isa(env)
    self.assertEqual(env["XLA_FLAGS"], "--xla_cpu_max_isa=AVX2")

  def test_the_adapter_process_runs_with_it(self):
    # A float16 t * t - 1 rounds after each op: t = 1 + 3 * 2^-10, t^2 = 1 + 6 * 2^-10 +
    # 9 * 2^-20 rounds to 1 + 6 * 2^-10 (the grid is 2^-10 there), minus 1 gives 3 * 2^-9. One
    # rounding of the exact 3 * 2^-9 + 9 * 2^-20 (float16's grid is 2^-18 near 3 * 2^-9) gives
    # 3 * 2^-9 + 2^-17: what XLA's fused multiply-subtract gives on a host with AVX512-FP16.
    import subprocess  # pylint: disable=import-outside-toplevel
    code = ("import os, sys; sys.path.insert(0, %r); import cfjax_xla_flags; "
            "cfjax_xla_flags.pin_cpu_isa(); import jax, jax.numpy as jnp, numpy as np; "
            "t = jnp.array([1 + 3 * 2**-10], jnp.float16); c = jnp.array([1.0], jnp.float16); "
            "print(float(jax.jit(lambda t, c: t * t - c)(t, c)[0]))"
            % os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness", "jax"))
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.strip()
    self.assertEqual(float(out), 3 * 2.0**-9)


if __name__ == "__main__":
  unittest.main()
