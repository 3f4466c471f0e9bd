"""A transposed SMEM side of a TMA copy (`"transpose": [p0, ...]` on a copy_gmem_to_smem's `dst` or
a copy_smem_to_gmem's `src`, `"transpose_ref": true` for the deprecated spelling): the case model
(cfjax_smem_layout.copy_transpose, cfjax_case.written_ranges), the translation
(cfjax_translate.smem_copy_ref) and the repro script's text (cfjax_repro_body), `collfuzz import`
of `.transpose(...)` (cfjax_import_copies.copy_smem_side: index-then-transpose as it is,
transpose-then-index commuted as JAX's commute_transpose_indexer commutes it), and what
jax-interpret, jax-lower and jax-ir make of such copies, memory against numpy.

    .venv-jax/bin/python -m unittest tests/jax/test_transposed_copies.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_transposed_copies.py

Calls the adapter's modules directly (the C++ side need not parse `transpose` for these).
"""

import copy
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

from loop_case_support import executor, import_source, run_script  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402
import cfjax_smem_layout  # noqa: E402
from cfjax_repro_src import Unsupported  # noqa: E402

ARANGE = {"pattern": "arange", "start": 0, "step": 1}
TILE = [{"tiling": [32]}]
MEMORY_SPACE = ("The 'memory_space' attribute is not available on traced array with shape "
                "Ref<smem>{float32[2,64,32]}. Use `jax.typeof(x).memory_space` instead.")
STRIDE = ("TMA requires the stride of the last dimension after transforming the GMEM reference "
          "to be 1, but it is 64.")


def smem_use(index=None, perm=None, ref=False):
  u = {"alloc": "smem"}
  if index is not None:
    u["index"] = index
  if perm is not None:
    u["transpose"] = list(perm)
  if ref:
    u["transpose_ref"] = True
  return u


def case(body, x_shape, out_shape, smem_shape, transforms=None, semantics="lane", mesh=None,
         allocs=None, arch="sm_90a", profile="mosaic"):
  """One run_scoped of `smem` (float32 `smem_shape`, `transforms`) and the barrier `bar` around
  `body`; input x (an arange of `x_shape`), output out (`out_shape`, none for None)."""
  smem = {"name": "smem", "kind": "smem", "shape": list(smem_shape), "dtype": "float32"}
  if transforms:
    smem["transforms"] = transforms
  return {"format": 1, "name": "t", "mesh": mesh or {},
          "target": {"arch": arch, "semantics": semantics, "profile": profile},
          "inputs": [{"name": "x", "shape": list(x_shape), "dtype": "float32", "fill": ARANGE}],
          "outputs": [] if out_shape is None else
          [{"name": "out", "shape": list(out_shape), "dtype": "float32"}],
          "program": [{"op": "run_scoped",
                       "allocs": [smem] + (allocs or [{"name": "bar", "kind": "barrier"}]),
                       "body": body}]}


def load(dst, src=None, **kw):
  return {"op": "copy_gmem_to_smem", "src": src or {"input": "x"}, "dst": dst,
          "barrier": kw.pop("barrier", {"alloc": "bar"}), **kw}


WAIT = {"op": "barrier_wait", "barrier": {"alloc": "bar"}}


def store(src, dst=None, **kw):
  return {"op": "copy_smem_to_gmem", "src": src, "dst": dst or {"output": "out"}, **kw}


def round_trip(perm, smem_shape, transforms=None, semantics="lane", ref=False):
  """x (the view's shape) copied into smem.transpose(perm), smem stored whole: out = smem =
  x.transpose(argsort(perm)); with `ref`, plgpu.transpose_ref."""
  view = [smem_shape[p] for p in perm]
  return case([load(smem_use(perm=perm, ref=ref)), WAIT, store(smem_use())], view, smem_shape,
              smem_shape, transforms, semantics)


def store_round_trip(perm, smem_shape, transforms=None, semantics="lane"):
  """x (smem's shape) copied into smem, smem.transpose(perm) stored: out = x.transpose(perm)."""
  view = [smem_shape[p] for p in perm]
  return case([load(smem_use()), WAIT, store(smem_use(perm=perm))], smem_shape, view,
              smem_shape, transforms, semantics)


