#!/usr/bin/env python3
"""collfuzz's JAX executor: runs collfuzz cases through real JAX (docs/external-executor-protocol.md).

    collfuzz_jax.py --mode interpret|gpu|lower|ir [--once CASE.json]

Speaks line-delimited JSON on stdin/stdout: one hello line, then one response line per request
line `{"id": N, "case": {...}}`. stdout carries nothing else: the process's fd 1 is pointed at
stderr before anything is imported, and protocol lines go to a private duplicate of the original
stdout. `--once FILE` runs one case file and prints its outcome (for people, not for the harness).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import cfjax_xla_flags

PROTOCOL = "collfuzz-executor/1"
NAMES = {"interpret": "jax-interpret", "gpu": "jax-gpu", "lower": "jax-lower", "ir": "jax-ir"}
PROFILES = {"interpret": "interpret", "gpu": "mosaic", "lower": "mosaic", "ir": "mosaic"}
# The JAX releases collfuzz models (harness/core/jax_version.h; ci/setup-jax.sh VERSION makes a
# venv for each). Another release runs, with a warning: collfuzz reports its outcomes as a version
# mismatch.
MODELLED = ("0.11.2", "0.12.0.1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _protocol_stream():
  """A private stream on the original stdout; fd 1 (and sys.stdout) now go to stderr."""
  sys.stdout.flush()
  fd = os.dup(1)
  os.dup2(2, 1)
  sys.stdout = sys.stderr
  return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def _versions() -> dict:
  from importlib import metadata  # pylint: disable=import-outside-toplevel
  out = {}
  for pkg in ("jax", "jaxlib"):
    try:
      out[pkg + "_version"] = metadata.version(pkg)
    except metadata.PackageNotFoundError:
      out[pkg + "_version"] = None
  return out


def _cuda_driver_version() -> str | None:
  """The CUDA driver's version from /proc (no import of JAX needed), or None without one."""
  try:
    with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
      first = f.readline()
  except OSError:
    return None
  parts = first.split()
  for i, p in enumerate(parts):
    if p == "Module" and i + 1 < len(parts):
      return parts[i + 1]
  return first.strip() or None


def _availability(mode: str, versions: dict) -> tuple[str | None, str]:
  """(reason it cannot run, backend) before JAX is imported where that is enough."""
  if versions.get("jax_version") is None or versions.get("jaxlib_version") is None:
    return "jax and jaxlib are not installed in this Python (run ci/setup-jax.sh)", ""
  if mode == "interpret":
    return None, "cpu"
  import jax  # pylint: disable=import-outside-toplevel
  if mode == "gpu":
    try:
      devs = jax.devices("cuda")
    except Exception as e:  # pylint: disable=broad-except
      return f"no CUDA GPU backend: {type(e).__name__}: {e}", jax.default_backend()
    if not devs:
      return "no CUDA GPU backend: jax.devices('cuda') is empty", jax.default_backend()
    return None, f"cuda ({devs[0].device_kind})"
  try:
    import jax.experimental.mosaic.gpu  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
  except Exception as e:  # pylint: disable=broad-except
    return f"Mosaic GPU cannot be imported: {type(e).__name__}: {e}", jax.default_backend()
  if mode == "ir":
    return None, f"{jax.default_backend()} (the lowered kernel evaluated on the CPU)"
  return None, f"{jax.default_backend()} (lowering for cuda only)"


def _exit_now(why: str):
  """Exits at once: interpret mode's stuck kernel threads would keep a normal exit waiting."""
  print(f"collfuzz_jax: {why}", file=sys.stderr)
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(0)  # pylint: disable=protected-access


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--mode", choices=sorted(NAMES), default="interpret")
  ap.add_argument("--once", metavar="CASE", help="run one case file, print its outcome, exit")
  args = ap.parse_args(argv)
  mode = args.mode
  name, profile = NAMES[mode], PROFILES[mode]

  if mode == "interpret":
    # Interpret mode runs on the host; never let it pick up an accelerator.
    os.environ["JAX_PLATFORMS"] = "cpu"
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
  cfjax_xla_flags.pin_cpu_isa()  # before JAX is imported: no FMA contraction on the CPU

  out = _protocol_stream()

  def send(obj):
    out.write(json.dumps(obj, separators=(",", ":")) + "\n")
    out.flush()

  t0 = time.monotonic()
  versions = _versions()
  reason, backend = _availability(mode, versions)
  if reason is None and versions["jax_version"] not in MODELLED:
    print(f"collfuzz_jax: warning: jax {versions['jax_version']} is not a release collfuzz models "
          f"({', '.join(MODELLED)})", file=sys.stderr)

  hello = {"hello": PROTOCOL, "name": name}
  if reason is not None:
    hello["unavailable"] = reason
  else:
    hello["profile"] = profile
    hello["info"] = {**versions, "backend": backend}
  # The versions this executor runs, whether or not it can run here (docs/external-executor-protocol.md).
  hello["versions"] = {"jax": versions.get("jax_version"), "jaxlib": versions.get("jaxlib_version"),
                       "cuda_driver": _cuda_driver_version()}

  executor = None
  if args.once is None:
    send(hello)
  if reason is None:
    from cfjax_execute import Executor  # pylint: disable=import-outside-toplevel
    executor = Executor(mode)
  print(f"collfuzz_jax: {name} ready in {time.monotonic() - t0:.2f}s", file=sys.stderr)

  def answer(case):
    if executor is None:
      outcome = {"kind": "unavailable", "reason": reason}
    else:
      outcome = executor.run(case)
    outcome["profile"] = profile
    outcome["executor"] = name
    # Key order as the C++ writer uses: kind first.
    return {"kind": outcome.pop("kind"), **outcome}

  if args.once is not None:
    with open(args.once, encoding="utf-8") as f:
      case = json.load(f)
    out.write(json.dumps(answer(case), indent=1) + "\n")
    if executor is not None and executor.exit_after_answer:
      _exit_now("a hung kernel thread could not be woken; exiting")
    return 0

  for line in sys.stdin:
    line = line.strip()
    if not line:
      continue
    rid = None
    try:
      req = json.loads(line)
      if not isinstance(req, dict):
        raise ValueError("a request must be a JSON object")
      rid = req.get("id")
      if not isinstance(rid, int) or isinstance(rid, bool):
        raise ValueError("a request needs an integer \"id\"")
      if "case" not in req:
        raise ValueError("a request needs a \"case\"")
      response = {"id": rid, "outcome": answer(req["case"])}
      if executor is not None and executor.exit_after_answer:
        response["exiting"] = True  # docs/external-executor-protocol.md
    except Exception as e:  # pylint: disable=broad-except
      response = {"id": rid if isinstance(rid, int) else None,
                  "outcome": {"kind": "crash", "profile": profile, "executor": name,
                              "reason": f"bad request: {type(e).__name__}: {e}"}}
    send(response)
    if executor is not None and executor.exit_after_answer:
      _exit_now("a hung kernel thread could not be woken; exiting (the harness restarts the "
                "executor)")
  return 0


if __name__ == "__main__":
  sys.exit(main())
