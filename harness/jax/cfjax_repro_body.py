"""The kernel body of a `collfuzz repro` script: the case's ops as source (cfjax_repro.py).

Writer mirrors cfjax_translate.Translation op by op: conditions and indices (cond_value,
gmem_index; smem_index with its last `pl.ds` slice), allocation types (alloc_type: an SMEM
allocation's `transforms=(plgpu.TilingTransform(...), plgpu.SwizzleTransform(S))`), and each op
(emit_op): one nested `def scopeN` per `run_scoped`, the copies with their keyword arguments and
their SMEM side's `transpose` (`smem.at[1].transpose((1, 0))`, or `plgpu.transpose_ref(...)`) (a
store's `reduction_op=`, `predicate=` and `commit_group=False` included; its
`wait_smem_to_gmem(0)` left out for `"wait": false`),
`vector_store` as `dst.at[idx][...] = value` (an output slice or an SMEM ref, a peer CTA's as
`plgpu.cluster_ref(ref, {AXIS: IDX})[...] = value`: vector_dst;
vector_src: `jnp.full`, `ref[...]` loads (a peer CTA's SMEM as `plgpu.cluster_ref(ref, {AXIS:
IDX})[...]`), `+ - *`, `jnp.minimum`/`jnp.maximum`,
`(a).astype(jnp.T)`), `commit_smem` (a store's own left out for `"commit_smem": false`),
`commit_smem_to_gmem_group`, `wait_smem_to_gmem(n, wait_read_only=...)`, barrier arrive/wait,
`try_cluster_cancel(res, barrier, collective_axes=...)`,
`pl.when`, a `lax.fori_loop` per `loop` (`def tripN(i, carry)`, its `index` the parameter, spelt
by loop_ident so that it shadows none of the script's names; `_` without one; a loop with a
`carry` is `def tripN(i, acc): ... return NEXT` and `acc = lax.fori_loop(0, n, tripN, INIT)`,
the carry's name spelt by carry_ident and written for its `{"carry": name}` leaves),
`pl.core_map(plgpu.WarpMesh)` per `warp_map`; an `nd_loop` as the decorator `@plgpu.nd_loop(grid,
collective_axes=..., tiling=...)` over `def ndN(loop_info):` (its index names unpacked from
`loop_info.index`, its local index `loop_info.local_index`), with a carry `def ndN(loop_info,
carry): acc = carry ... return NEXT` and `acc = plgpu.nd_loop(..., init_carry=INIT)(ndN)` (nd_loop
passes the carry as the keyword `carry`); each line carries its op's JSON path.
needs_x64: whether a 64-bit dtype appears (the script then enables x64).
"""

from __future__ import annotations

import re

from cfjax_cluster_ref import cluster_member, index_text
from cfjax_case import (BODY_OPS, LOOP_OPS, REDUCTION_OPS, VECTOR_BINARY, CaseError,
                        cancel_params, const_number, index_shape, iota_params, loop_carry,
                        nd_loop_params)
from cfjax_repro_src import (Unsupported, axis_name_src, axis_names_src, dtype_src, ident,
                             num_barriers_src, shape_src, tuple_src)
from cfjax_smem_layout import copy_transpose, transforms_src

# Names a loop's index or carry must not take (besides cfjax_repro_src.RESERVED, which ident
# avoids): the script's other top-level names (cfjax_repro_kernel, _modes, _checks write them),
# what the loop function itself uses, and `_` (each `pl.when` body's `def _():`).
SCRIPT_NAMES = {"carry", "loop_info", "keep_alive", "kernel_body", "make_kernel", "make_inputs", "main",
                "collfuzz_case", "check_array", "check_outputs", "check_raised", "as_array",
                "explicit_values", "fill_values", "normalize", "gpu_callbacks", "MODE",
                "JAX_VERSION", "EXPECTED_EXCEPTION", "EXPECTED_MESSAGE", "EXPECTED_STEP",
                "MESSAGE_MATCH", "_"}

OOB = {"undefined": "UNDEFINED", "promise_in_bounds": "PROMISE_IN_BOUNDS", "zeros": "ZEROS"}