def arange(shape):
  return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def output(out, spec):
  return np.frombuffer(bytes.fromhex(out["outputs"][0]["hex"]),
                       cfjax_fill.numpy_dtype(spec["dtype"])).reshape(spec["shape"])


def buffer(out, rank, name="smem") -> bytes:
  cta = next(c for c in out["ctas"] if c["rank"] == rank)
  return bytes.fromhex(next(b["hex"] for b in cta["buffers"] if b["alloc"] == name))


def copy_ops(c):
  """The case's copies, in program order."""
  found = []

  def walk(ops):
    for op in ops:
      if op["op"] in ("copy_gmem_to_smem", "copy_smem_to_gmem"):
        found.append(op)
      walk(op.get("body", []))
  walk(c["program"])
  return found


_EXECUTORS = {}


def run(c, mode):
  if mode not in _EXECUTORS:
    _EXECUTORS[mode] = executor(mode)
  c = json.loads(json.dumps(c))
  c["target"]["profile"] = "interpret" if mode == "interpret" else "mosaic"
  return _EXECUTORS[mode].run(c)


class CaseModelTest(unittest.TestCase):
  """copy_transpose reads the fields; written_ranges is that of an untransposed store."""

  def test_copy_transpose(self):
    ct = cfjax_smem_layout.copy_transpose
    self.assertEqual(ct({"alloc": "s"}), (None, False))
    self.assertEqual(ct(smem_use([1], (1, 0, 2))), ((1, 0, 2), False))
    self.assertEqual(ct(smem_use(perm=(0, 1), ref=True)), ((0, 1), True))
    self.assertEqual(ct(smem_use(perm=(5, 5))), ((5, 5), False))  # JAX's to refuse
    for bad, pattern in (({"alloc": "s", "transpose": "10"}, r"\$\.dst\.transpose: expected"),
                         ({"alloc": "s", "transpose": [True, 0]}, r"\.transpose: expected"),
                         ({"alloc": "s", "transpose_ref": True}, r"only with a `transpose`"),
                         ({"alloc": "s", "transpose": [0], "transpose_ref": 1},
                          r"\.transpose_ref: expected a boolean")):
      with self.subTest(bad=bad), self.assertRaisesRegex(cfjax_case.CaseError, pattern):
        ct(bad, "$.dst")

  def test_written_ranges_are_the_whole_gmem_slice(self):
    c = store_round_trip((1, 0, 2), (2, 64, 32))
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(c)),
                     {"out": [[0, 4096]]})
    c["outputs"][0]["shape"] = [2, 64, 2, 32]
    c["program"][0]["body"][-1]["dst"]["index"] = [1]
    self.assertEqual(cfjax_case.written_ranges(cfjax_case.Case.from_json(c)),
                     {"out": [[4096, 8192]]})


class ReproTextTest(unittest.TestCase):
  """cfjax_repro_body writes the transpose after the SMEM ref as cfjax_translate does."""

  def script(self, c, mode="interpret"):
    return cfjax_repro.generate({"case": c, "mode": mode,
                                 "expected": {"kind": "completed", "outputs": []}})

  def test_each_form(self):
    slot = {"loop": "i", "mod": 2}
    for use, text in (
        (smem_use(perm=(1, 0, 2)), "smem.transpose((1, 0, 2))"),
        (smem_use([1], (1, 0)), "smem.at[1,].transpose((1, 0))"),
        (smem_use([slot], (1, 0)), "smem.at[i % 2].transpose((1, 0))"),
        (smem_use([{"start": 2, "size": 2}], (1, 0, 2)),
         "smem.at[pl.ds(2, 2)].transpose((1, 0, 2))"),
        (smem_use([1], (1, 0), ref=True), "plgpu.transpose_ref(smem.at[1,], (1, 0))"),
        (smem_use(perm=(0,)), "smem.transpose((0,))")):
      for direction in ("load", "store"):
        with self.subTest(use=use, direction=direction):
          body = [load(use), WAIT] if direction == "load" else [store(use)]
          c = case(body, (64, 32), (64, 32), (4, 64, 32))
          if "loop" in json.dumps(use):
            c["program"][0]["body"] = [{"op": "loop", "trip_count": 2, "index": "i",
                                        "body": body}]
          src = self.script(c)
          compile(src, "t.py", "exec")
          call = ("plgpu.copy_gmem_to_smem(x, " if direction == "load"
                  else "plgpu.copy_smem_to_gmem(") + text
          self.assertIn(call, src)

  def test_malformed_is_unsupported(self):
    c = case([load({"alloc": "smem", "transpose": "no"}), WAIT], (64, 32), None, (64, 32))
    with self.assertRaisesRegex(Unsupported, r"\$\.program\[0\]\.body\[0\]\.dst\.transpose"):
      self.script(c)


