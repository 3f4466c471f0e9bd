"""jax-ir, part 1: the module JAX's Mosaic GPU compiler hands to its C++ custom call, on the CPU.

The case is lowered exactly as `jax-lower` lowers it (`traced.lower(lowering_platforms=("cuda",))`,
the case's arch forced). While it lowers, three things are recorded:

* the module: the argument of `mosaic_gpu.core._run_serde_pass(..., serialize=True)`, i.e. the
  module after `lower_mgpu_module` (Warpgroup: layout inference and the dialect lowering; both:
  the host-side TMA descriptor setup), just before it is serialized into the custom call. This is
  the last level produced without a GPU: the remaining passes (gpu-to-nvvm, LLVM, ptxas) run in
  jaxlib's C++ custom call when the executable is compiled for a device (docs/ir-executor.md).
* where each case allocation lives in dynamic SMEM: `ModuleContext.scratch_view` (SMEM buffers, in
  declaration order) and `ModuleContext.reserve_barrier` (barriers), whose barrier refs are matched
  to the SMEM offsets `_construct_smem_reftree` sliced for them;
* the case-op labels (`cfopK`, from the translation's named scopes) that the ops' locations carry.

`CFJAX_IR_EDIT` (tests only) applies a named edit to the module's text before it is evaluated:
see `EDITS`.
"""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any

import cfjax_smem_layout
from cfjax_case import Case, CaseError


class Extracted:
  def __init__(self):
    self.module_text: str | None = None
    self.context = None
    self.allocs: dict[str, dict] = {}  # alloc name -> {"kind", "offset", "bytes" | "num_barriers"}
    self.slices: list[tuple[Any, int]] = []  # (_slice_smem type str, offset) in call order
    self.barrier_refs: list[tuple[Any, int]] = []  # (ref object, offset) in creation order
    self.log: list[tuple] = []  # ("smem", offset, shape, dtype) / ("barrier", offset, n)


def barrier_count(n) -> int:
  """How many mbarriers an allocation holds: num_barriers is an int, or a shape (the case's `[]`,
  JAX's `()`: a 0-d barrier ref, one mbarrier)."""
  if isinstance(n, (list, tuple)):
    count = 1
    for d in n:
      count *= int(d)
    return count
  return int(n)


@contextlib.contextmanager
def recording(rec: Extracted):
  """Patches JAX (Mosaic GPU core, Pallas's ModuleContext) to fill `rec` while a case lowers."""
  from jax.experimental.mosaic.gpu import core as mcore  # pylint: disable=import-outside-toplevel
  from jax.experimental.mosaic.gpu import utils as mutils  # pylint: disable=import-outside-toplevel
  from jax._src.pallas.mosaic_gpu import lowering as plow  # pylint: disable=import-outside-toplevel

  saved = []

  def patch(obj, name, new):
    saved.append((obj, name, getattr(obj, name)))
    setattr(obj, name, new)

  orig_serde = mcore._run_serde_pass  # pylint: disable=protected-access

  def serde(module, *, serialize, ir_version=None):
    if serialize and rec.module_text is None:
      rec.module_text = module.operation.get_asm(enable_debug_info=True)
      rec.context = module.context
    return orig_serde(module, serialize=serialize, ir_version=ir_version)

  orig_slice = mcore._slice_smem  # pylint: disable=protected-access

  def slice_smem(ty, dynamic_smem, offset, *a, **k):
    rec.slices.append((str(ty), int(offset)))
    return orig_slice(ty, dynamic_smem, offset, *a, **k)

  def wrap_init(cls):
    orig = cls.__dict__["initialize"]
    fn = orig.__func__ if isinstance(orig, (classmethod, staticmethod)) else orig
    kind = type(orig)

    def initialize(*a, **k):
      ref = fn(*a, **k)
      off = rec.slices[-1][1] if rec.slices else -1
      rec.barrier_refs.append((ref, off))
      return ref
    patch(cls, "initialize", kind(initialize) if kind in (classmethod, staticmethod) else initialize)

  orig_view = plow.ModuleContext.scratch_view

  @contextlib.contextmanager
  def scratch_view(self, struct):
    rec.log.append(("smem", int(self.smem_used_bytes), tuple(struct.shape), str(struct.dtype)))
    with orig_view(self, struct) as v:
      yield v

  orig_reserve = plow.ModuleContext.reserve_barrier

  @contextlib.contextmanager
  def reserve_barrier(self, barrier):
    with orig_reserve(self, barrier) as ref:
      off = next((o for r, o in rec.barrier_refs if r is ref), None)
      rec.log.append(("barrier", off, barrier_count(getattr(barrier, "num_barriers", 1))))
      yield ref

  patch(mcore, "_run_serde_pass", serde)
  patch(mcore, "_slice_smem", slice_smem)
  for cls_name in ("BarrierRef", "DialectBarrierRef", "CollectiveBarrierRef"):
    cls = getattr(mutils, cls_name, None)
    if cls is not None and "initialize" in cls.__dict__:
      wrap_init(cls)
  patch(plow.ModuleContext, "scratch_view", scratch_view)
  patch(plow.ModuleContext, "reserve_barrier", reserve_barrier)
  try:
    yield rec
  finally:
    for obj, name, old in reversed(saved):
      setattr(obj, name, old)


