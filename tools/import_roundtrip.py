#!/usr/bin/env python3
"""Does `collfuzz repro` then `collfuzz import` give back the same case?

    tools/import_roundtrip.py [--collfuzz BIN] [--python PY] [--work DIR] [--expect-failures FILE]
                              PATH...

Writes the interpret-mode script of every case under PATHs (`collfuzz repro PATHS -o DIR/`),
imports every script in one Python process (harness/jax/cfjax_import.py --serve, the code behind
`collfuzz import`), passing the case's target.arch, target.profile and target.jax (which a
kernel does not hold), and compares the two cases after normalising both (`canonical` below:
names, notes and expectations are not carried; defaults are spelt out; index entries and axis-name
lists are written one way). Prints one line per case that does not round-trip, then the counts.
`--expect-failures FILE`: a JSON object {case file name: reason} of the cases known not to
round-trip (tools/import_roundtrip_known.json); any other failure, or a known one that now passes,
exits 1. docs/python.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from work_dir import work_dir  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

from cfjax_case import VECTOR_BINARY, converted_const, without_scratch_shapes  # noqa: E402  (as the C++ parser)


# ---- the canonical form of a case (what a round trip must keep)

def _names(j) -> list:
  """An axis-name list: "x" -> ["x"]."""
  return [j] if isinstance(j, str) else list(j)


def _cond(c):
  if isinstance(c, bool) or not isinstance(c, dict):
    return c
  for key in ("all", "any"):
    if key in c:
      flat = []
      for x in (_cond(y) for y in c[key]):
        if isinstance(x, dict) and list(x) == [key]:
          flat.extend(x[key])
        else:
          flat.append(x)
      if len(flat) == 1:
        return flat[0]
      return {key: flat}
  if "not" in c:
    return {"not": _cond(c["not"])}
  return dict(c)


def _dyn(e: dict, loops=None) -> dict:
  """A dynamic index: {"axis": A} or {"loop": NAME} (NAME renamed by `loops`), mul, add, mod, and
  its `plus` terms. With `plus`, every term (the own one too) is merged by name (an axis, or a
  loop's index, met twice: one term, the muls summed) and the terms are sorted, the first the own
  one: the same sum written in another order is the same index."""
  def term(t: dict) -> tuple:
    if "loop" in t:
      return ("loop", (loops or {}).get(t["loop"], t["loop"]))
    return ("axis", json.dumps(t["axis"]))  # an axis name may be a list

  if e.get("plus"):
    merged: dict = {}
    for t in [e, *e["plus"]]:
      merged[term(t)] = merged.get(term(t), 0) + int(t.get("mul", 1))
    terms = sorted(merged.items())
  else:
    terms = [(term(e), int(e.get("mul", 1)))]
  out = {}
  for k, ((kind, name), mul) in enumerate(terms):
    t = {kind: json.loads(name) if kind == "axis" else name}
    if mul != 1:
      t["mul"] = mul
    if k == 0:
      out = t
    else:
      out.setdefault("plus", []).append(t)
  if int(e.get("add", 0)) != 0:
    out["add"] = int(e["add"])
  if e.get("mod") is not None:
    out["mod"] = int(e["mod"])
  return out


def _slot(e, loops=None):
  """An SMEM ref's first index or a barrier's index: an integer, or a loop slot (renamed)."""
  return _dyn(e, loops) if isinstance(e, dict) and "loop" in e else int(e)


def _smem_index(entries, loops=None, shape=None) -> list:
  """An SMEM ref's index: static integers, the first one possibly a loop slot, the last one
  possibly a slice {"start", "size"} of the next dim (its dynamic start as a GMEM entry's; a
  static one over the whole dim, `{"start": 0, "size": dim}`, dropped: the ref itself)."""
  out = []
  entries = list(entries or [])
  for d, e in enumerate(entries):
    if isinstance(e, dict) and "start" in e:
      if isinstance(e["start"], dict):
        out.append({"start": _dyn(e["start"], loops), "size": int(e["size"])})
      elif not (int(e["start"]) == 0 and shape is not None and d < len(shape) and
                int(e["size"]) == int(shape[d]) and d == len(entries) - 1):
        out.append({"start": int(e["start"]), "size": int(e["size"])})
    else:
      out.append(_slot(e, loops) if d == 0 and isinstance(e, dict) else e)
  return out


def _index(entries, shape, loops=None) -> list:
  out = []
  for d, e in enumerate(entries or []):
    dim = shape[d] if d < len(shape) else None
    if isinstance(e, dict) and "start" in e:
      if isinstance(e["start"], dict):
        out.append({"start": _dyn(e["start"], loops), "size": int(e["size"])})
      elif int(e["start"]) == 0 and int(e["size"]) == dim:
        out.append(":")
      else:
        out.append({"start": int(e["start"]), "size": int(e["size"])})
    elif isinstance(e, dict) and ("axis" in e or "loop" in e):
      out.append(_dyn(e, loops))
    else:
      out.append(e)
  while out and out[-1] == ":":
    out.pop()
  return out


def _uses_loop(j, name: str) -> bool:
  """Whether some index entry in `j` is {"loop": name, ...}."""
  if isinstance(j, list):
    return any(_uses_loop(x, name) for x in j)
  if isinstance(j, dict):
    return j.get("loop") == name or any(_uses_loop(v, name) for v in j.values())
  return False


def _transpose(side: dict) -> dict:
  """A copy's SMEM side's transpose, an identity one dropped (import drops it; both spellings
  trace alike, so `transpose_ref` is not kept)."""
  p = side.get("transpose")
  if not p or list(p) == list(range(len(p))):
    return {}
  return {"transpose": list(p)}


def canonical(case: dict) -> dict:
  """The case as a round trip must give it back: names renamed in order of appearance (inputs
  in0.., outputs out0.., allocations a0..), `name`, `notes` and `expect` dropped, defaults written,
  `{"start": 0, "size": dim}` written ":" (a last SMEM slice of that form dropped), trailing ":"
  entries dropped, an SMEM allocation's empty `transforms` dropped, axis-name lists as lists,
  nested all/any flattened and one-element all/any unwrapped; `scratch_shapes` read as the
  run_scoped it is; loop indices renamed l0.. in order of appearance (in GMEM entries and in the
  slots of SMEM and barrier indices, `mod` kept), an unused one dropped (`collfuzz import` writes
  a loop's `index` only when its body or its carry uses it), an nd_loop's index coordinates and
  local index alike; loop carries renamed c0.. in order of appearance."""
  case = without_scratch_shapes(copy.deepcopy(case))
  ren: dict[str, str] = {}
  shapes: dict[str, list] = {}
  dtypes: dict[str, str] = {}  # outputs and allocations: a vector_store destination's dtype
  out = {"format": 1}
  mesh = case.get("mesh", {})
  m = {}
  for k in ("grid", "grid_names", "cluster", "cluster_names"):
    if mesh.get(k):
      m[k] = mesh[k]
  for k in ("num_threads", "thread_name"):
    if mesh.get(k) is not None:
      m[k] = mesh[k]
  out["mesh"] = m
  t = case.get("target", {})
  out["target"] = {"arch": t.get("arch"), "semantics": t.get("semantics", "warpgroup"),
                   "entry": t.get("entry", "kernel"), "profile": t.get("profile", "mosaic")}
  if t.get("jax"):
    out["target"]["jax"] = t["jax"]
  ins = []
  for k, a in enumerate(case.get("inputs", [])):
    ren[a["name"]] = f"in{k}"
    shapes[f"in{k}"] = a["shape"]
    fill = dict(a.get("fill") or {"pattern": "iota"})
    if fill.get("pattern") == "arange":
      fill = {"start": 0, "step": 1, **fill}
    ins.append({"name": f"in{k}", "shape": a["shape"], "dtype": a["dtype"], "fill": fill})
  out["inputs"] = ins
  outs = []
  for k, a in enumerate(case.get("outputs", [])):
    ren[a["name"]] = f"out{k}"
    shapes[f"out{k}"] = a["shape"]
    dtypes[f"out{k}"] = a["dtype"]
    outs.append({"name": f"out{k}", "shape": a["shape"], "dtype": a["dtype"]})
  out["outputs"] = outs
  counter = [0]
  loops: dict[str, str] = {}  # the index names of the enclosing loops -> l0, l1, ...
  loop_names: list[str] = []
  carries: dict[str, str] = {}  # loop-carried values -> c0, c1, ... in order of appearance

  def alloc(a: dict) -> dict:
    nm = f"a{counter[0]}"
    counter[0] += 1
    ren[a["name"]] = nm
    kind = a["kind"]
    r = {"name": nm, "kind": kind}
    if kind in ("barrier", "cluster_barrier"):
      if kind == "cluster_barrier":
        r["collective_axes"] = _names(a["collective_axes"])
        r["leader_tracked"] = bool(a.get("leader_tracked", False))
      r["num_arrivals"] = int(a.get("num_arrivals", 1))
      r["num_barriers"] = a.get("num_barriers", 1)
      r["orders_tensor_core"] = bool(a.get("orders_tensor_core", False))
    elif kind == "semaphore":
      r["type"] = a["type"]
      r["shape"] = a["shape"]
    else:
      r["shape"] = a["shape"]
      r["dtype"] = a["dtype"]
      if kind == "smem" and a.get("transforms"):  # tiling, then swizzle (absent or [] alike)
        r["transforms"] = [{k: (list(v) if isinstance(v, list) else int(v)) for k, v in t.items()}
                           for t in a["transforms"]]
      if kind == "tmem":
        r["collective"] = bool(a.get("collective", False))
    shapes[nm] = a.get("shape", [])
    dtypes[nm] = a.get("dtype")
    return r

  def bar(use):
    if use is None:
      return None
    r = {"alloc": ren.get(use["alloc"], use["alloc"])}
    if use.get("index") is not None:
      r["index"] = _slot(use["index"], loops)
    return r

  def peer(c: dict) -> dict:
    """A load's or a vector_store dst's `cluster` (a peer CTA's SMEM), its index canonical."""
    return {axis: (_dyn(i, loops) if isinstance(i, dict) else i) for axis, i in c.items()}

  def vvalue(v, dtype=None):
    """A vector_store's value (of `dtype`): loads renamed, their indices (and a peer CTA's
    `cluster` index) canonical, a constant one number (an integral float as its int: the import
    reads `2.0` back as 2; -0.0 kept), a convert of a constant that its dtype holds exactly that
    constant (the import folds it)."""
    if not isinstance(v, dict) or len(v) != 1:
      return v
    (k, a), = v.items()
    if k == "convert" and isinstance(a, dict):
      inner = vvalue(a.get("value"), a.get("from"))
      if isinstance(inner, dict) and "const" in inner:
        c = converted_const(inner["const"], a.get("from"), dtype)
        if c is not None:
          return vvalue({"const": c}, dtype)
      return {"convert": {"from": a.get("from"), "value": inner}}
    if k == "const" and isinstance(a, float) and a.is_integer() and str(a) != "-0.0":
      return {"const": int(a)}
    if k == "load" and isinstance(a, dict) and "alloc" in a:
      nm = ren.get(a["alloc"], a["alloc"])
      load = {"alloc": nm, "index": _smem_index(a.get("index"), loops, shapes.get(nm))}
      if isinstance(a.get("cluster"), dict):  # a peer CTA's SMEM: {AXIS: int or dynamic index}
        load["cluster"] = peer(a["cluster"])
      return {"load": load}
    if k == "load" and isinstance(a, dict) and "input" in a:
      src = ren.get(a["input"], a["input"])
      return {"load": {"input": src, "index": _index(a.get("index"), shapes.get(src, []), loops)}}
    if k in VECTOR_BINARY and isinstance(a, list):
      return {k: [vvalue(x, dtype) for x in a]}
    if k == "carry":
      return {"carry": carries.get(a, a)}
    return v

  def loop_carry_and_body(r: dict, op: dict, saved: dict):
    """A loop's or nd_loop's carry, renamed c0, c1, ... (repro may spell it carry_NAME; its init
    read before the name is taken), and its body; then the loop names of the enclosing scope."""
    cy = op.get("carry")
    if cy:
      init = vvalue(cy.get("init"), cy.get("dtype"))
      carries[cy["name"]] = f"c{len(carries)}"
      r["carry"] = {"name": carries[cy["name"]], "dtype": cy.get("dtype"),
                    "shape": cy.get("shape"), "init": init,
                    "next": vvalue(cy.get("next"), cy.get("dtype"))}
    r["body"] = body(op.get("body", []))
    loops.clear()
    loops.update(saved)

  def body(ops: list) -> list:
    res = []
    for op in ops:
      kind = op["op"]
      if kind == "run_scoped":
        r = {"op": kind, "collective_axes": _names(op.get("collective_axes", [])),
             "allocs": [alloc(a) for a in op.get("allocs", [])]}
        r["body"] = body(op.get("body", []))
      elif kind == "copy_gmem_to_smem":
        src = ren.get(op["src"]["input"], op["src"]["input"])
        dst = ren.get(op["dst"]["alloc"], op["dst"]["alloc"])
        r = {"op": kind, "src": {"input": src, "index": _index(op["src"].get("index"),
                                                                shapes.get(src, []), loops)},
             "dst": {"alloc": dst, "index": _smem_index(op["dst"].get("index"), loops,
                                                        shapes.get(dst)),
                     **_transpose(op["dst"])},
             "barrier": bar(op.get("barrier")),
             "collective_axes": None if op.get("collective_axes") is None
             else _names(op["collective_axes"]),
             "leader_tracked": op.get("leader_tracked"), "oob_mode": op.get("oob_mode"),
             "predicate": None if op.get("predicate") is None else _cond(op["predicate"])}
      elif kind == "copy_smem_to_gmem":
        src = ren.get(op["src"]["alloc"], op["src"]["alloc"])
        dst = ren.get(op["dst"]["output"], op["dst"]["output"])
        r = {"op": kind, "src": {"alloc": src, "index": _smem_index(op["src"].get("index"), loops,
                                                                     shapes.get(src)),
                                 **_transpose(op["src"])},
             "dst": {"output": dst, "index": _index(op["dst"].get("index"), shapes.get(dst, []),
                                                    loops)},
             "reduction_op": op.get("reduction_op"),
             "predicate": None if op.get("predicate") is None else _cond(op["predicate"]),
             "commit_group": op.get("commit_group") is not False,
             "commit_smem": op.get("commit_smem") is not False,
             "wait": op.get("wait") is not False}
      elif kind == "vector_store" and "alloc" in op["dst"]:
        dst = ren.get(op["dst"]["alloc"], op["dst"]["alloc"])
        r = {"op": kind, "dst": {"alloc": dst, "index": _smem_index(op["dst"].get("index"),
                                                                     loops, shapes.get(dst))},
             "value": vvalue(op.get("value"), dtypes.get(dst))}
        if isinstance(op["dst"].get("cluster"), dict):  # a DSMEM write, into a peer CTA's SMEM
          r["dst"]["cluster"] = peer(op["dst"]["cluster"])
      elif kind == "vector_store":
        dst = ren.get(op["dst"]["output"], op["dst"]["output"])
        r = {"op": kind, "dst": {"output": dst, "index": _index(op["dst"].get("index"),
                                                                shapes.get(dst, []), loops)},
             "value": vvalue(op.get("value"), dtypes.get(dst))}
      elif kind == "commit_smem":
        r = {"op": kind}
      elif kind == "commit_smem_to_gmem_group":
        r = {"op": kind}
      elif kind == "wait_smem_to_gmem":
        r = {"op": kind, "n": op.get("n"), "wait_read_only": bool(op.get("wait_read_only", False))}
      elif kind in ("barrier_arrive", "barrier_wait", "barrier_arrive_and_wait"):
        r = {"op": kind, "barrier": bar(op["barrier"])}
      elif kind == "when":
        r = {"op": kind, "cond": _cond(op["cond"]), "body": body(op.get("body", []))}
      elif kind == "loop":
        r = {"op": kind, "trip_count": op["trip_count"]}
        saved = dict(loops)
        cy = op.get("carry")
        if op.get("index") is not None and _uses_loop([op.get("body", []), cy or {}], op["index"]):
          r["index"] = loops[op["index"]] = f"l{len(loop_names)}"
          loop_names.append(op["index"])
        loop_carry_and_body(r, op, saved)
      elif kind == "nd_loop":
        # grid, collective axes as a list ("x" and ["x"] are one axis to JAX), tiling (absent and
        # null alike), the used index coordinates and local index renamed l0.. in order (an
        # unnamed or unused coordinate None; no list where none is used), the carry as a loop's.
        r = {"op": kind, "grid": [int(d) for d in op["grid"]],
             "collective_axes": _names(op["collective_axes"]),
             "tiling": None if op.get("tiling") is None else [int(d) for d in op["tiling"]]}
        saved = dict(loops)
        cy = op.get("carry")
        reads = [op.get("body", []), cy or {}]
        names = []
        for n in op.get("index") or []:
          if n is not None and _uses_loop(reads, n):
            names.append(f"l{len(loop_names)}")
            loops[n] = names[-1]
            loop_names.append(n)
          else:
            names.append(None)
        r["index"] = names if any(n is not None for n in names) else None
        r["local_index"] = None
        if op.get("local_index") is not None and _uses_loop(reads, op["local_index"]):
          r["local_index"] = loops[op["local_index"]] = f"l{len(loop_names)}"
          loop_names.append(op["local_index"])
        loop_carry_and_body(r, op, saved)
      elif kind == "warp_map":
        r = {"op": kind, "axis": op["axis"], "body": body(op.get("body", []))}
      else:
        r = dict(op)
      if (r.get("op") == "wait_smem_to_gmem" and r["n"] == 0 and not r["wait_read_only"] and res
          and res[-1].get("op") == "copy_smem_to_gmem" and not res[-1]["wait"]):
        # A store without its wait and a wait_smem_to_gmem(0) right after it are the JAX calls of
        # a store with its wait: one store with `wait` true (what the import makes of them).
        res[-1]["wait"] = True
        continue
      if r.get("op") == "copy_smem_to_gmem" and res and res[-1].get("op") == "commit_smem":
        # commit_smem ops right before a store are, in JAX calls, the store's own commit_smem (or
        # more fences before it): one store with `commit_smem` true (what the import makes).
        while res and res[-1].get("op") == "commit_smem":
          res.pop()
        r["commit_smem"] = True
      if r.get("op") == "commit_smem" and res and res[-1].get("op") == "commit_smem":
        continue  # two fences in a row are one
      res.append(r)
    return res

  out["program"] = body(case.get("program", []))
  return out


def first_difference(a, b, path="$"):
  if type(a) is not type(b):
    return f"{path}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"
  if isinstance(a, dict):
    for k in list(a) + [k for k in b if k not in a]:
      if k not in a or k not in b:
        return f"{path}.{k}: only in the {'original' if k in a else 'imported'} case"
      d = first_difference(a[k], b[k], f"{path}.{k}")
      if d:
        return d
    return None
  if isinstance(a, list):
    for i, (x, y) in enumerate(zip(a, b)):
      d = first_difference(x, y, f"{path}[{i}]")
      if d:
        return d
    if len(a) != len(b):
      return f"{path}: {len(a)} vs {len(b)} items"
    return None
  return None if a == b else f"{path}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("paths", nargs="+")
  ap.add_argument("--collfuzz", default=os.path.join(ROOT, "build/release/collfuzz"))
  ap.add_argument("--python", default=os.path.join(ROOT, ".venv-jax/bin/python"))
  ap.add_argument("--work", help="folder for the scripts (default: a temporary one)")
  ap.add_argument("--expect-failures", help="JSON {case file name: reason} known not to round-trip")
  args = ap.parse_args(argv)
  t0 = time.monotonic()
  work = work_dir(args.work, "collfuzz-import-")
  scripts = os.path.join(work, "scripts")
  subprocess.run([args.collfuzz, "repro", *args.paths, "-o", scripts + "/", "--python",
                  args.python], check=False, stderr=subprocess.DEVNULL)
  with open(os.path.join(scripts, "index.json"), encoding="utf-8") as f:
    index = json.load(f)
  t_gen = time.monotonic()
  entries = [e for e in index if "script" in e]
  originals = {}
  requests = []
  for e in entries:
    with open(e["case"], encoding="utf-8") as f:
      case = json.load(f)
    originals[e["case"]] = case
    t = case.get("target", {})
    requests.append({"file": os.path.join(scripts, e["script"]), "name": "",
                     "arch": t.get("arch", ""), "profile": t.get("profile", "mosaic"),
                     "jax": t.get("jax", "")})
  proc = subprocess.run([args.python, os.path.join(ROOT, "harness/jax/cfjax_import.py"), "--serve"],
                        input="".join(json.dumps(r) + "\n" for r in requests), text=True,
                        capture_output=True, check=False)
  answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
  t_imp = time.monotonic()
  if len(answers) != len(requests):
    print(f"the importer answered {len(answers)} of {len(requests)} requests:\n{proc.stderr[-3000:]}")
    return 1
  known = {}
  if args.expect_failures:
    with open(args.expect_failures, encoding="utf-8") as f:
      known = json.load(f)
  same, differ, refused = 0, [], []
  for e, ans in zip(entries, answers):
    base = os.path.basename(e["case"])
    if "error" in ans:
      refused.append((base, ans["error"]))
      continue
    d = first_difference(canonical(originals[e["case"]]), canonical(ans["case"]))
    if d:
      differ.append((base, d))
    else:
      same += 1
  unexpected = 0
  for base, why in refused + differ:
    tag = "known" if base in known else "UNEXPECTED"
    unexpected += base not in known
    print(f"{tag}: {base}: {why}")
  now_pass = [b for b in known if b not in {x for x, _ in refused + differ}
              and any(os.path.basename(e["case"]) == b for e in entries)]
  for b in now_pass:
    print(f"known to fail but round-trips now: {b}")
  not_written = [e for e in index if "script" not in e]
  print(f"{same} round-trip, {len(differ)} differ, {len(refused)} refused by import, "
        f"{len(not_written)} not written by repro; "
        f"{time.monotonic() - t0:.1f} s (repro {t_gen - t0:.1f} s, import {t_imp - t_gen:.1f} s)")
  if args.expect_failures:
    return 1 if unexpected or now_pass else 0
  return 1 if differ or refused else 0


if __name__ == "__main__":
  sys.exit(main())