class TranslateTest(unittest.TestCase):
  """What JAX traces of the translation: the transforms of the copies' SMEM refs."""

  @classmethod
  def setUpClass(cls):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax  # pylint: disable=import-outside-toplevel
    import cfjax_translate  # pylint: disable=import-outside-toplevel
    cls.jax = jax
    cls.tr = cfjax_translate

  def smem_transforms(self, c):
    """[(primitive, [(transform type, permutation or None)])] of the SMEM side of each copy."""
    case_ = cfjax_case.Case.from_json(c)
    t = self.tr.Translation(case_, None)
    args = [self.jax.numpy.asarray(cfjax_fill.fill_array(a)) for a in case_.inputs]
    jaxpr = self.jax.jit(t.make_kernel()).trace(*args).jaxpr.jaxpr
    out = []

    def walk(j):
      for e in j.eqns:
        name = e.primitive.name
        if name in ("copy_gmem_to_smem", "copy_smem_to_gmem"):
          p = e.params
          n_src = p["src_transforms_treedef"].num_leaves
          n_dst = p["dst_transforms_treedef"].num_leaves
          start = 2 + (1 if p.get("has_barrier") else 0)
          flat = e.invars[start:]
          if name == "copy_gmem_to_smem":
            ts = p["dst_transforms_treedef"].unflatten(flat[n_src:n_src + n_dst])
          else:
            ts = p["src_transforms_treedef"].unflatten(flat[:n_src])
          out.append((name, [(type(x).__name__, getattr(x, "permutation", None)) for x in ts]))
        for v in e.params.values():
          for sub in (v if isinstance(v, (tuple, list)) else (v,)):
            inner = getattr(sub, "jaxpr", sub)
            if hasattr(inner, "eqns"):
              walk(inner)
    walk(jaxpr)
    return out

  def test_index_then_transpose(self):
    c = case([load(smem_use([1], (1, 0, 2))), WAIT, store(smem_use([0], (1, 0, 2)))],
             (64, 2, 32), (64, 2, 32), (2, 2, 64, 32), TILE)
    got = self.smem_transforms(c)
    want = [("UntilingTransform", None), ("NDIndexer", None), ("TransposeTransform", (1, 0, 2))]
    self.assertEqual(got, [("copy_gmem_to_smem", want), ("copy_smem_to_gmem", want)])

  def test_transpose_ref_is_the_method_on_a_transformed_ref(self):
    plain = self.smem_transforms(round_trip((1, 0, 2), (2, 64, 32), TILE))
    spelt = self.smem_transforms(round_trip((1, 0, 2), (2, 64, 32), TILE, ref=True))
    self.assertEqual(plain, spelt)
    self.assertEqual(plain[0][1][-1], ("TransposeTransform", (1, 0, 2)))


