"""Device faults of jax-gpu: a kernel that faults on the GPU poisons the CUDA context.

After a device-side fault (an unspecified launch failure, a misaligned or illegal address, a trap)
the CUDA context of the process is lost: every later launch in the same process fails too, with
"Failed to check stream capturing status" or "unspecified launch failure", whatever its kernel.
The first GPU run (docs/cuda-executor.md, "First run on an H200") saw one faulting case fail the 50
cases after it in its process. So a case whose run faults is answered as a `crash` with
info.cuda_context_lost, and the worker exits after answering (the harness starts a fresh process
for the next case, as the cuda executor's worker does).
"""

from __future__ import annotations

# Substrings of the errors that CUDA reports for a device-side fault or a context it lost after
# one (cudaGetErrorString / cuGetErrorString texts, and XLA's wrapping of them).
STICKY_MARKERS = (
    "unspecified launch failure",
    "misaligned address",
    "an illegal memory access",
    "illegal address",
    "an illegal instruction",
    "illegal instruction",
    "hardware stack error",
    "device-side assert",
    "Failed to check stream capturing status",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ASSERT",
    "cudaErrorLaunchFailure",
    "cudaErrorIllegalAddress",
    "cudaErrorMisalignedAddress",
)


def is_sticky(message: str) -> bool:
  """Whether an error's text is a device fault (or the lost context one leaves behind)."""
  return any(m in message for m in STICKY_MARKERS)


def context_alive(jax) -> bool:
  """Whether the process can still run a trivial computation on the GPU."""
  try:
    x = jax.device_put(1.0)
    return float((x + 1.0).block_until_ready()) == 2.0
  except Exception:  # pylint: disable=broad-except
    return False


def fault_outcome(exc: BaseException) -> dict:
  """The outcome of a case whose run faulted on the device."""
  first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
  return {"kind": "crash",
          "reason": f"device fault while the kernel ran: {type(exc).__name__}: {first[:500]} "
                    "(the CUDA context is lost; the worker restarts for the next case)",
          "_info": {"cuda_context_lost": "true"}}