class Writer:
  """Python source of one case's kernel, mirroring cfjax_translate.Translation op by op."""

  def __init__(self, case: dict, mode: str):
    self.case = case
    self.mode = mode
    self.lines: list[str] = []
    self.scopes = 0
    self.loops = 0
    self.loop_names: dict = {}  # the index names of the enclosing loops -> their spelling
    self.loop_spellings: dict = {}  # every loop index name -> its spelling (loop_ident)
    self.carry_spellings: dict = {}  # every loop carry's name -> its spelling (carry_ident)
    # The carries a vector value may read here (of a loop around it, or of one before it in an
    # enclosing body): name -> (spelling, shape, dtype name).
    self.carries: dict = {}

  def emit(self, depth: int, text: str):
    self.lines.append("  " * depth + text)

  # -- conditions and indices (cfjax_translate.cond_value, gmem_index)

  def cond(self, c):
    """(source, is_constant_bool)."""
    if isinstance(c, bool):
      return repr(c), True
    if not isinstance(c, dict):
      raise Unsupported(f"not a condition: {c!r}")
    if "all" in c or "any" in c:
      is_all = "all" in c
      vals = [self.cond(x) for x in c["all" if is_all else "any"]]
      if all(b for _, b in vals):
        consts = [s == "True" for s, _ in vals]
        return repr(all(consts) if is_all else any(consts)), True
      fn = "jnp.logical_and" if is_all else "jnp.logical_or"
      src = vals[0][0]
      for s, _ in vals[1:]:
        src = f"{fn}({src}, {s})"
      return src, False
    if "not" in c:
      s, b = self.cond(c["not"])
      if b:
        return repr(s != "True"), True
      return f"jnp.logical_not({s})", False
    if "axis" not in c:
      raise Unsupported(f"not a condition: {c!r}")
    for k, op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"),
                  ("ge", ">=")):
      if k in c:
        return f"lax.axis_index({c['axis']!r}) {op} {int(c[k])}", False
    raise Unsupported(f"not a condition: {c!r}")

  def gmem_index(self, entries) -> str:
    out = []
    for e in entries:
      if isinstance(e, bool):
        raise Unsupported(f"not an index entry: {e!r}")
      if isinstance(e, int):
        out.append(str(e))
        continue
      if e == ":":  # a whole dimension
        out.append(":")
        continue
      if isinstance(e, dict) and ("axis" in e or "loop" in e):  # a dynamic integer index
        out.append(self.dynamic_index(e))
        continue
      if not isinstance(e, dict) or "start" not in e or "size" not in e:
        raise Unsupported(f"index entry {e!r} (the generator writes integers, \":\", "
                          "lax.axis_index entries and {start, size} entries)")
      start = e["start"]
      if isinstance(start, dict):
        s = self.dynamic_index(start)
      else:
        s = str(int(start))
      out.append(f"pl.ds({s}, {int(e['size'])})")
    return ", ".join(out) + ("," if len(out) == 1 else "")

  def term(self, e: dict) -> str:
    """The index a term names: lax.axis_index(axis), or the spelling (loop_ident) of the index of
    the enclosing loop whose `index` is e["loop"]."""
    if "loop" in e:
      if e["loop"] not in self.loop_names:
        raise Unsupported(f"no enclosing loop has the index {e['loop']!r}")
      return self.loop_names[e["loop"]]
    return f"lax.axis_index({e['axis']!r})"

  def dynamic_index(self, e: dict) -> str:
    """cfjax_translate.dynamic_index: lax.axis_index(axis) * mul + add, or NAME * mul + add for the
    index of the enclosing loop whose `index` is NAME (loop_ident's spelling), each `plus` term's
    `+ lax.axis_index(b) * m2` (or `+ NAME * m2`) before the `+ add`; factors of 1 and 0 left
    out."""
    s = self.term(e)
    mul, add = int(e.get("mul", 1)), int(e.get("add", 0))
    if mul != 1:
      s = f"{s} * {mul}"
    terms = e.get("plus") or []
    if not isinstance(terms, list) or not all(
        isinstance(t, dict) and ("axis" in t) != ("loop" in t) for t in terms):
      raise Unsupported(f"a dynamic index's plus is a list of {{\"axis\" or \"loop\", \"mul\"}} "
                        f"terms: {e!r}")
    muls = [mul]
    for t in terms:
      m = int(t.get("mul", 1))
      muls.append(m)
      s = f"{s} + {self.term(t)}" + (f" * {m}" if m != 1 else "")
    if add != 0:
      s = f"{s} + {add}"
    if e.get("mod") is not None:
      k = int(e["mod"])
      if k < 1:
        raise Unsupported(f"a dynamic index's mod must be >= 1: {e!r}")
      if min(muls) >= 0 and add >= 0:  # never negative: Python's % is lax.rem there
        s = f"({s}) % {k}" if (mul != 1 or add != 0 or terms) else f"{s} % {k}"
      else:  # % floors; the case's mod is lax.rem (truncated) for a negative value too
        s = f"lax.rem({s}, {k})"
    if e.get("multiple_of") is not None:
      s = f"pl.multiple_of({s}, {int(e['multiple_of'])})"
    return s

  def slot_index(self, e, what: str) -> str:
    """An SMEM leading index or a barrier index: an integer or a loop slot (NAME * m + a) % k."""
    if isinstance(e, dict) and "loop" in e:
      if "plus" in e:
        raise Unsupported(f"{what} {e!r}: a slot reads one loop index, no sum (no \"plus\")")
      return self.dynamic_index(e)
    if isinstance(e, bool) or not isinstance(e, int):
      raise Unsupported(f"{what} {e!r} (an integer or a loop slot {{\"loop\": NAME, ...}})")
    return str(e)

  def loop_ident(self, name) -> str:
    """The parameter a loop's `index` NAME becomes in its `def tripN(NAME, carry)`: ident(NAME),
    unless that is a name the script uses (a ref, one of its own functions, a tripN or scopeN,
    `carry`, a loop carry's spelling): then `loop_` + it, with trailing underscores until it is
    free. The same NAME is always spelt the same."""
    if not isinstance(name, str):
      raise Unsupported(f"a loop index that is not a name: {name!r}")
    return self.spelling(name, self.loop_spellings, "loop_")

  def carry_ident(self, name) -> str:
    """The variable a loop's carry NAME becomes (the parameter of its `def tripN(i, NAME)` and
    the loop's result, `NAME = lax.fori_loop(...)`): ident(NAME), unless that is a name the
    script uses (as loop_ident's, a loop index's spelling included): then `carry_` + it, with
    trailing underscores until it is free. The same NAME is always spelt the same."""
    if not isinstance(name, str):
      raise Unsupported(f"a loop carry whose name is not a string: {name!r}")
    return self.spelling(name, self.carry_spellings, "carry_")

  def spelling(self, name: str, spellings: dict, prefix: str) -> str:
    """loop_ident and carry_ident: `name`'s entry in `spellings`, made on first use."""
    if name in spellings:
      return spellings[name]
    taken = self.ref_idents() | set(self.loop_spellings.values()) | \
        set(self.carry_spellings.values()) | SCRIPT_NAMES
    base = ident(name)
    if base in taken or re.fullmatch(r"(scope|trip|nd)\d+", base):
      base = prefix + base
      while base in taken:
        base += "_"
    spellings[name] = base
    return base

  def ref_idents(self) -> set:
    """The identifiers of every array and allocation of the case (kernel_body's parameters and
    each scope's)."""
    names = [a.get("name") for a in self.case.get("inputs", []) + self.case.get("outputs", [])]

    def allocs(ops):
      for op in ops if isinstance(ops, list) else []:
        if isinstance(op, dict):
          if op.get("op") == "run_scoped":
            for a in op.get("allocs", []):
              yield a
          yield from allocs(op.get("body", []))

    names += [a.get("name") for a in allocs(self.case.get("program", []))]
    return {ident(n) for n in names if isinstance(n, str)}

  def smem_index(self, entries) -> str:
    """An SMEM ref's index: static integers, the first one possibly a loop slot, and last possibly
    one slice {"start", "size"} (`pl.ds(start, size)`, as a GMEM entry's: cfjax_translate's
    smem_index)."""
    parts = []
    for d, i in enumerate(entries):
      if isinstance(i, dict) and "start" in i:
        if d != len(entries) - 1:
          raise Unsupported(f"an SMEM index's slice entry comes last: {entries!r}")
        parts.append(self.gmem_index([i]).rstrip(","))
      elif d == 0 and isinstance(i, dict):
        parts.append(self.slot_index(i, "an SMEM index"))
      else:
        parts.append(":" if i == ":" else str(int(i)))
    one = len(parts) == 1 and not isinstance(entries[0], dict)  # a slot alone: `buf.at[i % 2]`
    return ", ".join(parts) + ("," if one else "")

  def smem_copy_src(self, use: dict, path: str) -> str:
    """cfjax_translate.smem_copy_ref as source: `smem.at[idx]`, then with a `transpose`
    `smem.at[idx].transpose((1, 0))`, or `plgpu.transpose_ref(smem.at[idx], (1, 0))` with
    `"transpose_ref": true`."""
    ref = ident(use["alloc"])
    if use.get("index"):
      ref += f".at[{self.smem_index(use['index'])}]"
    try:
      perm, spelt_ref = copy_transpose(use, path)
    except CaseError as e:
      raise Unsupported(str(e)) from e
    if perm is None:
      return ref
    perm_src = tuple_src([str(p) for p in perm])
    if spelt_ref:
      return f"plgpu.transpose_ref({ref}, {perm_src})"
    return f"{ref}.transpose({perm_src})"

  # -- allocations (cfjax_translate.alloc_type)

  def alloc_src(self, a: dict) -> str:
    kind = a.get("kind")
    if kind == "smem":
      try:  # tiling, then swizzle (cfjax_translate.alloc_type)
        transforms = transforms_src(a)
      except CaseError as e:
        raise Unsupported(str(e)) from e
      if transforms:
        return (f"plgpu.SMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])}, "
                f"transforms={transforms})")
      return f"plgpu.SMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "barrier":
      s = (f"plgpu.Barrier(num_arrivals={int(a.get('num_arrivals', 1))}, "
           f"num_barriers={num_barriers_src(a)}")
      if a.get("orders_tensor_core"):
        s += ", orders_tensor_core=True"
      return s + ")"
    if kind == "cluster_barrier":
      s = (f"plgpu.ClusterBarrier(collective_axes={axis_names_src(a['collective_axes'])}, "
           f"num_arrivals={int(a.get('num_arrivals', 1))}, "
           f"num_barriers={num_barriers_src(a)}")
      if a.get("orders_tensor_core"):
        s += ", orders_tensor_core=True"
      if a.get("leader_tracked"):
        s += ", leader_tracked=True"
      return s + ")"
    if kind == "acc":
      return f"plgpu.ACC({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "gmem":
      return f"plgpu.GMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])})"
    if kind == "semaphore":
      t = a.get("type")
      if t not in ("regular", "barrier"):
        raise Unsupported(f"semaphore type {t!r}")
      return f"plgpu.SemaphoreType.{t.upper()}({shape_src(a['shape'])})"
    if kind == "tmem":
      s = f"plgpu.TMEM({shape_src(a['shape'])}, {dtype_src(a['dtype'])}"
      if a.get("collective"):
        s += ", collective=True"
      return s + ")"
    raise Unsupported(f"allocation kind {kind!r}")

  def barrier_src(self, use: dict) -> str:
    ref = ident(use["alloc"])
    if "index" in use and use["index"] is not None:
      return f"{ref}.at[{self.slot_index(use['index'], 'a barrier index')}]"
    return ref

  # -- ops (cfjax_translate.Translation.emit_op)

  @staticmethod
  def flag(op: dict, name: str, default: bool, path: str) -> bool:
    """A store's `commit_group`/`wait` or a wait's `wait_read_only` (absent or null: default)."""
    v = op.get(name)
    if v is None:
      return default
    if not isinstance(v, bool):
      raise Unsupported(f"{path}.{name}: expected a boolean, got {v!r}")
    return v

  def body(self, ops: list, depth: int, path: str):
    if not isinstance(ops, list):
      raise Unsupported(f"{path}: expected an array of ops")
    if not ops:
      self.emit(depth, "pass")
    saved = dict(self.carries)  # a loop's result is read after it in this body only
    for i, op in enumerate(ops):
      self.op(op, depth, f"{path}[{i}]")
    self.carries = saved

  def op(self, op: dict, depth: int, path: str):
    kind = op.get("op") if isinstance(op, dict) else None
    known = {"run_scoped", "copy_gmem_to_smem", "copy_smem_to_gmem", "vector_store",
             "commit_smem", "commit_smem_to_gmem_group", "wait_smem_to_gmem", "barrier_arrive",
             "barrier_wait", "barrier_arrive_and_wait", "try_cluster_cancel", "when", "loop",
             "nd_loop", "warp_map"}
    if kind not in known:
      raise Unsupported(f"{path}: op {kind!r} (the generator writes {', '.join(sorted(known))})")
    if kind == "run_scoped":
      allocs = op.get("allocs", [])
      name = f"scope{self.scopes}"
      self.scopes += 1
      params = ", ".join(ident(a["name"]) for a in allocs)
      self.emit(depth, f"def {name}({params}):  # {path}")
      self.body(op.get("body", []), depth + 1, path + ".body")
      args = [name] + [self.alloc_src(a) for a in allocs]
      if "collective_axes" in op:
        args.append(f"collective_axes={axis_names_src(op['collective_axes'])}")
      self.emit(depth, f"pl.run_scoped({', '.join(args)})")
    elif kind == "copy_gmem_to_smem":
      src = ident(op["src"]["input"])
      if op["src"].get("index"):
        src += f".at[{self.gmem_index(op['src']['index'])}]"
      dst = self.smem_copy_src(op["dst"], path + ".dst")
      args = [src, dst]
      if op.get("barrier") is not None:
        args.append(self.barrier_src(op["barrier"]))
      if op.get("collective_axes") is not None:
        args.append(f"collective_axes={axis_names_src(op['collective_axes'])}")
      lt = op.get("leader_tracked")
      if lt is not None:
        if lt == "replicated":
          args.append("leader_tracked=plgpu.CopyPartition.REPLICATED")
        elif isinstance(lt, dict) and "partitioned" in lt:
          args.append(f"leader_tracked=plgpu.CopyPartition.PARTITIONED({int(lt['partitioned'])})")
        else:
          raise Unsupported(f"{path}.leader_tracked: {lt!r}")
      if op.get("oob_mode") is not None:
        args.append(f"oob_mode=plgpu.OOBFillMode.{OOB[op['oob_mode']]}")
      if op.get("predicate") is not None:
        args.append(f"predicate={self.cond(op['predicate'])[0]}")
      self.emit(depth, f"plgpu.copy_gmem_to_smem({', '.join(args)})  # {path}")
    elif kind == "copy_smem_to_gmem":
      src = self.smem_copy_src(op["src"], path + ".src")
      dst = ident(op["dst"]["output"])
      if op["dst"].get("index"):
        dst += f".at[{self.gmem_index(op['dst']['index'])}]"
      args = [src, dst]
      r = op.get("reduction_op")
      if r is not None:  # cfjax_translate: reduction_op= (a reducing TMA store)
        if r not in REDUCTION_OPS:
          raise Unsupported(f"{path}.reduction_op: {r!r} (one of {', '.join(REDUCTION_OPS)})")
        args.append(f'reduction_op="{r}"')
      if op.get("predicate") is not None:  # cfjax_translate: predicate= (as a copy's)
        args.append(f"predicate={self.cond(op['predicate'])[0]}")
      if not self.flag(op, "commit_group", True, path):  # cfjax_translate: commit_group=False
        args.append("commit_group=False")
      if self.flag(op, "commit_smem", True, path):  # `"commit_smem": false`: no fence before it
        self.emit(depth, f"plgpu.commit_smem()  # {path}")
        self.emit(depth, f"plgpu.copy_smem_to_gmem({', '.join(args)})")
      else:
        self.emit(depth, f"plgpu.copy_smem_to_gmem({', '.join(args)})  # {path}")
      if self.flag(op, "wait", True, path):  # `"wait": false`: no wait after the store
        self.emit(depth, "plgpu.wait_smem_to_gmem(0)")
    elif kind == "vector_store":
      # cfjax_translate: `dst[...] = value` (JAX's swap), the value of the slice's shape and dtype.
      dst, shape, dtype = self.vector_dst(op.get("dst"), path + ".dst")
      value = self.vector_src(op.get("value"), shape, dtype, path + ".value", True)
      self.emit(depth, f"{dst}[...] = {value}  # {path}")
    elif kind == "commit_smem":
      self.emit(depth, f"plgpu.commit_smem()  # {path}")
    elif kind == "commit_smem_to_gmem_group":
      self.emit(depth, f"plgpu.commit_smem_to_gmem_group()  # {path}")
    elif kind == "wait_smem_to_gmem":
      n = op.get("n")
      if not isinstance(n, int) or isinstance(n, bool):  # a negative n: JAX's ValueError at trace
        raise Unsupported(f"{path}.n: expected an integer, got {n!r}")
      args = [str(n)]
      if self.flag(op, "wait_read_only", False, path):
        args.append("wait_read_only=True")
      self.emit(depth, f"plgpu.wait_smem_to_gmem({', '.join(args)})  # {path}")
    elif kind == "barrier_arrive":
      self.emit(depth, f"plgpu.barrier_arrive({self.barrier_src(op['barrier'])})  # {path}")
    elif kind == "barrier_wait":
      self.emit(depth, f"plgpu.barrier_wait({self.barrier_src(op['barrier'])})  # {path}")
    elif kind == "barrier_arrive_and_wait":  # JAX 0.12.0.1
      self.emit(depth,
                f"plgpu.barrier_arrive_and_wait({self.barrier_src(op['barrier'])})  # {path}")
    elif kind == "try_cluster_cancel":
      # cfjax_translate: plgpu.try_cluster_cancel(res, barrier, collective_axes=...), a result
      # index as `res.at[1]`, an empty collective_axes left out (JAX's default).
      try:
        res, index, axes = cancel_params(op, path)
      except CaseError as e:
        raise Unsupported(str(e)) from e
      ref = ident(res) + (f".at[{', '.join(str(i) for i in index)}]" if index else "")
      args = [ref, self.barrier_src(op["barrier"])]
      if axes:
        args.append(f"collective_axes={tuple_src([repr(a) for a in axes])}")
      self.emit(depth, f"plgpu.try_cluster_cancel({', '.join(args)})  # {path}")
    elif kind == "when":
      src, _ = self.cond(op["cond"])
      self.emit(depth, f"@pl.when({src})  # {path}")
      self.emit(depth, "def _():")
      self.body(op.get("body", []), depth + 1, path + ".body")
    elif kind == "loop":
      self.loop(op, depth, path)
    elif kind == "nd_loop":
      self.nd_loop(op, depth, path)
    elif kind == "warp_map":
      # cfjax_translate: the warp-level context; lax.axis_index(axis) is the warp (0..3).
      self.emit(depth, f"@pl.core_map(plgpu.WarpMesh(axis_name={op['axis']!r}))  # {path}")
      self.emit(depth, "def _():")
      self.body(op.get("body", []), depth + 1, path + ".body")


  def loop(self, op: dict, depth: int, path: str):
    """cfjax_translate.emit_loop: lax.fori_loop over a static trip count (barrier phases carry
    across trips), `def tripN(i, carry): ... return carry` and `lax.fori_loop(0, n, tripN,
    None)`; with a `carry`, `def tripN(i, acc): ... return NEXT` and `acc = lax.fori_loop(0, n,
    tripN, INIT)` (INIT written before the carry is in scope: it may not read it; `acc` the
    carry's spelling, carry_ident, which the ops after the loop read as its result)."""
    if not isinstance(op.get("trip_count"), int) or isinstance(op.get("trip_count"), bool):
      raise Unsupported(f"{path}.trip_count: expected an integer")
    try:
      carry = loop_carry(op, path)
    except CaseError as e:
      raise Unsupported(str(e)) from e
    name = f"trip{self.loops}"
    self.loops += 1
    index = "_"
    if op.get("index") is not None:  # the body's {"loop": NAME} entries use the fori_loop's i
      index = self.loop_ident(op["index"])
    param, init, own = "carry", "None", None
    if carry is not None:
      shape, dtype = tuple(carry["shape"]), carry["dtype"]
      init = self.vector_src(carry["init"], shape, dtype, path + ".carry.init", True)
      param = self.carry_ident(carry["name"])
      own = (param, shape, dtype)
    self.emit(depth, f"def {name}({index}, {param}):  # {path}")
    saved, saved_carries = dict(self.loop_names), dict(self.carries)
    if op.get("index") is not None:
      self.loop_names[op["index"]] = index
    if carry is not None:
      self.carries[carry["name"]] = own
    if op.get("body") or carry is None:  # a carry's `return` alone needs no `pass`
      self.body(op.get("body", []), depth + 1, path + ".body")
    if carry is not None:
      nxt = self.vector_src(carry["next"], own[1], own[2], path + ".carry.next", True)
      self.emit(depth + 1, f"return {nxt}  # {path}.carry.next")
    else:
      self.emit(depth + 1, "return carry")
    self.loop_names, self.carries = saved, saved_carries
    if carry is None:
      self.emit(depth, f"lax.fori_loop(0, {int(op['trip_count'])}, {name}, None)")
      return
    self.carries[carry["name"]] = own  # the loop's result, for the ops after it
    self.emit(depth, f"{param} = lax.fori_loop(0, {int(op['trip_count'])}, {name}, {init})  "
              f"# {path}.carry.init")

  def nd_loop(self, op: dict, depth: int, path: str):
    """cfjax_translate.emit_nd_loop: `@plgpu.nd_loop(grid, collective_axes=A, tiling=T)` over
    `def ndN(loop_info):`, the named index entries unpacked from `loop_info.index` (`_` for an
    unnamed one) and the local index from `loop_info.local_index`, each spelt by loop_ident; with
    a `carry`, `def ndN(loop_info, carry):` whose first line binds the carry's spelling
    (carry_ident) to `carry` (nd_loop calls the body with the keyword `carry`), `return NEXT`, and
    `acc = plgpu.nd_loop(..., init_carry=INIT)(ndN)` after it."""
    try:
      grid, _, tiling, names, local = nd_loop_params(op, path)
      carry = loop_carry(op, path)
    except CaseError as e:
      raise Unsupported(str(e)) from e
    name = f"nd{self.loops}"
    self.loops += 1
    args = [tuple_src([str(d) for d in grid]),
            f"collective_axes={axis_name_src(op['collective_axes'])}"]
    if tiling is not None:
      args.append(f"tiling={tuple_src([str(d) for d in tiling])}")
    info = "loop_info"
    while info in self.ref_idents():
      info += "_"
    spelt = ["_" if n is None else self.loop_ident(n) for n in names]
    local_spelt = None if local is None else self.loop_ident(local)
    init = own = None
    if carry is not None:
      shape, dtype = tuple(carry["shape"]), carry["dtype"]
      init = self.vector_src(carry["init"], shape, dtype, path + ".carry.init", True)
      own = (self.carry_ident(carry["name"]), shape, dtype)
      self.emit(depth, f"def {name}({info}, carry):  # {path}")
      self.emit(depth + 1, f"{own[0]} = carry")
    else:
      self.emit(depth, f"@plgpu.nd_loop({', '.join(args)})  # {path}")
      self.emit(depth, f"def {name}({info}):")
    if any(n is not None for n in names):
      self.emit(depth + 1, f"{', '.join(spelt)}{',' if len(spelt) == 1 else ''} = {info}.index")
    if local is not None:
      self.emit(depth + 1, f"{local_spelt} = {info}.local_index")
    saved, saved_carries = dict(self.loop_names), dict(self.carries)
    for n, sp in zip(names, spelt):
      if n is not None:
        self.loop_names[n] = sp
    if local is not None:
      self.loop_names[local] = local_spelt
    if carry is not None:
      self.carries[carry["name"]] = own
    if op.get("body") or (carry is None and not any(n is not None for n in names)
                          and local is None):
      self.body(op.get("body", []), depth + 1, path + ".body")
    if carry is not None:
      nxt = self.vector_src(carry["next"], own[1], own[2], path + ".carry.next", True)
      self.emit(depth + 1, f"return {nxt}  # {path}.carry.next")
    self.loop_names, self.carries = saved, saved_carries
    if carry is None:
      return
    self.carries[carry["name"]] = own  # the loop's result, for the ops after it
    args.append(f"init_carry={init}")
    self.emit(depth, f"{own[0]} = plgpu.nd_loop({', '.join(args)})({name})  "
              f"# {path}.carry.init")

  def vector_dst(self, d, path: str):
    """cfjax_translate.vector_dst as source: (`o.at[idx]` or `buf.at[i]`, the slice's shape, the
    dtype name)."""
    if not isinstance(d, dict) or ("output" in d) == ("alloc" in d):
      raise Unsupported(f"{path}: a vector_store's dst names an \"output\" or an \"alloc\"")
    index = d.get("index") or []
    if "alloc" in d:
      arr = self.find_alloc(self.case.get("program", []), d["alloc"])
      what = "SMEM allocation"
    else:
      arr = next((o for o in self.case.get("outputs", []) if o.get("name") == d["output"]), None)
      what = "output"
    if arr is None or "shape" not in arr or "dtype" not in arr:
      raise Unsupported(f"{path}: no {what} named {d.get('alloc', d.get('output'))!r}")
    src = ident(arr["name"])
    if index:
      src += f".at[{self.smem_index(index) if 'alloc' in d else self.gmem_index(index)}]"
    src = self.cluster_ref(d, src, path)  # a peer CTA's SMEM (a DSMEM write)
    try:
      shape = index_shape(arr["shape"], index)
    except CaseError as e:
      raise Unsupported(f"{path}: {e}") from e
    return src, shape, arr["dtype"]

  def cluster_ref(self, d: dict, ref: str, path: str) -> str:
    """`ref` (an SMEM load's or a vector_store dst's, indexed) through cfjax_translate's
    cluster_ref where `d` has a "cluster" member: `plgpu.cluster_ref(ref, {AXIS: IDX})`."""
    try:
      cluster = cluster_member(d, path)
    except CaseError as e:
      raise Unsupported(str(e)) from e
    if cluster is None:
      return ref
    axis, idx = cluster
    text = index_text(idx, "" if isinstance(idx, int) else self.term(idx))
    return (f"plgpu.cluster_ref({ref}, {{{axis!r}: "
            f"{text if text is not None else self.dynamic_index(idx)}}})")

  @classmethod
  def find_alloc(cls, ops, name: str):
    """The allocation named `name` among the run_scoped allocations of `ops` (nested bodies
    searched too; names are unique in a case), or None."""
    for op in ops if isinstance(ops, list) else []:
      if not isinstance(op, dict):
        continue
      for a in op.get("allocs", []) if op.get("op") == "run_scoped" else []:
        if isinstance(a, dict) and a.get("name") == name:
          return a
      found = cls.find_alloc(op.get("body", []), name)
      if found is not None:
        return found
    return None

  def vector_src(self, v, shape: tuple, dtype: str, path: str, top: bool = False) -> str:
    """cfjax_translate.vector_value as source: `jnp.full(shape, c, jnp.T)`, `buf.at[0][...]`,
    `x.at[idx][...]`, `a + b` (parenthesised inside another operator), `jnp.maximum(a, b)`,
    `(a + b).astype(jnp.float16)`, a loop carry's variable (`acc`)."""
    if not isinstance(v, dict) or len(v) != 1:
      raise Unsupported(f"{path}: not a vector value: {v!r}")
    (kind, arg), = v.items()
    if kind == "carry":  # a loop's carry: its variable (Writer.loop)
      if not isinstance(arg, str) or arg not in self.carries:
        raise Unsupported(f"{path}.carry: no loop around this value, nor one before it in an "
                          f"enclosing body, carries {arg!r}")
      spelling, cshape, cdtype = self.carries[arg]
      if tuple(cshape) != tuple(shape) or cdtype != dtype:
        raise Unsupported(f"{path}.carry: the carry {arg!r} is {cdtype}{list(cshape)}, here "
                          f"{dtype}{list(shape)} is read")
      return spelling
    if kind == "const":
      try:
        c = const_number(arg, dtype, path)
      except CaseError as e:
        raise Unsupported(str(e)) from e
      return f"jnp.full({shape_src(shape)}, {c!r}, {dtype_src(dtype)})"
    if kind == "iota":
      # cfjax_translate: Lane's iota lowers only with a layout cast right after it.
      try:
        dim, vec = iota_params(arg, shape, int(re.search(r"\d+$", dtype).group()), path)
      except CaseError as e:
        raise Unsupported(str(e)) from e
      if vec is None:  # {"layout_cast": false}
        return f"lax.broadcasted_iota({dtype_src(dtype)}, {shape_src(shape)}, {dim})"
      return (f"plgpu.layout_cast(lax.broadcasted_iota({dtype_src(dtype)}, {shape_src(shape)}, "
              f"{dim}), plgpu.Layout.WG_STRIDED({shape_src(shape)}, vec_size={vec}))")
    if kind == "broadcast":
      if not isinstance(arg, dict) or \
          not {"shape", "value"} <= set(arg) <= {"shape", "dims", "value"}:
        raise Unsupported(f"{path}.broadcast: expected {{\"shape\": [...], \"dims\": [...], "
                          f"\"value\": v}}, got {arg!r}")
      a = self.vector_src(arg["value"], tuple(arg["shape"]), dtype, f"{path}.broadcast.value",
                          top=True)
      if "dims" in arg:
        dims = tuple(int(d) for d in arg["dims"])
        return f"lax.broadcast_in_dim({a}, {shape_src(shape)}, {dims!r})"
      return f"jnp.broadcast_to({a}, {shape_src(shape)})"
    if kind == "load":
      if isinstance(arg, dict) and "alloc" in arg:
        ref = ident(arg["alloc"])
        if arg.get("index"):
          ref += f".at[{self.smem_index(arg['index'])}]"
        ref = self.cluster_ref(arg, ref, f"{path}.load")
      elif isinstance(arg, dict) and "input" in arg:
        ref = ident(arg["input"])
        if arg.get("index"):
          ref += f".at[{self.gmem_index(arg['index'])}]"
      else:
        raise Unsupported(f"{path}.load: a load names an \"alloc\" or an \"input\": {arg!r}")
      return f"{ref}[...]"
    if kind in VECTOR_BINARY:
      if not isinstance(arg, list) or len(arg) != 2:
        raise Unsupported(f"{path}.{kind}: expected two values, got {arg!r}")
      calls = {"min": "jnp.minimum", "max": "jnp.maximum", "shift_left": "lax.shift_left",
               "shift_right_logical": "lax.shift_right_logical",
               "shift_right_arithmetic": "lax.shift_right_arithmetic"}
      call = kind in calls  # a call's arguments need no parentheses
      a = self.vector_src(arg[0], shape, dtype, f"{path}.{kind}[0]", top=call)
      b = self.vector_src(arg[1], shape, dtype, f"{path}.{kind}[1]", top=call)
      if call:
        return f"{calls[kind]}({a}, {b})"
      sym = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}[kind]
      return f"{a} {sym} {b}" if top else f"({a} {sym} {b})"
    if kind == "convert":
      # cfjax_translate: `a.astype(jnp.T)`, `a` (its loads and constants) of dtype `from`; a
      # method call binds tighter than any operator, so only `a` may need parentheses.
      if not isinstance(arg, dict) or set(arg) != {"from", "value"} or \
          not isinstance(arg["from"], str):
        raise Unsupported(f"{path}.convert: expected {{\"from\": dtype, \"value\": value}}, "
                          f"got {arg!r}")
      a = self.vector_src(arg["value"], shape, arg["from"], f"{path}.convert.value")
      return f"{a}.astype({dtype_src(dtype)})"
    raise Unsupported(f"{path}: vector value {kind!r} (const, iota, broadcast, load, add, sub, mul, "
                      "min, max, "
                      "and, or, xor, shift_left, shift_right_logical, shift_right_arithmetic, "
                      "convert, carry)")


def needs_x64(case: dict) -> bool:
  dtypes = [a["dtype"] for a in case.get("inputs", []) + case.get("outputs", [])]

  def allocs(ops):
    for op in ops:
      if isinstance(op, dict):
        if op.get("op") == "run_scoped":
          for a in op.get("allocs", []):
            yield a
        if op.get("op") in BODY_OPS:
          yield from allocs(op.get("body", []))

  def carries(ops):
    for op in ops:
      if isinstance(op, dict):
        if op.get("op") in LOOP_OPS and isinstance(op.get("carry"), dict):
          yield op["carry"]
        if op.get("op") in BODY_OPS:
          yield from carries(op.get("body", []))

  dtypes += [a["dtype"] for a in allocs(case["program"]) if "dtype" in a]
  dtypes += [c.get("dtype") for c in carries(case["program"])]
  return any(d in ("int64", "uint64", "float64") for d in dtypes)