class RunTest(unittest.TestCase):
  """The executors on transposed copies: memory against numpy (view = R.transpose(p): a load
  sets R = S.transpose(argsort(p)), a store writes the view's elements)."""

  def check_out(self, c, want, modes=("interpret", "ir")):
    for mode in modes:
      with self.subTest(mode=mode, semantics=c["target"]["semantics"]):
        out = run(c, mode)
        self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
        np.testing.assert_array_equal(output(out, c["outputs"][0]), want)
        self.assertEqual(out["outputs"][0]["written"], [[0, want.size]])

  def test_loads_and_stores(self):
    for semantics in ("lane", "warpgroup"):
      for transforms in (None, TILE):
        x = arange((64, 2, 32))
        c = round_trip((1, 0, 2), (2, 64, 32), transforms, semantics)
        self.check_out(c, x.transpose(1, 0, 2))
        # the buffer itself, laid out physically
        out = run(c, "ir")
        alloc = c["program"][0]["allocs"][0]
        self.assertEqual(buffer(out, 0), cfjax_smem_layout.physical_bytes(
            x.transpose(1, 0, 2), alloc))
        x = arange((2, 2, 64, 32))
        c = store_round_trip((0, 2, 1, 3), (2, 2, 64, 32), transforms, semantics)
        self.check_out(c, x.transpose(0, 2, 1, 3))

  def test_tiled_and_swizzled_lane(self):
    """Lane lowers a tiled and swizzled buffer transposed (1, 0, 2); Warpgroup's layout
    inference refuses it (`Failed to infer a possible set of layouts`)."""
    for dtype, minor in (("float32", 32), ("float16", 64)):
      c = round_trip((1, 0, 2), (2, 64, minor), [{"tiling": [8, minor]}, {"swizzle": 128}])
      for a in c["inputs"] + c["outputs"] + c["program"][0]["allocs"][:1]:
        a["dtype"] = dtype
      x = arange((64, 2, minor)).astype(cfjax_fill.numpy_dtype(dtype))
      self.check_out(c, x.transpose(1, 0, 2))
      c["target"]["semantics"] = "warpgroup"
      out = run(c, "ir")
      self.assertEqual(out["kind"], "rejected", json.dumps(out)[:2000])
      self.assertIn("Failed to infer a possible set of layouts", out["diagnostic"]["message"])

  def test_indexed_slot_and_slice(self):
    for semantics in ("lane", "warpgroup"):
      x = arange((4, 64, 2, 32))
      slot = {"loop": "i", "mod": 2}
      body = [{"op": "loop", "trip_count": 4, "index": "i", "body": [
          load(smem_use([dict(slot)], (1, 0, 2)), {"input": "x", "index": [{"loop": "i"}]},
               barrier={"alloc": "bars", "index": dict(slot)}),
          {"op": "barrier_wait", "barrier": {"alloc": "bars", "index": dict(slot)}},
          store(smem_use([dict(slot)], (1, 0, 2)),
                {"output": "out", "index": [{"loop": "i"}]})]}]
      c = case(body, x.shape, x.shape, (2, 2, 64, 32), TILE, semantics,
               allocs=[{"name": "bars", "kind": "barrier", "num_barriers": 2}])
      self.check_out(c, x)
      x = arange((64, 2, 32))
      part = [{"start": 2, "size": 2}]
      c = case([load(smem_use(part, (1, 0, 2))), WAIT, store(smem_use(part))],
               x.shape, (2, 64, 32), (4, 64, 32), TILE, semantics)
      self.check_out(c, x.transpose(1, 0, 2))

  def test_multicast_and_warp_map(self):
    x = arange((64, 2, 32))
    r = x.transpose(1, 0, 2)
    for semantics in ("lane", "warpgroup"):
      c = case([load(smem_use(perm=(1, 0, 2)), collective_axes="x"), WAIT,
                store(smem_use(), {"output": "out", "index": [{"axis": "x"}]})],
               x.shape, (2, 2, 64, 32), (2, 64, 32), TILE, semantics,
               mesh={"cluster": [2], "cluster_names": ["x"]})
      self.check_out(c, np.stack([r, r]))
      out = run(c, "ir")
      alloc = c["program"][0]["allocs"][0]
      for rank in (0, 1):
        self.assertEqual(buffer(out, rank), cfjax_smem_layout.physical_bytes(r, alloc))
        self.assertEqual(out["ctas"][rank]["barriers"][0]["received"], x.nbytes)
      warp = {"op": "warp_map", "axis": "w", "body": [
          {"op": "when", "cond": {"axis": "w", "eq": 0}, "body": [
              load(smem_use(perm=(1, 0, 2)))]}]}
      c = case([warp, WAIT, store(smem_use(perm=(1, 0, 2)))], x.shape, x.shape, (2, 64, 32),
               TILE, semantics)
      self.check_out(c, x)

  def test_partitioned_on_the_compiler(self):
    """PARTITIONED(0) over x (sm_100a): CTA i holds rows 32i.. of x, transposed (jax-ir; the
    interpreter reads the whole source in every CTA, docs/jax-divergences.md)."""
    x = arange((64, 2, 32))
    body = [load(smem_use(perm=(1, 0, 2)), collective_axes="x",
                 leader_tracked={"partitioned": 0}),
            {"op": "when", "cond": {"axis": "x", "eq": 0}, "body": [WAIT]}]
    c = case(body, x.shape, None, (2, 32, 32), TILE, mesh={"cluster": [2], "cluster_names": ["x"]},
             arch="sm_100a")
    out = run(c, "ir")
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    alloc = c["program"][0]["allocs"][0]
    for rank in (0, 1):
      self.assertEqual(buffer(out, rank), cfjax_smem_layout.physical_bytes(
          x[32 * rank:32 * (rank + 1)].transpose(1, 0, 2), alloc))

  def test_what_jax_refuses(self):
    """A permutation that moves the last dim fails when the tensor maps are built; transpose_ref
    on an untransformed ref fails while tracing (a JAX bug: its `hasattr(ref, "memory_space")`
    meets a ref whose attribute raises ValueError)."""
    for semantics in ("lane", "warpgroup"):
      for mode in ("lower", "ir"):
        with self.subTest(semantics=semantics, mode=mode):
          out = run(round_trip((1, 0), (64, 32), semantics=semantics), mode)
          self.assertEqual((out["kind"], out["diagnostic"]["stage"],
                            out["diagnostic"]["exception"], out["diagnostic"]["message"]),
                           ("rejected", "finalize", "ValueError", STRIDE))
      for mode in ("interpret", "lower", "ir"):
        with self.subTest(semantics=semantics, mode=mode, transpose_ref=True):
          out = run(round_trip((1, 0, 2), (2, 64, 32), semantics=semantics, ref=True), mode)
          self.assertEqual((out["kind"], out["diagnostic"]["stage"],
                            out["diagnostic"]["exception"], out["diagnostic"]["message"]),
                           ("rejected", "trace", "ValueError", MEMORY_SPACE))
    out = run(round_trip((1, 0, 2), (2, 64, 32), TILE, ref=True), "lower")
    self.assertEqual(out["kind"], "unavailable", json.dumps(out)[:2000])
    self.assertIn("lowered for CUDA without an error", out["reason"])


