"""The importer's vocabulary (`collfuzz import`, cfjax_import.py; docs/python.md "Python in").

Its one error (ImportRefused), where an equation comes from (user_line: the user's FILE:LINE), the
symbolic values a kernel body's jaxpr variables are bound to while it is walked (Ref, Axis: a
lax.axis_index or lax.fori_loop index expression, Cond, Unknown), how axis names are written in a
case (axis_name_json), and ImporterBase: the state every part of the Importer shares (names
handed out, warnings) and its reading of values (literals, static integers, what a value is,
refusing an equation). The primitive families build on it as
mixins (cfjax_import_index, _allocs, _copies, _barriers, _control); cfjax_import.Importer
combines them.
"""

from __future__ import annotations

import os


class ImportRefused(Exception):
  """The file or its kernel holds something a case cannot (the message names it and where)."""


# ---- where an equation comes from

def user_line(eqn, user_file: str, fallback: str = "") -> str:
  """'FILE:LINE' of the user's frame that made `eqn` (innermost frame in the user's file); when
  JAX recorded none, `fallback` (the kernel call's line), else the file itself."""
  try:
    from jax._src import source_info_util  # pylint: disable=import-outside-toplevel
    frames = list(source_info_util.user_frames(eqn.source_info.traceback))
    for fr in frames:
      if os.path.abspath(fr.file_name) == os.path.abspath(user_file):
        return f"{fr.file_name}:{fr.start_line}"
    if frames:
      return f"{frames[0].file_name}:{frames[0].start_line}"
  except Exception:  # pylint: disable=broad-except
    pass
  if fallback:
    return f"{fallback} (the kernel call: JAX recorded no source line for this equation)"
  return f"{user_file} (JAX recorded no source line for this equation)"


# ---- symbolic values of the kernel body

class Ref:
  """A ref of the kernel: an input, an output or an allocation, by its case name. `shape` is the
  logical shape. `layout`: the transforms JAX puts first on every use of a transformed SMEM
  allocation (UnswizzleRef, UntilingTransform: the undoing of its tiling and swizzle), after
  which a use's own `.at[...]` indexer is in logical coordinates (AllocsMixin.alloc_of)."""

  def __init__(self, kind: str, name: str, shape: tuple, alloc: dict | None = None,
               layout: tuple = ()):
    self.kind = kind
    self.name = name
    self.shape = tuple(shape)
    self.alloc = alloc
    self.layout = tuple(layout)


class Axis:
  """lax.axis_index(axis) * mul + add; with `loop`, i * mul + add, where i is the index (0..n-1) of
  the case loop whose `index` is the name `axis` (a lax.fori_loop's index, cfjax_import_control).
  `terms`: more terms summed in, each (name, loop, mul) (an index summed over several axes or an
  axis and a loop's index: a case entry's `plus`), no two with the same name and kind, nor one
  the same as the own term. With `mod` k (a loop's, or a sum's), lax.rem of that by k: a
  pipeline slot `(i * mul + add) % k`, to which no further arithmetic applies (scalar_eqn refuses
  it)."""

  def __init__(self, axis, mul=1, add=0, loop=False, mod=None, terms=(), multiple_of=None):
    self.axis = axis
    self.mul = mul
    self.add = add
    self.loop = loop
    self.mod = mod
    self.terms = tuple(terms)
    self.multiple_of = multiple_of  # pl.multiple_of(..., m) around it all: no arithmetic after

  def assumed(self, m: int) -> "Axis":
    """pl.multiple_of(self, m)."""
    return Axis(self.axis, self.mul, self.add, self.loop, self.mod, self.terms, m)

  def modulo(self, k: int) -> "Axis":
    """lax.rem(x * mul + add, k)."""
    return Axis(self.axis, self.mul, self.add, self.loop, k, self.terms)

  def times(self, k: int) -> "Axis":
    """(x * mul + add) * k."""
    return Axis(self.axis, self.mul * k, self.add * k, self.loop,
                terms=[(n, lp, m * k) for n, lp, m in self.terms])

  def plus(self, k: int) -> "Axis":
    """x * mul + add + k."""
    return Axis(self.axis, self.mul, self.add + k, self.loop, terms=self.terms)

  def sum(self, other: "Axis", sign: int = 1) -> "Axis":
    """self + other (sign 1) or self - other (sign -1): the terms in the order they come (this
    one's, then the other's), a name met again (the same axis, or the same loop's index) merged
    into its first term; the first term is the own one."""
    merged: dict = {}
    for n, lp, m in [(self.axis, self.loop, self.mul), *self.terms]:
      merged[(n, lp)] = merged.get((n, lp), 0) + m
    for n, lp, m in [(other.axis, other.loop, other.mul), *other.terms]:
      merged[(n, lp)] = merged.get((n, lp), 0) + sign * m
    (n0, lp0), m0 = next(iter(merged.items()))
    rest = [(n, lp, m) for (n, lp), m in merged.items()][1:]
    return Axis(n0, m0, self.add + sign * other.add, lp0, terms=rest)

  def negative(self) -> bool:
    """Whether a factor or the constant is below 0 (a case's mul and add are >= 0)."""
    return self.mul < 0 or self.add < 0 or any(m < 0 for _, _, m in self.terms)

  def spelt(self) -> str:
    """The expression as Python: lax.axis_index('a') * 128 + i * 16 + 8."""
    s = ""
    for k, (n, lp, m) in enumerate([(self.axis, self.loop, self.mul), *self.terms]):
      t = n if lp else f"lax.axis_index({n!r})"
      t = t if abs(m) == 1 else f"{t} * {abs(m)}"
      s = (f"-{t}" if m < 0 else t) if k == 0 else f"{s} {'-' if m < 0 else '+'} {t}"
    if self.add:
      s = f"{s} {'-' if self.add < 0 else '+'} {abs(self.add)}"
    s = f"lax.rem({s}, {self.mod})" if self.mod is not None else s
    return f"pl.multiple_of({s}, {self.multiple_of})" if self.multiple_of is not None else s

  def entry(self) -> dict:
    e = {"loop": self.axis} if self.loop else {"axis": self.axis}
    if self.mul != 1:
      e["mul"] = self.mul
    if self.add != 0:
      e["add"] = self.add
    if self.mod is not None:
      e["mod"] = self.mod
    if self.multiple_of is not None:
      e["multiple_of"] = self.multiple_of
    if self.terms:
      e["plus"] = []
      for n, lp, m in self.terms:
        t = {"loop": n} if lp else {"axis": n}
        if m != 1:
          t["mul"] = m
        e["plus"].append(t)
    return e


