"""Copies: TMA copies between GMEM and SMEM and their waits (`collfuzz import`, cfjax_import.py).

CopiesMixin reads `copy_gmem_to_smem` (source, destination and barrier transforms,
`collective_axes`, `leader_tracked`, `oob_mode`, `predicate`) and `copy_smem_to_gmem` (with its
`reduction_op`, `predicate` and `commit_group`) into the case's ops of those names; the SMEM side's
`.transpose(p)` (or plgpu.transpose_ref) is its `transpose`, a transpose before the `.at[...]`
commuted after it as the Mosaic GPU lowering does (copy_smem_side, commute_transpose). The case's
store is `commit_smem(); copy_smem_to_gmem(...); wait_smem_to_gmem(0)`: a `wait_smem_to_gmem` with
n=0 and wait_read_only=False right after a store in the same jaxpr is part of that store
(pair_store_waits); a store without one gets `"wait": false`, and every other wait is a
`wait_smem_to_gmem` op. A `commit_smem` followed in the same jaxpr by a store, with only other
`commit_smem`s and index arithmetic (effect-free scalar equations) between, is part of that store
(pair_store_commits); a store without one gets `"commit_smem": false`, and every other
`commit_smem` is a `commit_smem` op (fence.proxy.async.shared::cta). `commit_group` (from
`plgpu.commit_smem_to_gmem_group()`) is a `commit_smem_to_gmem_group` op.
"""

from __future__ import annotations

from cfjax_case import REDUCTION_OPS
from cfjax_import_values import Cond, Ref, axis_names_json, user_line


def _index_arithmetic(eqn) -> bool:
  """An equation that computes scalars and does nothing else (no effect but reading a named
  axis, as lax.axis_index does; every output of rank 0; a call such as `%`'s jit with its inner
  effects on the equation): the arithmetic of a store's index or predicate, traced between a
  `plgpu.commit_smem()` and the store it begins."""
  if any(type(f).__name__ != "NamedAxisEffect" for f in getattr(eqn, "effects", ())):
    return False
  return bool(eqn.outvars) and all(
      getattr(getattr(v, "aval", None), "shape", None) == () for v in eqn.outvars)


