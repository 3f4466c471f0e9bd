"""Stale loads: a vector value read where it is used (`collfuzz import`, cfjax_import.py).

In a case a vector value (a vector_store's `value`, a loop carry's `init` and `next`) is evaluated
where it is used (docs/case-format.md "vector_store", "Loop-carried values"): its `{"load":
{"alloc": ...}}` leaves read the SMEM allocation at the store, at the loop (`init`) or at the end
of the trip, after the body's ops (`next`). The jaxpr is data flow: `v = tile[...]; tile[...] = v *
2; o_ref[...] = v + 1` stores the tile as it was loaded, but the case `vector_store` of `tile + 1`
would read it after the write: a different kernel. StaleMixin keeps the order of the loads and
writes the importer emits (one sequence number each: `seq`) and refuses a use of a value one of
whose loads was written since (ImportRefused, naming the load's line and the write's):

- every writing op the importer emits records its write (`wrote`): copy_gmem_to_smem (its SMEM
  destination, even though the copy is asynchronous: the case would read after issuing it),
  try_cluster_cancel (its result, asynchronous as well), vector_store (SMEM or output destination), copy_smem_to_gmem (output destination); a write in
  a pl.when body counts as if it happened;
- each `get` of an SMEM allocation is a Load (`loaded`) that the Vec holding it carries
  (cfjax_import_vectors.Vec.loads, the union of its operands'); loads of inputs are never written
  (inputs are read-only) and are not recorded; outputs are never loaded into a vector value;
- at a use (`check_fresh`: the vector_store's value, a carry's `init` at the loop, its `next` at
  the end of the trip), a write of the loaded ref after the load, at an index that may overlap the
  load's (both static and different, or the same lax.fori_loop slot `(i * m + a) % k` with
  another `a`, do not), refuses the import;
- a value loaded before a loop (fori_loop, nd_loop) that may take more than one trip and used in
  its body is refused where the body writes that ref anywhere (before the use or after it): from
  the second trip on the case would read what the body wrote (`enter_loop`, `leave_loop`).
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from cfjax_import_values import user_line


class Load(NamedTuple):
  """A `get` of an SMEM allocation: its case name, index entries, order and FILE:LINE."""
  ref: str
  index: list
  seq: int
  where: str


class Write(NamedTuple):
  """A write the importer emitted: the ref's index entries, order, FILE:LINE and what wrote it."""
  index: list
  seq: int
  where: str
  what: str


class _Frame:
  """A loop being walked: the sequence number at its start, what it is, where, and the uses of
  vector values inside its body (loads, the using eqn, the use's words)."""

  def __init__(self, seq: int):
    self.seq = seq
    self.uses: list = []


# The words of a refusal, per use: (what the value is, when the write came, how a case evaluates
# the value, what to do instead).
_USES = {
    "store": ("the value stored here", "before this store",
              "a case evaluates a vector value where it is stored",
              "load the value again after the write, or store it before"),
    "init": ("the value the {loop}'s carry `{carry}` starts from", "before the loop",
             "a case evaluates a carry's init where the loop starts",
             "load the value again after the write, or start the loop before it"),
    "next": ("the value the {loop}'s body returns for its carry `{carry}`",
             "before the end of the trip",
             "a case evaluates a carry's next at the end of each trip, after the body's ops",
             "load the value again after the write"),
}


def union(*loads_lists) -> tuple:
  """The loads of several operands, each once (in order)."""
  seen, out = set(), []
  for loads in loads_lists:
    for ld in loads:
      if ld.seq not in seen:
        seen.add(ld.seq)
        out.append(ld)
  return tuple(out)


def _slot(e):
  """A loop-slot entry's (loop, mul, add, mod), or None for anything else."""
  if isinstance(e, dict) and "loop" in e and set(e) <= {"loop", "mul", "add", "mod"}:
    return e["loop"], e.get("mul", 1), e.get("add", 0), e.get("mod")
  return None


def _range(e):
  """An entry's static [lo, hi) along its dim, or None (dynamic, ':')."""
  if isinstance(e, int) and not isinstance(e, bool):
    return e, e + 1
  if isinstance(e, dict) and isinstance(e.get("start"), int) and isinstance(e.get("size"), int):
    return e["start"], e["start"] + e["size"]
  return None


