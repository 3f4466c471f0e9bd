#!/usr/bin/env python3
"""Writes a baseline of known divergences from a `collfuzz replay --json-out` file.

    collfuzz replay corpus/ --executors jax-interpret --compare-profile mosaic \
        --baseline ci/empty-baseline.json --json-out /tmp/r.json
    tools/divergence_baseline.py /tmp/r.json --jax-version 0.11.2 > ci/jax-interpret-vs-compiler.json

Every signature that the replay reported becomes one entry, with a reason and a spec section
taken from the table below (the most specific pattern wins). A signature no pattern explains is
an error: a new kind of divergence needs a human to say why before it becomes "known".
"""
import argparse
import json
import re
import sys

# (regex over "oracle:kind:what", reason, spec section)
REASONS = [
    (r"^diagnostic:accepted_not_rejected:(lower|launch_context|verify|dialect|compile|launch|module|estimate|copy\.leader_tracked)\.",
     "interpret mode never runs the compiler's lowering, launch-context, compile or launch checks, and accepts the case", "4.5"),
    (r"^diagnostic:rejected_not_accepted:interpret\.store\.reduction_op",
     "interpret mode has no reducing store: gpu_callbacks.copy_smem_to_gmem raises NotImplementedError('reduction_op not supported') when a thread reaches it (docs/jax-divergences.md row 19)", "4"),
    (r"^diagnostic:rejected_not_accepted:interpret\.store\.predicate",
     "interpret mode refuses a store with a user predicate: gpu_callbacks.copy_smem_to_gmem raises NotImplementedError('predicate not supported') (docs/jax-divergences.md row 20)", "4"),
    (r"^diagnostic:rule:launch_context\.tma\.reduction_op",
     "the compiler refuses the reduction op for the element type while lowering; interpret mode lowers nothing and refuses any reducing store at run time (docs/jax-divergences.md row 19)", "3.3, 4"),
    (r"^diagnostic:rule:", "interpret mode raises its own run_scoped / copy error where the compiler raises another", "2.3"),
    (r"^diagnostic:rejected_not_accepted:run\.barrier\.",
     "interpret mode enforces Pallas barrier phase invariants at run time; the hardware has no such checks", "4.10"),
    (r"^diagnostic:rejected_not_accepted:interpret\.copy\.predicate",
     "interpret mode passes the predicate on as a barrier transform and breaks the barrier's pytree", "4.8"),
    (r"^diagnostic:rejected_not_accepted:interpret\.semaphore\.",
     "interpret mode cannot initialise scoped GMEM semaphores (uninitialized_memory=nan)", "2.3"),
    (r"^diagnostic:rejected_not_accepted:interpret\.mesh\.",
     "interpret mode rebuilds the grid from the mesh's shape dict, where repeated axis names collapse", "4"),
    (r"^diagnostic:rejected_not_accepted:interpret\.cluster_barrier\.leader_tracked",
     "interpret mode does not support leader-tracked ClusterBarriers", "2.2"),
    (r"^diagnostic:rejected_not_accepted:interpret\.cluster_ref\.",
     "interpret mode has no DSMEM: its memory callbacks raise on plgpu.cluster_ref's ClusterRefTransform when a thread reaches the load or store (docs/jax-divergences.md row 30)", "4"),
    (r"^diagnostic:rejected_not_accepted:interpret\.", "an interpret-mode-only run_scoped check", "2.2"),
    (r"^(bytes|memory):[a-z_]+:copy_partitioned$",
     "interpret mode ignores leader tracking: every CTA arms its own barrier once and every CTA gets src's first half", "4.1, 4.2"),
    (r"^(bytes|memory):[a-z_]+:copy_replicated$",
     "interpret mode ignores leader tracking: every CTA's own barrier gets one arrival", "4.2"),
    (r"^(bytes|memory):[a-z_]+:copy_multicast$",
     "interpret mode ignores collective axes: an issuer of a partial multicast gets the full source and completes", "4.3"),
    (r"^bytes:wait:block_sync$", "interpret mode has no block-wide barrier at a thread-collective run_scoped's entry", "2.2"),
    (r"^bytes:(unexpected_completion|wait_passes):",
     "interpret mode counts one arrival per copy and no bytes, so waits the compiler leaves hanging complete", "4.2, 4.3, 4.6"),
]