class Unsupported(Exception):
  """Something the evaluator does not model: the case is `unavailable` with this reason."""


class Undefined(Unsupported):
  """Undefined behaviour the run meets: the outcome is `undefined` with this code
  (harness/core/undefined_behaviour.def) and detail."""

  def __init__(self, code: str, detail: str):
    super().__init__(f"undefined behaviour: {code}: {detail}")
    self.code = code
    self.detail = detail


def map_allocs(case: Case, rec: Extracted) -> dict[str, dict]:
  """Case allocation name -> where it lives, matched in declaration order with what was recorded."""
  smem = [e for e in rec.log if e[0] == "smem"]
  bars = [e for e in rec.log if e[0] == "barrier"]
  out = {}
  si = bi = 0
  for a in case.allocs():
    kind = a.get("kind")
    if kind == "smem":
      if si >= len(smem):
        raise Unsupported("alloc mapping (an smem allocation the lowering never sliced)")
      _, off, shape, dtype = smem[si]
      si += 1
      # JAX allocates a tiled buffer at its tiled shape (cfjax_smem_layout.physical_shape).
      if cfjax_smem_layout.physical_shape(a) != shape:
        raise Unsupported("alloc mapping (smem shape)")
      out[a["name"]] = {"kind": "smem", "scratch_offset": off, "shape": shape, "dtype": a["dtype"]}
    elif kind in ("barrier", "cluster_barrier"):
      if bi >= len(bars):
        raise Unsupported("alloc mapping (a barrier the lowering never reserved)")
      _, off, n = bars[bi]
      bi += 1
      if off is None or off < 0:
        raise Unsupported("alloc mapping (barrier offset)")
      out[a["name"]] = {"kind": kind, "offset": off, "num_barriers": barrier_count(a.get("num_barriers", 1)),
                        "orders_tensor_core": bool(a.get("orders_tensor_core", False))}
    elif kind == "acc":
      continue  # registers: the accumulator's zero value is never read by a case op
    elif kind == "semaphore":
      continue  # a GMEM buffer of its own (a kernel argument); no case op uses it
    else:
      raise Unsupported(f"alloc {kind}")
  # The scoped SMEM scratch is the first slice of dynamic SMEM.
  base = rec.slices[0][1] if rec.slices else 0
  for v in out.values():
    if v["kind"] == "smem":
      v["offset"] = base + v["scratch_offset"]
  # Sequential scopes reuse SMEM and mbarriers; the outcome reports each allocation's own
  # contents and counts, which would need per-scope snapshots (not modelled).
  spans = []
  for name, v in out.items():
    if v["kind"] == "smem":
      a = case.alloc(name)
      n = 1
      for d in a["shape"]:
        n *= int(d)
      bits = {"int4": 4, "uint4": 4, "int8": 8, "uint8": 8, "float8_e4m3fn": 8, "float8_e5m2": 8,
              "int16": 16, "uint16": 16, "bfloat16": 16, "float16": 16, "int64": 64, "uint64": 64,
              "float64": 64}.get(a["dtype"], 32)
      spans.append((v["offset"], v["offset"] + max(1, (n * bits + 7) // 8)))
    else:
      spans.append((v["offset"], v["offset"] + 8 * v["num_barriers"]))
  spans.sort()
  if any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1)):
    raise Unsupported("allocations of sequential scopes share SMEM or an mbarrier (per-scope "
                      "snapshots are not modelled)")
  return out


# ---- planted edits (tests only): what a compiler bug could do to the lowered module

def _edit_mask(text: str) -> str:
  # Flip bit 1 of a multicast mask: the constant the mask is built from, or the ones the
  # lowering shifts.
  m = re.search(r"multicast_mask = (%[\w]+)", text)
  if m is None:
    m2 = re.search(r'multicast::cluster[^"]*", "[^"]*" ([^:]*):', text)
    if m2 is None:
      raise Unsupported("edit mask: no multicast in the module")
    mask_var = m2.group(1).split(",")[-1].strip()
  else:
    mask_var = m.group(1)
  # %x = arith.trunci %y : i32 to i16  -> replace with constant xor
  name = mask_var.lstrip("%")
  pat = re.compile(r"(\s+)%" + re.escape(name) + r" = arith\.trunci (%[\w]+) : i32 to i16")
  mm = pat.search(text)
  if mm is None:
    raise Unsupported("edit mask: the mask is not a trunci")
  src = mm.group(2)
  repl = (f"{mm.group(1)}%cf_flip = arith.constant 2 : i32"
          f"{mm.group(1)}%cf_flipped = arith.xori {src}, %cf_flip : i32"
          f"{mm.group(1)}%{name} = arith.trunci %cf_flipped : i32 to i16")
  return text[:mm.start()] + repl + text[mm.end():]


def _edit_expect_tx(text: str) -> str:
  m = re.search(r"nvvm\.mbarrier\.arrive\.expect_tx (%[\w]+), (%[\w]+)", text)
  if m is None:
    m = re.search(r'mbarrier\.arrive\.expect_tx[^"]*", "[^"]*" (%[\w]+), (%[\w]+)', text)
  if m is None:
    raise Unsupported("edit expect_tx: no arrive.expect_tx")
  var = m.group(2).lstrip("%")
  pat = re.compile(r"%" + re.escape(var) + r" = arith\.constant (-?\d+) : i32")
  mm = pat.search(text)
  if mm is None:
    raise Unsupported("edit expect_tx: the byte count is not a constant")
  return text[:mm.start()] + f"%{var} = arith.constant {int(mm.group(1)) + 16} : i32" + text[mm.end():]


_TMA_ASM = re.compile(r'^(\s*)(%[\w]+ = )?llvm\.inline_asm has_side_effects "[^"]*cp\.async\.bulk\.tensor[^"]*", "[^"]*" ([^:]*) :', re.M)


def _asm_operand(text: str, which) -> tuple[str, str, int, int]:
  """(indent, operand, start, end) of an operand of the first inline-PTX TMA copy; `which` picks
  its index from the asm string."""
  m = _TMA_ASM.search(text)
  if m is None:
    raise Unsupported("edit: no TMA copy in the module")
  asm = m.group(0)
  k = which(asm)
  ops_start = m.start(3)
  names = [o.strip() for o in m.group(3).split(",")]
  pos = ops_start
  for i, n in enumerate(names):
    j = text.index(n, pos)
    if i == k:
      return m.group(1), n, j, j + len(n)
    pos = j + len(n)
  raise Unsupported("edit: operand index")


def _define_before(text: str, at: int, indent: str, line: str) -> str:
  line_start = text.rfind("\n", 0, at) + 1
  return text[:line_start] + indent + line + "\n" + text[line_start:]


def _edit_predicate(text: str) -> str:
  # Drop the predicate of the TMA copy: every lane that reaches it issues it.
  m = re.search(r"box\[[^\]]*\](?: multicast_mask = %[\w]+)? predicate = (%[\w]+)", text)
  if m is not None:
    text = text[:m.start(1)] + "%cf_true" + text[m.end(1):]
    return _define_before(text, m.start(), "      ", "%cf_true = arith.constant true")
  indent, _, b, e = _asm_operand(text, lambda asm: 0)
  text = text[:b] + "%cf_true" + text[e:]
  return _define_before(text, b, indent, "%cf_true = arith.constant true")


def _edit_coord(text: str) -> str:
  # Shift the TMA box's outermost coordinate (PTX lists the innermost first) by 8.
  m = re.search(r"box\[((?:%[\w]+, )*)(%[\w]+)\]", text)
  if m is not None:
    row = m.group(2)
    new = text[:m.start(2)] + "%cf_shift" + text[m.end(2):]
    return _define_before(new, m.start(), "      ", "%cf_eight = arith.constant 8 : i32\n      "
                          f"%cf_shift = arith.addi {row}, %cf_eight : i32")

  def last_coord(asm):
    coords = re.search(r"\{((?:\$\d+,?)+)\}", asm).group(1).split(",")
    return int(coords[-1].lstrip("$"))
  indent, row, b, e = _asm_operand(text, last_coord)
  text = text[:b] + "%cf_shift" + text[e:]
  return _define_before(text, b, indent, f"%cf_eight = arith.constant 8 : i32\n{indent}"
                        f"%cf_shift = arith.addi {row}, %cf_eight : i32")


EDITS = {"mask": _edit_mask, "expect_tx": _edit_expect_tx, "predicate": _edit_predicate,
         "coord": _edit_coord}


def planted_edit(text: str, case_name: str = "") -> str:
  """CFJAX_IR_EDIT=EDIT edits every case's module; CFJAX_IR_EDIT=CASE:EDIT,CASE:EDIT only the
  named cases' (so that one replay checks several edits)."""
  spec = os.environ.get("CFJAX_IR_EDIT")
  if not spec:
    return text
  name = spec
  if ":" in spec:
    per_case = dict(item.split(":", 1) for item in spec.split(",") if ":" in item)
    name = per_case.get(case_name)
    if not name:
      return text
  if name not in EDITS:
    raise CaseError(f"CFJAX_IR_EDIT: unknown edit {name!r} (one of {', '.join(EDITS)})")
  return EDITS[name](text)