HEAD = """\
import jax
from jax import lax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


"""

# JAX's test_smem_gmem_transposed_copies (tiling None with `.transpose` for plgpu.transpose_ref,
# which raises the memory_space ValueError on an untransformed scratch ref; TilingTransform((32,))
# as the test writes it) and test_indexing_after_transpose (`.transpose`), as the corpus holds
# them (corpus/kernels/py/).
KERNELS = os.path.join(ROOT, "corpus", "kernels", "py")


def kernel_source(name: str) -> str:
  with open(os.path.join(KERNELS, name + ".py"), encoding="utf-8") as f:
    return f.read()


def copy_kernel(smem_shape, dst, src="smem", x_shape=None, out_shape=None, transforms="()",
                prelude=None) -> str:
  """A kernel file's text: a float32 scratch `smem` of `smem_shape` (with `transforms`), x copied
  into the ref expression `dst`, waited for, then (after `prelude`, a statement) the ref
  expression `src` stored to o. x and o have the scratch's shape unless given."""
  x_shape = tuple(x_shape or smem_shape)
  out_shape = tuple(out_shape or smem_shape)
  extra = f"    {prelude}\n" if prelude else ""
  return HEAD + f"""\
def collfuzz_case():
  def kernel(x, o, smem, bar):
    plgpu.copy_gmem_to_smem(x, {dst}, bar)
    plgpu.barrier_wait(bar)
{extra}    plgpu.commit_smem()
    plgpu.copy_smem_to_gmem({src}, o)
    plgpu.wait_smem_to_gmem(0)
  k = plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct({out_shape}, jnp.float32),
                   scratch_types=[plgpu.SMEM({tuple(smem_shape)}, jnp.float32,
                                             transforms={transforms}),
                                  plgpu.Barrier()])
  return k, [jnp.zeros({x_shape}, jnp.float32)]
"""