# (regex over the case name, regex over "oracle:kind:what", reason, spec section): divergences that
# only the named cases explain (checked first).
CASE_REASONS = [
    (r"cluster_ref", r"^diagnostic:rule:",
     "interpret mode refuses every plgpu.cluster_ref read or write at run time (no DSMEM: docs/jax-divergences.md "
     "row 30); the compiler refuses this one earlier, while lowering", "4"),
    (r"^mode\.orders_tensor_core__copy_lanes_arrive", r"^bytes:(arrivals|phases|final_state):copy$",
     "JAX 0.11.2's compiler arms an orders_tensor_core barrier from every lane (128 arrivals of its "
     "count); interpret mode counts one arrival per copy", "1.5, 4.2"),
    (r"copy_gmem_to_smem_partitioned__", r"^memory:output:",
     "interpret mode ignores leader tracking: every CTA gets the first half of a and b, so CTA 1 "
     "stores a[:64] + b[:64] where the compiler's CTA 1 stores a[64:] + b[64:] (docs/jax-divergences.md "
     "rows 1-2)", "4.1, 4.2"),
    (r"^mode\.(smem_transforms|multiple_of)__", r"^memory:data:",
     "interpret mode drops SMEM transforms and reads the GMEM slice as written; the compiler's "
     "tiled TMA addresses GMEM as (start // tile, start % tile) per tiled dim, so a start off a "
     "tile reads zeros past the tile, and a dropped count of tiles loses its part of the start "
     "(docs/jax-divergences.md row 24)", "3.3"),
    (r"try_cluster_cancel", r"^bytes:(arrivals|phases|final_state):try_cluster_cancel$",
     "interpret mode makes every try_cluster_cancel fail: each thread arrives once with no bytes "
     "and no response comes, so the compiler's over-delivered responses (and the hang they cause) "
     "never happen there (docs/jax-divergences.md row 29)", "1.5"),
    (r"^mode\.vector_store__int32_astype_bf16", r"^memory:output:",
     "an int32 to bfloat16 conversion rounds twice in interpret mode (XLA on the CPU goes through "
     "float32) and once in the compiler (cvt.rn.bf16.s32; docs/jax-divergences.md row 23)", "5"),
]


def explain(signature, case=""):
  key = ":".join(signature.split(":")[:3])
  for case_pattern, pattern, reason, section in CASE_REASONS:
    if re.search(case_pattern, case) and re.search(pattern, key):
      return reason, section
  for pattern, reason, section in REASONS:
    if re.search(pattern, key):
      return reason, section
  return None


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("replay_json")
  ap.add_argument("--jax-version", default="0.11.2")
  args = ap.parse_args()
  checks = json.load(open(args.replay_json))
  entries, unexplained = [], []
  for check in checks:
    if check["status"] != "fail":
      continue
    for sig in check.get("signatures", []):
      if sig.startswith("stale:"):
        continue
      found = explain(sig, check["case"])
      if not found:
        unexplained.append(f"{check['case']}: {sig}")
        continue
      reason, section = found
      entries.append({"case": check["case"], "executor": check["executor"], "signature": sig,
                      "jax_version": args.jax_version, "reason": reason, "spec_section": section})
  if unexplained:
    sys.exit("no reason known for:\n  " + "\n  ".join(unexplained))
  entries.sort(key=lambda e: (e["case"], e["signature"]))
  json.dump({"format": 1, "divergences": entries}, sys.stdout, indent=1)
  sys.stdout.write("\n")


if __name__ == "__main__":
  main()