class Cond:
  """A case condition (JSON), as the jaxpr computed it."""

  def __init__(self, j):
    self.j = j


class Unknown:
  """A value the importer does not follow (used by an op, it is refused then)."""

  def __init__(self, what: str, where: str):
    self.what = what
    self.where = where



def axis_name_json(a):
  if isinstance(a, tuple):
    return list(a)
  return a


def axis_names_json(axes) -> list:
  if axes is None:
    return None
  if isinstance(axes, (str, tuple)) and not isinstance(axes, tuple):
    axes = (axes,)
  return [axis_name_json(a) for a in axes]



class ImporterBase:
  """The state of one import and its reading of values (the families' mixins build on it)."""

  def __init__(self, user_file: str):
    self.user_file = user_file
    # The kernel call's FILE:LINE (set by build_case): where a refusal points when JAX recorded
    # no source line for the equation refused.
    self.kernel_line = ""
    self.warnings: list[str] = []
    self.used_names: set[str] = set()
    self.counters: dict[str, int] = {}
    # plgpu.warp_map names its WarpMesh axis with a fresh object(): such an axis gets a name.
    self.axis_names: dict[int, str] = {}
    # Each iota's output var -> (its equation, its dimension), and the equation walked before the
    # current one (VectorsMixin.iota_cast: Lane needs the layout cast right after the iota).
    self.iotas: dict = {}
    self.previous_eqn = None
    self.current_eqn = None
    # id() of each copy_smem_to_gmem equation that a wait_smem_to_gmem(0) closes (a store with
    # `wait` true) and of that wait (absorbed into the store): CopiesMixin.pair_store_waits.
    self.waited_stores: set[int] = set()
    # id() of each commit_smem equation that begins a copy_smem_to_gmem (the store's default
    # `"commit_smem": true`) and of that store: CopiesMixin.pair_store_commits.
    self.committed_stores: set[int] = set()
    # The eqn that defines each var walked so far (cfjax_import.Importer.walk): NdLoopMixin reads
    # the eqns behind an nd_loop's trip count.
    self.defs: dict = {}
    # The case's mesh (build_case sets it before the walk): an nd_loop's collective axes.
    self.mesh: dict = {}
    # The order of the loads and writes the importer emits, the writes of each (kind, name) ref and
    # the loops being walked (cfjax_import_stale.StaleMixin: a value used after its ref's write).
    self.stale_seq = 0
    self.ref_writes: dict = {}
    self.loop_frames: list = []

  def axis_name(self, axis) -> str:
    if isinstance(axis, str):
      return axis
    if id(axis) not in self.axis_names:
      self.axis_names[id(axis)] = self.fresh("warp", "warp")
    return self.axis_names[id(axis)]

  # -- names

  def fresh(self, prefix: str, wanted: str | None = None) -> str:
    if wanted and wanted.isidentifier() and wanted not in self.used_names and len(wanted) <= 64:
      self.used_names.add(wanted)
      return wanted
    while True:
      k = self.counters.get(prefix, 0)
      self.counters[prefix] = k + 1
      name = f"{prefix}{k}"
      if name not in self.used_names:
        self.used_names.add(name)
        return name

  # -- values

  def refuse(self, eqn, what: str):
    raise ImportRefused(f"{user_line(eqn, self.user_file, self.kernel_line)}: {what}")

  @staticmethod
  def literal(v):
    """A jaxpr Literal's (or numpy scalar's) Python value, or None."""
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, core.Literal):
      v = v.val
    try:
      import numpy as np  # pylint: disable=import-outside-toplevel
      a = np.asarray(v)
      if a.shape == ():
        if a.dtype == np.bool_:
          return bool(a)
        if np.issubdtype(a.dtype, np.integer):
          return int(a)
    except Exception:  # pylint: disable=broad-except
      return None
    return None

  def value(self, env: dict, v):
    from jax._src import core  # pylint: disable=import-outside-toplevel
    if isinstance(v, core.Literal):
      return self.literal(v)
    return env.get(v)

  def as_int(self, env, v, eqn, what: str):
    x = self.value(env, v)
    if isinstance(x, bool) or not isinstance(x, int):
      self.refuse(eqn, f"{what}: not a static integer ({self.describe(x)})")
    return x

  @staticmethod
  def describe(x) -> str:
    if isinstance(x, Unknown):
      return f"it comes from {x.what} at {x.where}"
    if isinstance(x, Axis) and x.terms:
      return f"the index sum {x.spelt()}"
    if isinstance(x, Axis) and x.mod is not None:
      return f"a lax.fori_loop slot (i * m + a) % {x.mod}"
    if isinstance(x, Axis):
      return "a lax.fori_loop index" if x.loop else "a lax.axis_index expression"
    if isinstance(x, Cond):
      return "a condition"
    return repr(x)