def _disjoint_entry(a, b) -> bool:
  ra, rb = _range(a), _range(b)
  if ra is not None and rb is not None:
    return ra[1] <= rb[0] or rb[1] <= ra[0]
  sa, sb = _slot(a), _slot(b)
  if sa is not None and sb is not None and sa[0] == sb[0] and sa[1] == sb[1] and sa[3] == sb[3]:
    # The same trip of the loop (a load and a write that both read its index are both in its
    # body, and so is the use of the load): (i * m + a) % k against (i * m + a') % k.
    k = sa[3]
    return (sa[2] - sb[2]) % k != 0 if k else sa[2] != sb[2]
  return False


def overlaps(a, b) -> bool:
  """Whether two SMEM index lists (leading entries; missing ones: the whole dim) may address a
  common element: no dim of theirs is told disjoint."""
  a, b = list(a or []), list(b or [])
  return not any(_disjoint_entry(x, y) for x, y in zip(a, b))


class StaleMixin:
  """Loads, writes and the uses of vector values, for cfjax_import.Importer."""

  def line_of(self, where: str) -> str:
    """`line N` for a FILE:LINE in the user's file, else FILE:LINE as it is."""
    m = re.match(r"^(.*):(\d+)$", where or "")
    if m and os.path.abspath(m.group(1)) == os.path.abspath(self.user_file):
      return f"line {m.group(2)}"
    return where

  def loaded(self, ref: str, index, where: str) -> Load:
    """A `get` of the SMEM allocation `ref` just read: its Load."""
    self.stale_seq += 1
    return Load(ref, list(index or []), self.stale_seq, where)

  def wrote(self, kind: str, name: str, index, where: str, what: str):
    """An op the importer emits writes `name` (kind "alloc" or "output") at `index`."""
    self.stale_seq += 1
    self.ref_writes.setdefault((kind, name), []).append(
        Write(list(index or []), self.stale_seq, where, what))

  def check_fresh(self, eqn, vec, use: str, loop: str = "", carry: str = ""):
    """Refuses the import where a load of `vec` (used by `eqn` as `use`: "store", "init",
    "next") reads a ref written since; records the use for the loops around it."""
    loads = tuple(getattr(vec, "loads", ()))
    if not loads:
      return
    subject, when, why, fix = (s.format(loop=loop, carry=carry) for s in _USES[use])
    for ld in loads:
      for w in self.ref_writes.get(("alloc", ld.ref), ()):
        if w.seq > ld.seq and overlaps(ld.index, w.index):
          self.refuse(eqn, f"{subject} loads `{ld.ref}` ({self.line_of(ld.where)}), which "
                      f"{w.what} at {self.line_of(w.where)} writes {when}; {why}, so it would "
                      f"read the new contents ({fix})")
    for f in self.loop_frames:
      f.uses.append((loads, eqn, subject, why))

  def enter_loop(self) -> _Frame:
    """A loop's body is about to be walked."""
    f = _Frame(self.stale_seq)
    self.loop_frames.append(f)
    return f

  def leave_loop(self, frame: _Frame, eqn, loop: str, trips: int):
    """The loop's body (and its carry's next) was walked: a value loaded before the loop and
    used inside it, whose ref the body writes, is refused when the loop may take a second trip."""
    assert self.loop_frames and self.loop_frames[-1] is frame
    self.loop_frames.pop()
    if trips <= 1:
      return
    loop_at = self.line_of(user_line(eqn, self.user_file, self.kernel_line))
    for loads, use_eqn, subject, why in frame.uses:
      for ld in loads:
        if ld.seq > frame.seq:
          continue  # loaded in the body: in the same trip as its use
        for w in self.ref_writes.get(("alloc", ld.ref), ()):
          if w.seq > frame.seq and overlaps(ld.index, w.index):
            self.refuse(use_eqn, f"{subject} loads `{ld.ref}` ({self.line_of(ld.where)}) "
                        f"before the {loop} at {loop_at}, whose body writes it ({w.what} at "
                        f"{self.line_of(w.where)}); {why}, so from the loop's second trip on "
                        "it would read what the body wrote (load the value inside the loop, "
                        "or pass it through the loop as its carry)")
