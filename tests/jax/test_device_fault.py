"""jax-gpu after a device fault (harness/jax/cfjax_device_fault.py): the faulting case is a crash
with info.cuda_context_lost, and the worker exits after answering, so that the next case runs in a
fresh process instead of failing on the lost CUDA context (seen on the first H200 run: one fault,
then 50 cases failing with "Failed to check stream capturing status").

    .venv-jax/bin/python -m unittest tests/jax/test_device_fault.py
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "harness", "jax")
sys.path.insert(0, ADAPTER)
sys.path.insert(0, HERE)

import cfjax_device_fault  # noqa: E402

# Verbatim from the H200 run's jax-gpu replay (JAX 0.11.2, driver 580.159.04).
SEEN_STICKY = [
    "INTERNAL: CUDA error: Failed to check stream capturing status: CUDA_ERROR_LAUNCH_FAILED: "
    "unspecified launch failure",
    "INTERNAL: unspecified launch failure [executable_name='jit_kernel']",
    "the launch failed: cudaErrorMisalignedAddress: misaligned address",
]
# Mosaic GPU's runtime refusing a launch is a diagnostic the reference predicts, not a fault.
NOT_STICKY = [
    "cuLaunchKernel failed with invalid cluster size (32, 1, 1): maximum is 16",
    "INTERNAL: Pass pipeline failed: 'nvvm.tcgen05.alloc' op requires sm_100a",
    "ValueError: Expected 1 arrivals",
]


class DeviceFaultTest(unittest.TestCase):

  def test_faults_are_recognised(self):
    for m in SEEN_STICKY:
      self.assertTrue(cfjax_device_fault.is_sticky(m), m)
    for m in NOT_STICKY:
      self.assertFalse(cfjax_device_fault.is_sticky(m), m)

  def test_fault_outcome_is_a_crash_that_says_the_context_is_lost(self):
    out = cfjax_device_fault.fault_outcome(RuntimeError(SEEN_STICKY[1] + "\nmore"))
    self.assertEqual(out["kind"], "crash")
    self.assertEqual(out["_info"], {"cuda_context_lost": "true"})
    self.assertIn("unspecified launch failure", out["reason"])
    self.assertNotIn("more", out["reason"])

  def test_context_alive_is_false_when_a_trivial_computation_fails(self):
    class Broken:
      @staticmethod
      def device_put(_):
        raise RuntimeError("CUDA_ERROR_LAUNCH_FAILED")
    self.assertFalse(cfjax_device_fault.context_alive(Broken()))


class GpuModeFaultTest(unittest.TestCase):
  """The executor's gpu path with a kernel that faults when it runs (no GPU needed: the compiled
  kernel is a stand-in that raises as XLA does)."""

  @classmethod
  def setUpClass(cls):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import cfjax_execute  # pylint: disable=import-outside-toplevel
    cls.cfjax_execute = cfjax_execute

  def _executor_whose_kernel_raises(self, message):
    ex = self.cfjax_execute.Executor("lower")
    ex.mode = "gpu"

    class Compiled:
      def __call__(self, *args):
        raise RuntimeError(message)

    class Lowered:
      def compile(self):
        return Compiled()

    class Traced:
      def lower(self, **_):
        return Lowered()

    ex._trace = lambda case, params: (None, Traced(), [])  # pylint: disable=protected-access
    return ex

  def test_a_fault_is_a_crash_and_the_worker_exits(self):
    from test_adapter import mc_case  # pylint: disable=import-outside-toplevel
    ex = self._executor_whose_kernel_raises(SEEN_STICKY[0])
    out = ex.run(mc_case())
    self.assertEqual(out["kind"], "crash", out)
    self.assertEqual(out["info"]["cuda_context_lost"], "true")
    self.assertTrue(ex.exit_after_answer)

  def test_a_launch_refusal_stays_a_diagnostic_and_the_worker_stays(self):
    from test_adapter import mc_case  # pylint: disable=import-outside-toplevel
    ex = self._executor_whose_kernel_raises(NOT_STICKY[0])
    out = ex.run(mc_case())
    self.assertEqual(out["kind"], "rejected", out)
    self.assertFalse(ex.exit_after_answer)

  def test_a_case_for_another_arch_is_not_run(self):
    from test_adapter import mc_case  # pylint: disable=import-outside-toplevel
    ex = self._executor_whose_kernel_raises(SEEN_STICKY[0])
    ex._device_arch_cache = "sm_90a"  # pylint: disable=protected-access
    case = mc_case()
    case["target"]["arch"] = "sm_80"
    out = ex.run(case)
    self.assertEqual(out["kind"], "unavailable", out)
    self.assertIn("targets sm_80; this device is sm_90a", out["reason"])
    self.assertFalse(ex.exit_after_answer)


if __name__ == "__main__":
  unittest.main()