class ImportTest(unittest.TestCase):
  """`collfuzz import` of transposed copy refs, and back through the repro script."""

  def refused(self, src, pattern):
    import cfjax_import  # pylint: disable=import-outside-toplevel
    with self.assertRaisesRegex(cfjax_import.ImportRefused, pattern):
      import_source(src)

  def copies(self, src):
    return [{k: op[k] for k in ("src", "dst")} for op in copy_ops(import_source(src))]

  def test_smem_gmem_transposed_copies(self):
    for name, want in (("jax_smem_gmem_transposed_copies", None),
                       ("jax_smem_gmem_transposed_copies_tiled", TILE)):
      with self.subTest(kernel=name):
        got = import_source(kernel_source(name))
        scope = got["program"][0]
        self.assertEqual(scope["allocs"][0].get("transforms"), want)
        self.assertEqual([{k: op[k] for k in ("src", "dst")} for op in copy_ops(got)], [
            {"src": {"input": "in0"}, "dst": {"alloc": "smem_ref", "transpose": [1, 0, 2]}},
            {"src": {"alloc": "smem_ref", "transpose": [1, 0, 2]}, "dst": {"output": "out0"}}])
        # the imported case runs: out == x (the test's assertion), on the interpreter and jax-ir
        x = arange((2, 2, 64))
        for mode in ("interpret", "ir"):
          out = run(got, mode)
          self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
          np.testing.assert_array_equal(output(out, got["outputs"][0]), x)

  def test_indexing_after_transpose_is_commuted(self):
    """`smem.transpose((1, 0, 2, 3)).at[:, i]` is `smem.at[i]` with the identity, as JAX's
    lowering commutes it (commute_transpose_indexer): the identity is left out."""
    got = import_source(kernel_source("jax_indexing_after_transpose"))
    self.assertEqual([op["dst"] for op in copy_ops(got)[:2]],
                     [{"alloc": "smem_ref", "index": [0]}, {"alloc": "smem_ref", "index": [1]}])
    out = run(got, "ir")
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    x = arange((32, 2, 128))
    np.testing.assert_array_equal(output(out, got["outputs"][0]), np.stack([x, x]))

  def test_forms(self):
    for k, (src, want) in enumerate((
        # index, then transpose: the case's order
        (copy_kernel((2, 2, 64, 32), "smem.at[1].transpose((1, 0, 2))",
                     "smem.at[0].transpose((1, 0, 2))", (64, 2, 32), (64, 2, 32)),
         ({"alloc": "smem", "index": [1], "transpose": [1, 0, 2]},
          {"alloc": "smem", "index": [0], "transpose": [1, 0, 2]})),
        # transpose, then index: commuted, a permutation left (view (64, 2, 32) of smem.at[1])
        (copy_kernel((2, 2, 64, 32), "smem.transpose((0, 2, 1, 3)).at[1]",
                     x_shape=(64, 2, 32)),
         ({"alloc": "smem", "index": [1], "transpose": [1, 0, 2]}, {"alloc": "smem"})),
        # a slice of the first dim, and plgpu.transpose_ref on a tiled ref (the method's jaxpr)
        (copy_kernel((4, 64, 32), "plgpu.transpose_ref(smem.at[pl.ds(2, 2)], (1, 0, 2))",
                     x_shape=(64, 2, 32), transforms="(plgpu.TilingTransform((32,)),)"),
         ({"alloc": "smem", "index": [{"start": 2, "size": 2}], "transpose": [1, 0, 2]},
          {"alloc": "smem"})),
        # the identity is left out
        (copy_kernel((2, 64, 32), "smem.transpose((0, 1, 2))", "smem.at[1].transpose((0, 1))",
                     out_shape=(64, 32)),
         ({"alloc": "smem"}, {"alloc": "smem", "index": [1]})))):
      with self.subTest(form=k):
        got = self.copies(src)
        self.assertEqual((got[0]["dst"], got[1]["src"]), want)

  def test_loop_slot(self):
    src = HEAD + """\
def collfuzz_case():
  def kernel(x, o, smem, bars):
    def step(i, carry):
      plgpu.copy_gmem_to_smem(x.at[i], smem.at[i % 2].transpose((1, 0, 2)), bars.at[i % 2])
      plgpu.barrier_wait(bars.at[i % 2])
      plgpu.commit_smem()
      plgpu.copy_smem_to_gmem(smem.at[i % 2].transpose((1, 0, 2)), o.at[i])
      plgpu.wait_smem_to_gmem(0)
      return carry
    lax.fori_loop(0, 4, step, None)
  k = plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((4, 64, 2, 32), jnp.float32),
                   scratch_types=[plgpu.SMEM((2, 2, 64, 32), jnp.float32),
                                  plgpu.Barrier(num_barriers=2)])
  return k, [jnp.zeros((4, 64, 2, 32), jnp.float32)]
"""
    got = self.copies(src)
    slot = got[0]["dst"]["index"][0]
    self.assertEqual((slot.get("mod"), got[0]["dst"]["transpose"]), (2, [1, 0, 2]))
    self.assertEqual(got[1]["src"], got[0]["dst"])

  def test_refused(self):
    for src, pattern in (
        (copy_kernel((2, 64, 32), "smem.transpose((1, 0, 2)).transpose((1, 0, 2))"),
         r"copy_gmem_to_smem's destination: the ref of `smem` is transformed by "
         r"TransposeTransform, TransposeTransform; a case's copy transposes its SMEM ref once"),
        # JAX commutes (1, 2, 0, 3) then [:, :, 1] into smem.at[1] with (1, 0, 2); the view is
        # smem[1] itself, and JAX's Lane lowering raises or transposes the data
        (copy_kernel((2, 8, 8, 32), "smem.transpose((1, 2, 0, 3)).at[:, :, 1]",
                     x_shape=(8, 8, 32)),
         r"commutes it into the permutation \(1, 0, 2\) where the view's is \(0, 1, 2\)"),
        # commuted, the index is `smem.at[:, 1]`: no case index
        (copy_kernel((2, 64, 32), "smem.transpose((1, 0, 2)).at[1]", x_shape=(2, 32)),
         r"commuted into `smem.at\[...\].transpose\(...\)`.*indexed with ':'"),
        (copy_kernel((2, 64, 32), "smem", "smem.transpose((1, 0, 2))",
                     prelude="o[...] = smem.transpose((1, 0, 2))[...]", out_shape=(64, 2, 32)),
         r"a transposed ref of `smem`.*a case transposes only the SMEM side of a copy")):
      with self.subTest(pattern=pattern):
        self.refused(src, pattern)

  def test_repro_script_imports_back(self):
    """A case with a transpose on both sides, in a loop slot: its repro script runs as predicted
    on the interpreter and imports back to the same copies."""
    x = arange((4, 64, 2, 32))
    slot = {"loop": "i", "mod": 2}
    body = [{"op": "loop", "trip_count": 4, "index": "i", "body": [
        load(smem_use([dict(slot)], (1, 0, 2)), {"input": "x", "index": [{"loop": "i"}]},
             barrier={"alloc": "bars", "index": dict(slot)}),
        {"op": "barrier_wait", "barrier": {"alloc": "bars", "index": dict(slot)}},
        store(smem_use([dict(slot)], (1, 0, 2)), {"output": "out", "index": [{"loop": "i"}]})]}]
    c = case(body, x.shape, x.shape, (2, 2, 64, 32), TILE, profile="interpret",
             allocs=[{"name": "bars", "kind": "barrier", "num_barriers": 2}])
    out = run(c, "interpret")
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    expected = {"kind": "completed", "outputs": [
        {k: o[k] for k in ("name", "hex", "written")} for o in out["outputs"]]}
    src = cfjax_repro.generate({"case": copy.deepcopy(c), "mode": "interpret",
                                "expected": expected})
    r = run_script(src)
    self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
    self.assertIn("as predicted", r.stdout)
    back = copy_ops(import_source(src))
    for op in back:
      side = op["dst"] if op["op"] == "copy_gmem_to_smem" else op["src"]
      self.assertEqual(side["transpose"], [1, 0, 2])
      self.assertEqual(side["index"][0].get("mod"), 2)


if __name__ == "__main__":
  unittest.main()