class CopiesMixin:
  """The copies, for cfjax_import.Importer."""

  def copy_gmem_to_smem(self, eqn, env: dict) -> dict:
    p = eqn.params
    args = list(eqn.invars)
    src, dst = args[0], args[1]
    rest = args[2:]
    barrier = None
    if p["has_barrier"]:
      barrier, rest = rest[0], rest[1:]
    n_src = p["src_transforms_treedef"].num_leaves
    n_dst = p["dst_transforms_treedef"].num_leaves
    n_bar = p["barrier_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:n_src + n_dst])
    bar_t = p["barrier_transforms_treedef"].unflatten(rest[n_src + n_dst:n_src + n_dst + n_bar])
    pred = rest[n_src + n_dst + n_bar:]
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "input":
      self.refuse(eqn, "copy_gmem_to_smem from a ref that is not a kernel input (a case "
                   "copies from an input)")
    if not isinstance(d, Ref) or d.kind != "alloc" or d.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_gmem_to_smem to a ref that is not an SMEM allocation in scope")
    op = {"op": "copy_gmem_to_smem",
          "src": {"input": s.name}, "dst": {"alloc": d.name}}
    si = self.gmem_index(env, src_t, s, eqn, "copy_gmem_to_smem's source")
    if si:
      op["src"]["index"] = si
    di, perm = self.copy_smem_side(env, dst_t, d, eqn, "copy_gmem_to_smem's destination")
    if di:
      op["dst"]["index"] = di
    if perm is not None:
      op["dst"]["transpose"] = perm
    if barrier is not None:
      op["barrier"] = self.barrier_use(env, env.get(barrier), bar_t, eqn,
                                       "copy_gmem_to_smem's barrier")
    if p.get("collective_axes") is not None:
      op["collective_axes"] = axis_names_json(p["collective_axes"])
    lt = p.get("leader_tracked")
    if lt is not None:
      kind = type(lt).__name__.lower()
      axis = getattr(lt, "axis", None)
      if axis is None and "partitioned" not in str(lt).lower():
        op["leader_tracked"] = "replicated"
      else:
        op["leader_tracked"] = {"partitioned": int(axis)}
      del kind
    if p.get("oob_mode") is not None:
      op["oob_mode"] = p["oob_mode"].name.lower()
    if p.get("has_user_predicate"):
      op["predicate"] = self.copy_predicate(env, pred[0], eqn, "copy_gmem_to_smem")
    # Asynchronous, but a load the case evaluates after it reads after issuing it.
    self.wrote("alloc", d.name, di, user_line(eqn, self.user_file, self.kernel_line),
               "the copy_gmem_to_smem")
    return op

  def copy_smem_side(self, env: dict, transforms, ref: Ref, eqn, what: str):
    """The SMEM side of a copy -> (its index entries, static_index's with one last slice allowed;
    its `transpose` as a list, None without one). After the allocation's own undo transforms
    (user_transforms), a `jax._src.state.types.TransposeTransform` (`.transpose(p)`,
    plgpu.transpose_ref) may come after the `.at[...]` (`smem.at[1].transpose(p)`: the case's
    order) or before it (`smem.transpose(p).at[:, i]`), which is commuted into index-then-transpose
    as the Mosaic GPU lowering commutes it (commute_transpose). An identity permutation is left
    out. Two transposes, or a transpose with anything but one `.at[...]`, are refused."""
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    user = self.user_transforms(transforms, ref, eqn, what)
    at = [k for k, t in enumerate(user) if type(t).__name__ == "TransposeTransform"]
    if not at:
      return self.static_index(env, transforms, ref, eqn, what, allow_slice=True), None
    kinds = ", ".join(type(t).__name__ for t in user)
    others = [t for k, t in enumerate(user) if k != at[0]]
    if len(at) > 1 or len(others) > 1 or (others and not isinstance(others[0], indexing.NDIndexer)):
      self.refuse(eqn, f"{what}: the ref of `{ref.name}` is transformed by {kinds}; a case's "
                  "copy transposes its SMEM ref once, with at most one `.at[...]` before the "
                  "transpose (`smem.at[i].transpose(p)`) or after it (`smem.transpose(p).at[...]`)")
    perm = tuple(int(p) for p in user[at[0]].permutation)
    indices = None
    if others and at[0] == 1:  # .at[...] then .transpose(p): the case's order
      indices = others[0].indices
    elif others:  # .transpose(p) then .at[...]: commuted
      indices, perm = self.commute_transpose(perm, tuple(others[0].indices), ref, eqn, what)
      what = (f"{what} (`{ref.name}.transpose({user[at[0]].permutation}).at[...]` commuted into "
              f"`{ref.name}.at[...].transpose(...)` as JAX's lowering commutes it)")
    entries = [] if indices is None else self.index_entries(env, indices, ref, eqn, what)
    entries = self.smem_entries(entries, ref, eqn, what, True)
    if perm == tuple(range(len(perm))):
      return entries, None  # the identity: the ref itself
    return entries, list(perm)

  def commute_transpose(self, perm: tuple, idxs: tuple, ref: Ref, eqn, what: str):
    """`ref.transpose(perm).at[idxs]` -> (the indices on `ref`, the permutation after them), as
    jax._src.pallas.mosaic_gpu.core.commute_transpose_indexer computes them (JAX 0.11.2 and
    0.12.0.1 alike): view dim j is ref dim perm[j], so ref dim k takes idxs[perm^-1[k]]; the
    permutation keeps the entries that are not the numbers of integer-indexed view dims,
    renumbered past them. That is the view's own permutation only where dropping those numbers
    drops the ref dims those view dims are (perm[j] for each integer-indexed j); where it is not,
    JAX's Lane lowering addresses SMEM through the wrong permutation (an error for unequal dims,
    `Expected the SMEM reference to have the same shape as the transformed slice`, the data
    transposed for equal ones), so no case holds what the kernel does: refused."""
    from jax._src.state import indexing  # pylint: disable=import-outside-toplevel
    if len(idxs) != len(perm):
      self.refuse(eqn, f"{what}: an `.at[...]` of {len(idxs)} indices after a transpose of "
                  f"{len(perm)} dims of `{ref.name}`")
    removed = [i for i, ix in enumerate(idxs) if not isinstance(ix, (slice, indexing.Slice))]
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
      inverse[p] = i
    jax_perm = tuple(p - sum(d < p for d in removed) for p in perm if p not in removed)
    removed_ref = [perm[j] for j in removed]
    view_perm = tuple(p - sum(d < p for d in removed_ref) for p in perm if p not in removed_ref)
    if jax_perm != view_perm:
      self.refuse(eqn, f"{what}: `{ref.name}`.transpose({perm}) indexed after the transpose at "
                  f"view dims {removed}; JAX's lowering (commute_transpose_indexer) commutes it "
                  f"into the permutation {jax_perm} where the view's is {view_perm}, so no case "
                  "holds what the compiled kernel does (index before the transpose: "
                  "`smem.at[i].transpose(p)`)")
    return tuple(idxs[i] for i in inverse), jax_perm

  def copy_predicate(self, env: dict, var, eqn, name: str):
    """A copy's or store's `predicate=` (its last flat argument): `true`, `false` or a
    condition."""
    x = self.value(env, var)
    if isinstance(x, bool):
      return x
    if isinstance(x, Cond):
      return x.j
    self.refuse(eqn, f"{name}'s predicate is {self.describe(x)} (a predicate is a condition on "
                "lax.axis_index)")
    return None

  def copy_smem_to_gmem(self, eqn, env: dict) -> dict:
    p = eqn.params
    src, dst, *rest = eqn.invars
    pred = None
    if p.get("has_user_predicate"):  # predicate= is the last flat argument
      rest, pred = rest[:-1], rest[-1]
    n_src = p["src_transforms_treedef"].num_leaves
    src_t = p["src_transforms_treedef"].unflatten(rest[:n_src])
    dst_t = p["dst_transforms_treedef"].unflatten(rest[n_src:])
    s, d = env.get(src), env.get(dst)
    if not isinstance(s, Ref) or s.kind != "alloc" or s.alloc["kind"] != "smem":
      self.refuse(eqn, "copy_smem_to_gmem from a ref that is not an SMEM allocation")
    if not isinstance(d, Ref) or d.kind != "output":
      self.refuse(eqn, "copy_smem_to_gmem to a ref that is not a kernel output")
    op = {"op": "copy_smem_to_gmem", "src": {"alloc": s.name}, "dst": {"output": d.name}}
    si, perm = self.copy_smem_side(env, src_t, s, eqn, "copy_smem_to_gmem's source")
    if si:
      op["src"]["index"] = si
    if perm is not None:
      op["src"]["transpose"] = perm
    di = self.gmem_index(env, dst_t, d, eqn, "copy_smem_to_gmem's destination")
    if di:
      op["dst"]["index"] = di
    if p.get("reduction_op") is not None:  # a reducing store (TMAReductionOp), omitted when None
      if str(p["reduction_op"]) not in REDUCTION_OPS:
        self.refuse(eqn, f"copy_smem_to_gmem with reduction_op={p['reduction_op']!r} (the case "
                    f"format knows {', '.join(REDUCTION_OPS)})")
      op["reduction_op"] = str(p["reduction_op"])
    if pred is not None:
      op["predicate"] = self.copy_predicate(env, pred, eqn, "copy_smem_to_gmem")
    if not p.get("commit_group", True):  # left for a later commit; omitted when True
      op["commit_group"] = False
    if id(eqn) not in self.committed_stores:  # no commit_smem right before it
      op["commit_smem"] = False
    if id(eqn) not in self.waited_stores:  # no wait_smem_to_gmem(0) right after it
      op["wait"] = False
    self.wrote("output", d.name, di, user_line(eqn, self.user_file, self.kernel_line),
               "the copy_smem_to_gmem")
    return op

  def pair_store_waits(self, eqns):
    """Marks (in waited_stores) each copy_smem_to_gmem of a jaxpr's equations that is followed
    right away by a wait_smem_to_gmem(0) without wait_read_only, and that wait: the two are one
    case store (the op's default `"wait": true`). A `commit_smem` between them is an op of its
    own, so the store then gets `"wait": false` and the wait is an op."""
    eqns = list(eqns)
    for k, e in enumerate(eqns):
      if e.primitive.name != "copy_smem_to_gmem" or k + 1 >= len(eqns):
        continue
      w = eqns[k + 1]
      if w.primitive.name == "wait_smem_to_gmem":
        n = w.params.get("n")
        if n == 0 and not isinstance(n, bool) and not w.params.get("wait_read_only"):
          self.waited_stores.add(id(e))
          self.waited_stores.add(id(w))

  def pair_store_commits(self, eqns):
    """Marks (in committed_stores) each commit_smem of a jaxpr's equations that a
    copy_smem_to_gmem follows with only other commit_smems and index arithmetic between, and
    that store: the store's default `"commit_smem": true` (its `plgpu.commit_smem()`)."""
    eqns = list(eqns)
    for k, e in enumerate(eqns):
      if e.primitive.name != "commit_smem":
        continue
      j = k + 1
      while j < len(eqns) and (eqns[j].primitive.name == "commit_smem" or
                               _index_arithmetic(eqns[j])):
        j += 1
      if j < len(eqns) and eqns[j].primitive.name == "copy_smem_to_gmem":
        self.committed_stores.add(id(e))
        self.committed_stores.add(id(eqns[j]))

  def commit_smem(self, eqn, env: dict, ops: list):
    """plgpu.commit_smem(): part of the store after it (pair_store_commits), or a `commit_smem`
    op (a fence.proxy.async.shared::cta of its own)."""
    if id(eqn) not in self.committed_stores:
      ops.append({"op": "commit_smem"})

  def commit_group(self, eqn, env: dict, ops: list):
    ops.append({"op": "commit_smem_to_gmem_group"})  # plgpu.commit_smem_to_gmem_group()

  def wait_smem_to_gmem(self, eqn, env: dict, ops: list):
    if id(eqn) in self.waited_stores:
      return  # the wait of the store before it (pair_store_waits)
    n = eqn.params.get("n", 0)
    if not isinstance(n, int) or isinstance(n, bool):
      self.refuse(eqn, f"wait_smem_to_gmem({n!r}) (a case's n is an integer)")
    op = {"op": "wait_smem_to_gmem", "n": int(n)}
    if eqn.params.get("wait_read_only"):
      op["wait_read_only"] = True
    ops.append(op)
