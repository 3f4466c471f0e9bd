#!/usr/bin/env python3
"""Writes the probe cases of docs/jax-notes.md into this directory (one collfuzz case per file).

    python3 corpus-jax-probes/make_probes.py

Each probe asks JAX 0.11.2 one question (its `notes` says which); none has an `expect`. Probes
that hang in interpret mode (a wait nobody completes) go to hangs/, so that replaying this
directory does not wait for timeouts. Replay: harness/jax/cfjax_replay.py corpus-jax-probes.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

X = {"name": "x", "shape": [8, 16], "dtype": "float32"}


def smem(name, shape=(8, 16), dtype="float32"):
  return {"name": name, "kind": "smem", "shape": list(shape), "dtype": dtype}


def bar(name="bar", n=1, nb=None):
  a = {"name": name, "kind": "barrier", "num_arrivals": n}
  if nb is not None:
    a["num_barriers"] = nb
  return a


def scoped(allocs, body, axes=None):
  op = {"op": "run_scoped", "allocs": allocs, "body": body}
  if axes is not None:
    op["collective_axes"] = axes
  return op


def copy(src="x", dst="dst", barrier=("bar", 0), **kw):
  op = {"op": "copy_gmem_to_smem", "src": {"input": src}, "dst": {"alloc": dst}}
  if isinstance(src, dict):
    op["src"] = src
  if barrier is not None:
    op["barrier"] = {"alloc": barrier[0]}
    if barrier[1] is not None:
      op["barrier"]["index"] = barrier[1]
  op.update(kw)
  return op


def wait(b="bar", i=0):
  use = {"alloc": b}
  if i is not None:
    use["index"] = i
  return {"op": "barrier_wait", "barrier": use}


def arrive(b="bar", i=0):
  return {"op": "barrier_arrive", "barrier": {"alloc": b, "index": i}}


def when(cond, body):
  return {"op": "when", "cond": cond, "body": body}


CASES = {}


def case(fname, notes, mesh, program, inputs=(X,), outputs=(), arch="sm_90a", semantics=None,
         entry=None, hang=False):
  target = {"arch": arch, "profile": "interpret"}
  if semantics:
    target["semantics"] = semantics
  if entry:
    target["entry"] = entry
  c = {"format": 1, "name": fname, "notes": notes, "mesh": mesh, "target": target,
       "inputs": list(inputs)}
  if outputs:
    c["outputs"] = list(outputs)
  c["program"] = program
  CASES[("hangs/" if hang else "") + fname] = c


C2 = {"cluster": [2], "cluster_names": ["x"]}
C2T2 = {"cluster": [2], "cluster_names": ["x"], "num_threads": 2, "thread_name": "t"}
T2 = {"num_threads": 2, "thread_name": "t"}
PLAIN = [scoped([smem("dst"), bar()], [copy(), wait()])]

# ---- a. plgpu.Mesh validation and reprs
case("a01-mesh-cluster-4d", "Mesh: cluster= must be at most 3D; the exact repr of the Mesh",
     {"cluster": [2, 1, 1, 1], "cluster_names": ["a", "b", "c", "d"]}, PLAIN)
case("a02-mesh-grid-names-length", "Mesh: grid_names must have the same length as grid",
     {"grid": [2], "grid_names": ["g", "h"]}, PLAIN)
case("a03-mesh-cluster-names-length", "Mesh: cluster_names must have the same length as cluster",
     {"cluster": [2, 2], "cluster_names": ["x"]}, PLAIN)
case("a04-mesh-threads-without-name", "Mesh: num_threads without thread_name",
     {"num_threads": 2}, PLAIN)
case("a05-mesh-name-without-threads", "Mesh: thread_name without num_threads",
     {"thread_name": "t"}, PLAIN)
case("a06-mesh-17-threads", "Mesh: more than 16 Pallas threads",
     {"num_threads": 17, "thread_name": "t"}, PLAIN)
for n in (9, 16):
  case(f"a07-mesh-{n}-threads-run", f"num_threads={n} (more than 1024 CUDA threads): does interpret run it?",
       {"num_threads": n, "thread_name": "t"},
       [scoped([smem("dst"), bar()], [when({"axis": "t", "eq": 0}, [copy()]), wait()], axes=["t"])])
case("a08-mesh-duplicate-cluster-names", "cluster_names=('x','x'): accepted? what does axis_index give?",
     {"cluster": [2, 2], "cluster_names": ["x", "x"]},
     [scoped([smem("dst"), bar()], [copy(collective_axes=["x"]), wait()])])
case("a09-mesh-grid-and-cluster-same-name", "grid_names=('x',), cluster_names=('x',)",
     {"grid": [2], "grid_names": ["x"], "cluster": [2], "cluster_names": ["x"]},
     [scoped([smem("dst"), bar()], [copy(collective_axes=["x"]), wait()])])
case("a10-cluster-17", "a cluster of 17 CTAs (more than the 16-CTA hardware limit) in interpret",
     {"cluster": [17], "cluster_names": ["x"]},
     [scoped([smem("dst"), bar()], [copy(collective_axes=["x"]), wait()])])
case("a11-cluster-64", "a cluster of 64 CTAs (4x4x4) in interpret",
     {"cluster": [4, 4, 4], "cluster_names": ["x", "y", "z"]},
     [scoped([smem("dst", (2, 16)), bar()],
             [copy(src={"input": "x", "index": [{"start": 0, "size": 2}]}, collective_axes=["x", "y"]),
              wait()])])
case("a12-grid-3-reduced", "a grid of 8 points (the executor runs grids over 4 points as a grid of ones)",
     {"grid": [8], "grid_names": ["g"], "cluster": [2], "cluster_names": ["x"]}, PLAIN)
case("a13-grid-2-full", "a grid of 2 points run in full", {"grid": [2], "grid_names": ["g"]},
     PLAIN)

# composite cluster names
CX = {"cluster": [2], "cluster_names": [["x", "y"]]}
case("b40-composite-copy-multicast", "cluster_names=(('x','y'),): copy collective_axes=(('x','y'),)",
     CX, [scoped([smem("dst"), bar()], [copy(collective_axes=[["x", "y"]]), wait()])])
case("b41-composite-run-scoped", "cluster_names=(('x','y'),) with a thread axis: run_scoped collective_axes=(('x','y'), 't')",
     {**CX, "num_threads": 1, "thread_name": "t"},
     [scoped([smem("dst")], [], axes=[["x", "y"], "t"])])
case("b42-composite-cluster-barrier", "cluster_names=(('x','y'),): ClusterBarrier(collective_axes=(('x','y'),))",
     CX, [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": [["x", "y"]]}],
                 [arrive("cb"), wait("cb")])])
case("b43-grouped-cluster-barrier", "cluster_names=('x','y'): ClusterBarrier(collective_axes=(('x','y'),)) groups axes",
     {"cluster": [2, 2], "cluster_names": ["x", "y"]},
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": [["x", "y"]]}],
             [arrive("cb"), wait("cb")])])

# ---- b. run_scoped rules (spec 2.2, table 2.3)
case("b01-R1-thread-collective-ok", "R1: collective_axes=('t',) with SMEM, Barrier, ClusterBarrier",
     C2T2, [scoped([smem("dst"), bar(), {"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x"]}],
                   [when({"axis": "t", "eq": 0}, [copy(), arrive("cb"), wait("cb")]), wait()],
                   axes=["t"])])
case("b02-R2-multithreaded-empty-axes", "R2: multithreaded, collective_axes=()", T2,
     [scoped([smem("dst")], [])])
case("b03-R3-cluster-and-thread", "R3: collective_axes=('x','t')", C2T2,
     [scoped([smem("dst")], [], axes=["x", "t"])])
case("b04-R4-cluster-only", "R4: multithreaded, collective_axes=('x',)", C2T2,
     [scoped([smem("dst")], [], axes=["x"])])
case("b05-R5-cluster-no-thread-axis", "R5: no thread axis, collective_axes=('x',)", C2,
     [scoped([smem("dst")], [], axes=["x"])])
case("b06-R6-grid-axis", "R6: collective_axes=('g',), a grid axis, multithreaded",
     {"grid": [2], "grid_names": ["g"], **T2}, [scoped([smem("dst")], [], axes=["g"])])
case("b06b-R6-grid-axis-no-thread", "R6: collective_axes=('g',) without a thread name (the sentinel repr)",
     {"grid": [2], "grid_names": ["g"], "cluster": [2], "cluster_names": ["x"]},
     [scoped([smem("dst")], [], axes=["g"])])
case("b07-R7-unknown-axis", "R7: an unknown axis", {"cluster": [2, 2], "cluster_names": ["c0", "c1"], **T2},
     [scoped([smem("dst")], [], axes=["unknown_axis"])])
case("b07b-R7-unknown-axis-no-thread", "R7: an unknown axis without a thread name", C2,
     [scoped([smem("dst")], [], axes=["unknown_axis"])])
case("b08-R8-acc-thread-collective", "R8: ACC with collective_axes=('t',)", T2,
     [scoped([{"name": "acc", "kind": "acc", "shape": [64, 64], "dtype": "float32"}], [], axes=["t"])])
case("b09-R9-acc-empty-axes", "R9: ACC with (), single-threaded", {},
     [scoped([{"name": "acc", "kind": "acc", "shape": [64, 64], "dtype": "float32"}], [])])
case("b09b-R9-acc-empty-axes-multithreaded", "R9: ACC with (), multithreaded", T2,
     [scoped([{"name": "acc", "kind": "acc", "shape": [64, 64], "dtype": "float32"}], [])])
case("b10-R10-acc-and-smem", "R10: single-threaded, ACC + SMEM in one run_scoped with ()", {},
     [scoped([smem("dst"), {"name": "acc", "kind": "acc", "shape": [64, 64], "dtype": "float32"}], [])])
case("b11-R11-acc-and-smem-collective", "R11: multithreaded, SMEM + ACC with ('t',)", T2,
     [scoped([smem("dst"), {"name": "acc", "kind": "acc", "shape": [64, 64], "dtype": "float32"}], [],
             axes=["t"])])
case("b12-R12-gmem-scratch", "R12: a plain GMEM scratch buffer", {},
     [scoped([{"name": "g", "kind": "gmem", "shape": [8, 16], "dtype": "float32"}], [])])
case("b13-R13-semaphore-multithreaded", "R13: GMEM semaphore, multithreaded, ()", T2,
     [scoped([{"name": "s", "kind": "semaphore", "type": "regular", "shape": [2]}], [])])
case("b13b-R13-semaphore-thread-collective", "R13: GMEM semaphore with ('t',)", T2,
     [scoped([{"name": "s", "kind": "semaphore", "type": "regular", "shape": [2]}], [], axes=["t"])])
case("b13c-semaphore-single-thread", "a GMEM semaphore, single-threaded, ()", {},
     [scoped([{"name": "s", "kind": "semaphore", "type": "barrier", "shape": [2]}], [])])
case("b14-R14-thread-axis-twice", "R14: collective_axes=('t','t')", T2,
     [scoped([smem("dst"), bar()], [when({"axis": "t", "eq": 0}, [copy()]), wait()], axes=["t", "t"])])
case("b16-R16-trace-before-interpret", "R16: an interpret-stage run_scoped error (R2) before a trace-stage dtype error",
     T2, [scoped([smem("a")], []),
          scoped([smem("dst", dtype="int32"), bar()], [copy(), wait()], axes=["t"])])
case("b16b-R16-program-order", "R16: two interpret-stage errors: R7 first in program order, then R2",
     T2, [scoped([smem("a")], [], axes=["nope"]), scoped([smem("b")], [])])
case("b17-cluster-barrier-thread-axis", "ClusterBarrier(collective_axes=('t',)) (the thread axis)", C2T2,
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["t"]}], [], axes=["t"])])
case("b18-cluster-barrier-leader-tracked", "ClusterBarrier(leader_tracked=True)", C2,
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x"], "leader_tracked": True}],
             [arrive("cb"), wait("cb")])])
case("b19-cluster-barrier-unknown-axis", "ClusterBarrier(collective_axes=('q',))", C2,
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["q"]}], [])])
case("b20-barrier-zero-arrivals", "Barrier(num_arrivals=0)", {}, [scoped([bar(n=0)], [])])
case("b21-tmem", "a TMEM allocation in interpret mode", {},
     [scoped([{"name": "tm", "kind": "tmem", "shape": [128, 128], "dtype": "float32"}], [])])
case("b22-pallas-call-copy", "entry pallas_call: a copy and a wait", {"grid": [1]}, PLAIN, entry="pallas_call")
case("b23-pallas-call-collective-axes", "entry pallas_call: run_scoped collective_axes=('g',) with an unused SMEM allocation (no mesh; sentinel)",
     {"grid": [1]}, [scoped([smem("dst")], [], axes=["g"])], entry="pallas_call")
case("b23b-pallas-call-collective-axes-used", "entry pallas_call: run_scoped collective_axes=('g',) whose body copies and waits",
     {"grid": [1]}, [scoped([smem("dst"), bar()], [copy(), wait()], axes=["g"])], entry="pallas_call")
case("b24-cluster-barrier-counts", "ClusterBarrier over x (cluster 2x2): arrivals per CTA",
     {"cluster": [2, 2], "cluster_names": ["x", "y"]},
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x"], "num_arrivals": 1}],
             [arrive("cb"), wait("cb")])])

# ---- c. copies (spec 3 and 4)
case("c01-copy-without-barrier", "copy_gmem_to_smem without a barrier", {},
     [scoped([smem("dst")], [copy(barrier=None)])])
case("c02-predicate-true", "predicate=True (a Python bool)", {},
     [scoped([smem("dst"), bar()], [copy(predicate=True), wait()])])
case("c03-predicate-false", "predicate=False (a Python bool)", {},
     [scoped([smem("dst"), bar()], [copy(predicate=False), wait()])])
case("c04-predicate-traced", "predicate=lax.axis_index('x') == 0", C2,
     [scoped([smem("dst"), bar()], [copy(predicate={"axis": "x", "eq": 0}), wait()])])
X16 = {"name": "x", "shape": [16, 16], "dtype": "float32"}
case("c05-partitioned-all-wait", "PARTITIONED(0) over x (cluster 2): data in the non-leader; every CTA waits",
     C2, [scoped([smem("dst"), bar()],
                 [copy(collective_axes=["x"], leader_tracked={"partitioned": 0}), wait()])],
     inputs=[X16])
case("c06-partitioned-leader-waits", "PARTITIONED(0): only the leader waits (the documented usage)",
     C2, [scoped([smem("dst"), bar()],
                 [copy(collective_axes=["x"], leader_tracked={"partitioned": 0}),
                  when({"axis": "x", "eq": 0}, [wait()])])],
     inputs=[X16])
case("c07-replicated", "REPLICATED over x (cluster 2); every CTA waits", C2,
     [scoped([smem("dst"), bar()], [copy(collective_axes=["x"], leader_tracked="replicated"), wait()])])
case("c08-multicast-subset-issuers", "multicast over x issued by x==0 only (pl.when); the issuer waits",
     C2, [scoped([smem("dst"), bar()],
                 [when({"axis": "x", "eq": 0}, [copy(collective_axes=["x"]), wait()])])])
for mode in (None, "undefined", "promise_in_bounds", "zeros"):
  tag = mode or "none"
  kw = {} if mode is None else {"oob_mode": mode}
  case(f"c09-oob-partial-{tag}", f"rows [6x, 6x+4) of an 8-row input: CTA 1 reads rows 6..9 (partially OOB), oob_mode={tag}",
       C2, [scoped([smem("dst", (4, 16)), bar()],
                   [copy(src={"input": "x", "index": [{"start": {"axis": "x", "mul": 6, "add": 0}, "size": 4}]}, **kw),
                    wait()])])
  case(f"c10-oob-full-{tag}", f"rows [8x, 8x+4): CTA 1 reads rows 8..11 (fully OOB), oob_mode={tag}",
       C2, [scoped([smem("dst", (4, 16)), bar()],
                   [copy(src={"input": "x", "index": [{"start": {"axis": "x", "mul": 8, "add": 0}, "size": 4}]}, **kw),
                    wait()])])
case("c11-two-copies-one-arrival-one-wait", "Barrier(num_arrivals=1) receives 2 copies; 1 wait", {},
     [scoped([smem("dst"), bar()], [copy(), copy(), wait()])])
case("c12-copy-never-waited", "a copy whose barrier is never waited on", {},
     [scoped([smem("dst"), bar()], [copy()])])
case("c13-two-copies-two-waits", "Barrier(num_arrivals=1): copy, copy, wait, wait", {},
     [scoped([smem("dst"), bar()], [copy(), copy(), wait(), wait()])])
case("c14-two-threads-unguarded-copy", "num_threads=2: both threads copy on one Barrier(num_arrivals=1), both wait",
     T2, [scoped([smem("dst"), bar()], [copy(), wait()], axes=["t"])])
case("c15-int4-odd", "an int4 copy of 3 elements (1.5 bytes)", {},
     [scoped([smem("dst", (3,), "int4"), bar()], [copy(), wait()])],
     inputs=[{"name": "x", "shape": [3], "dtype": "int4"}])
case("c16-dtype-mismatch", "src float32, dst int32", {},
     [scoped([smem("dst", dtype="int32"), bar()], [copy(), wait()])])
case("c17-shape-mismatch", "src (8,16), dst (16,16), no partitioning (trailing space?)", {},
     [scoped([smem("dst", (16, 16)), bar()], [copy(), wait()])])
case("c18-shape-mismatch-partitioned", "PARTITIONED(0) over x: src (8,16), dst (8,16)", C2,
     [scoped([smem("dst"), bar()],
             [copy(collective_axes=["x"], leader_tracked={"partitioned": 0}), wait()])])
case("c19-partitioned-unknown-axis", "PARTITIONED(0) with collective_axes=('q',): NameError", C2,
     [scoped([smem("dst"), bar()],
             [copy(collective_axes=["q"], leader_tracked={"partitioned": 0}), wait()])])
case("c20-leader-tracked-without-axes", "leader_tracked=REPLICATED with collective_axes=None", C2,
     [scoped([smem("dst"), bar()], [copy(leader_tracked="replicated"), wait()])])
case("c21-partitioned-empty-axes", "PARTITIONED(0) with collective_axes=()", C2,
     [scoped([smem("dst"), bar()],
             [copy(collective_axes=[], leader_tracked={"partitioned": 0}), wait()])])
case("c22-multi-barrier-without-index", "Barrier(num_barriers=2) passed without .at[] to a copy and a wait", {},
     [scoped([smem("dst"), bar(nb=2)], [copy(barrier=("bar", None)), wait("bar", None)])])
case("c23-barrier-index-1", "Barrier(num_barriers=2): copy and wait on .at[1]", {},
     [scoped([smem("dst"), bar(nb=2)], [copy(barrier=("bar", 1)), wait("bar", 1)])])
case("c24-single-barrier-without-index", "Barrier(num_barriers=1) used without .at[]", {},
     [scoped([smem("dst"), bar()], [copy(barrier=("bar", None)), wait("bar", None)])])
case("c25-multicast-grid-axis", "collective_axes=('g',), a grid axis", {"grid": [2], "grid_names": ["g"]},
     [scoped([smem("dst"), bar()], [copy(collective_axes=["g"]), wait()])])
case("c26-multicast-thread-axis", "collective_axes=('t',), the thread axis", T2,
     [scoped([smem("dst"), bar()], [when({"axis": "t", "eq": 0}, [copy(collective_axes=["t"])]), wait()],
             axes=["t"])])
case("c27-partitioned-cluster-4", "PARTITIONED(0) over x in a cluster of 4", {"cluster": [4], "cluster_names": ["x"]},
     [scoped([smem("dst", (2, 16)), bar()],
             [copy(src={"input": "x", "index": [{"start": 0, "size": 8}]}, collective_axes=["x"],
                   leader_tracked={"partitioned": 0}), wait()])],
     inputs=[X16])
case("c28-partitioned-two-axes", "PARTITIONED(0) over ('x','y'), cluster 2x1", {"cluster": [2, 1], "cluster_names": ["x", "y"]},
     [scoped([smem("dst"), bar()],
             [copy(collective_axes=["x", "y"], leader_tracked={"partitioned": 0}), wait()])],
     inputs=[X16])
case("c29-arrive-plus-copy", "Barrier(num_arrivals=2): one barrier_arrive and one copy, then a wait", {},
     [scoped([smem("dst"), bar(n=2)], [arrive(), copy(), wait()])])
case("c30-multicast-dst-index", "multicast into dst.at[1] of an SMEM (2,8,16)", C2,
     [scoped([smem("dst", (2, 8, 16)), bar()],
             [{**copy(collective_axes=["x"]), "dst": {"alloc": "dst", "index": [1]}}, wait()])])
case("c31-lane-64-bytes", "Lane semantics, a 64-byte copy (bytes % 128 != 0)", {},
     [scoped([smem("dst", (16,)), bar()],
             [copy(src={"input": "x", "index": [0]}), wait()])], semantics="lane")
case("c32-sm80-with-barrier", "arch sm_80 (cp.async), a copy with a barrier", {}, PLAIN, arch="sm_80")
case("c33-multicast-cluster-4-rows-2", "cluster (4,), multicast of an f32 (2,64)-shaped slice", {"cluster": [4], "cluster_names": ["x"]},
     [scoped([smem("dst", (2, 64)), bar()], [copy(collective_axes=["x"]), wait()])],
     inputs=[{"name": "x", "shape": [2, 64], "dtype": "float32"}])
case("c34-copy-out", "copy, wait, copy_smem_to_gmem to out.at[1] (outputs and written ranges)", C2,
     [scoped([smem("dst"), bar()], [copy(collective_axes=["x"]), wait(),
                                    when({"axis": "x", "eq": 1}, [
                                        {"op": "copy_smem_to_gmem", "src": {"alloc": "dst"},
                                         "dst": {"output": "out", "index": [1]}}])])],
     outputs=[{"name": "out", "shape": [2, 8, 16], "dtype": "float32"}])
case("c35-sentinel-untouched", "an SMEM buffer no copy writes (the 0xA5 sentinel, int4 and bf16)", {},
     [scoped([smem("a", (3,), "int4"), smem("b", (2,), "bfloat16")], [])])
case("c36-cluster-barrier-collective-sync", "ClusterBarrier over x in cluster 2: arrive, wait (counts)", C2,
     [scoped([{"name": "cb", "kind": "cluster_barrier", "collective_axes": ["x"]}], [arrive("cb"), wait("cb")])])

case("c37-partial-arrivals-at-scope-end", "Barrier(num_arrivals=2) gets one copy and no wait: arrivals pending when the scope ends", {},
     [scoped([smem("dst"), bar(n=2)], [copy()])])
case("c38-missed-phase", "Barrier(num_arrivals=1): copy, wait, then three more copies (phases 2..4 unobserved)", {},
     [scoped([smem("dst"), bar()], [copy(), wait(), copy(), copy(), copy()])])
case("c39-copy-after-wait-unobserved", "Barrier(num_arrivals=1): copy, wait, copy (the last phase is never observed)", {},
     [scoped([smem("dst"), bar()], [copy(), wait(), copy()])])

# ---- hangs (interpret mode blocks; replay with a timeout)
case("h01-wait-without-arrival", "a wait nobody can complete (deadlock)", {},
     [scoped([smem("dst"), bar()], [wait()])], hang=True)
case("h02-partial-multicast-peer-waits", "multicast issued by x==0 only; x==1 waits", C2,
     [scoped([smem("dst"), bar()],
             [when({"axis": "x", "eq": 0}, [copy(collective_axes=["x"])]), wait()])], hang=True)
case("h03-two-waits-one-copy", "one copy, two waits on a Barrier(num_arrivals=1)", {},
     [scoped([smem("dst"), bar()], [copy(), wait(), wait()])], hang=True)


def main():
  for fname, c in CASES.items():
    path = os.path.join(HERE, fname + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
      json.dump(c, f, indent=1)
      f.write("\n")
  print(f"wrote {len(CASES)} probes")


if __name__ == "__main__":
  main()
