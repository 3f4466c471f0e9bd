"""TMA store groups through the Python side: a store's `commit_group` and `wait` fields
(plgpu.copy_smem_to_gmem(..., commit_group=False), the store without its wait_smem_to_gmem(0)), and
the ops `commit_smem_to_gmem_group` (plgpu.commit_smem_to_gmem_group()) and `wait_smem_to_gmem`
(plgpu.wait_smem_to_gmem(n, wait_read_only=...)): the case fields (cfjax_case), the translation
(cfjax_translate) and interpret mode, the repro script (cfjax_repro_body), `collfuzz import`
(cfjax_import_copies: which wait a store absorbs) and jax-ir (cp.async.bulk.commit_group and
cp.async.bulk.wait_group [read], cfjax_ir_ops_ptx and _nvvm), under Lane and Warpgroup semantics.

    .venv-jax/bin/python -m unittest tests/jax/test_store_groups.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_store_groups.py

Calls the modules directly; CliTest alone runs build/release/collfuzz (COLLFUZZ_BIN overrides),
skipped without it or where it cannot parse the new fields yet.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import numpy as np  # noqa: E402

sys.path.insert(0, HERE)
from loop_case_support import executor, import_file, output_array  # noqa: E402

import cfjax_case  # noqa: E402
import cfjax_fill  # noqa: E402
import cfjax_repro  # noqa: E402

X = np.arange(1, 129, dtype=np.float32)  # x's default iota fill (1, 2, ...)
LOOP = "$.program[0].body[0]"
STORE = LOOP + ".body[2]"
COLLFUZZ = os.environ.get("COLLFUZZ_BIN", os.path.join(ROOT, "build", "release", "collfuzz"))


def groups_case(variant="read_only", profile="interpret", semantics="lane"):
  """One CTA, a loop of 2 trips over x's halves: trip i loads x.at[pl.ds(i * 64, 64)] into buf
  (on bar), waits, and stores buf to y.at[pl.ds(i * 64, 64)] without waiting for it; after the
  loop, wait_smem_to_gmem(0).

  variant "read_only": each trip ends on wait_smem_to_gmem(0, wait_read_only=True) (buf may be
  reloaded);
  "group": the store has commit_group=False and each trip ends on commit_smem_to_gmem_group() and
  wait_smem_to_gmem(1, wait_read_only=True);
  "nowait": the store has commit_group=False and nothing commits or waits for it, in the loop or
  after it."""
  tile = {"start": {"loop": "i", "mul": 64}, "size": 64}
  trip = [
      {"op": "copy_gmem_to_smem", "src": {"input": "x", "index": [tile]},
       "dst": {"alloc": "buf"}, "barrier": {"alloc": "bar", "index": 0}},
      {"op": "barrier_wait", "barrier": {"alloc": "bar", "index": 0}},
      {"op": "copy_smem_to_gmem", "src": {"alloc": "buf"},
       "dst": {"output": "y", "index": [copy.deepcopy(tile)]}, "wait": False},
  ]
  after = [{"op": "wait_smem_to_gmem", "n": 0}]
  if variant == "read_only":
    trip.append({"op": "wait_smem_to_gmem", "n": 0, "wait_read_only": True})
  elif variant == "group":
    trip[2]["commit_group"] = False
    trip.append({"op": "commit_smem_to_gmem_group"})
    trip.append({"op": "wait_smem_to_gmem", "n": 1, "wait_read_only": True})
  elif variant == "nowait":
    trip[2]["commit_group"] = False
    after = []
  else:
    raise ValueError(variant)
  return {
      "format": 1, "name": f"store_groups_{variant}", "mesh": {},
      "target": {"arch": "sm_90a", "semantics": semantics, "profile": profile},
      "inputs": [{"name": "x", "shape": [128], "dtype": "float32"}],
      "outputs": [{"name": "y", "shape": [128], "dtype": "float32"}],
      "program": [{"op": "run_scoped", "allocs": [
          {"name": "buf", "kind": "smem", "shape": [64], "dtype": "float32"},
          {"name": "bar", "kind": "barrier", "num_barriers": 1}], "body": [
              {"op": "loop", "trip_count": 2, "index": "i", "body": trip}] + after}],
  }


def store_calls(eqns):
  """The store-group equations of a traced kernel, in order, with the parameters that matter."""
  out = []
  for e in eqns:
    name = e.primitive.name
    if name == "copy_smem_to_gmem":
      out.append((name, e.params["commit_group"]))
    elif name == "wait_smem_to_gmem":
      out.append((name, e.params["n"], e.params["wait_read_only"]))
    elif name in ("commit_group", "commit_smem"):
      out.append((name,))
  return out


def walk_eqns(jaxpr):
  for eqn in jaxpr.eqns:
    yield eqn
    for v in eqn.params.values():
      for sub in (v if isinstance(v, (tuple, list)) else (v,)):
        inner = getattr(sub, "jaxpr", sub)
        if hasattr(inner, "eqns"):
          yield from walk_eqns(inner)


def write(d, name, text):
  path = os.path.join(d, name)
  with open(path, "w", encoding="utf-8") as f:
    f.write(text)
  return path


class CaseFieldTest(unittest.TestCase):

  def test_flags_default_and_name_the_field(self):
    self.assertTrue(cfjax_case.flag({}, "wait", True))
    self.assertTrue(cfjax_case.flag({"commit_group": None}, "commit_group", True))
    self.assertFalse(cfjax_case.flag({"wait": False}, "wait", True))
    self.assertFalse(cfjax_case.flag({}, "wait_read_only", False))
    self.assertTrue(cfjax_case.flag({"wait_read_only": True}, "wait_read_only", False))
    with self.assertRaisesRegex(cfjax_case.CaseError,
                                r"^\$\.program\[0\]\.wait: expected a boolean, got 0$"):
      cfjax_case.flag({"wait": 0}, "wait", True, "$.program[0]")

  def test_wait_groups_takes_any_integer(self):
    self.assertEqual(cfjax_case.wait_groups({"n": 2}), 2)
    self.assertEqual(cfjax_case.wait_groups({"n": -1}), -1)  # JAX's own error at trace
    for bad in ({}, {"n": True}, {"n": 1.0}, {"n": "0"}):
      with self.assertRaisesRegex(cfjax_case.CaseError, r"^\$\.n: expected an integer"):
        cfjax_case.wait_groups(bad)

  def test_written_ranges_count_a_store_that_is_not_waited_for(self):
    for variant in ("read_only", "group", "nowait"):
      c = cfjax_case.Case.from_json(groups_case(variant))
      self.assertEqual(cfjax_case.written_ranges(c), {"y": [[0, 128]]}, variant)


class TranslateTest(unittest.TestCase):
  """(a) cfjax_translate emits the calls the fields name (checked on the traced jaxpr)."""

  @classmethod
  def setUpClass(cls):
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax  # pylint: disable=import-outside-toplevel
    import cfjax_translate  # pylint: disable=import-outside-toplevel
    cls.jax = jax
    cls.tr = cfjax_translate

  def calls(self, case):
    t = self.tr.Translation(cfjax_case.Case.from_json(case), None)
    args = [self.jax.numpy.asarray(cfjax_fill.fill_array(a)) for a in case["inputs"]]
    traced = self.jax.jit(t.make_kernel()).trace(*args)
    return store_calls(walk_eqns(traced.jaxpr.jaxpr))

  def test_each_field_combination(self):
    for cg in (None, True, False):
      for wait in (None, True, False):
        with self.subTest(commit_group=cg, wait=wait):
          c = groups_case("read_only")
          trip = c["program"][0]["body"][0]["body"]
          del trip[2]["wait"], trip[3]
          del c["program"][0]["body"][1]
          if cg is not None:
            trip[2]["commit_group"] = cg
          if wait is not None:
            trip[2]["wait"] = wait
          want = [("commit_smem",), ("copy_smem_to_gmem", cg is not False)]
          if wait is not False:
            want.append(("wait_smem_to_gmem", 0, False))
          self.assertEqual(self.calls(c), want)

  def test_the_new_ops(self):
    self.assertEqual(self.calls(groups_case("group")), [
        ("commit_smem",), ("copy_smem_to_gmem", False), ("commit_group",),
        ("wait_smem_to_gmem", 1, True), ("wait_smem_to_gmem", 0, False)])
    self.assertEqual(self.calls(groups_case("read_only")), [
        ("commit_smem",), ("copy_smem_to_gmem", True), ("wait_smem_to_gmem", 0, True),
        ("wait_smem_to_gmem", 0, False)])

  def test_unknown_ops_and_bad_fields_still_fail_naming_them(self):
    c = groups_case("group")
    c["program"][0]["body"][0]["body"][3] = {"op": "commit_smem_to_gmem_groups"}
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "crash", out)
    self.assertIn(f"{LOOP}.body[3]: unknown op 'commit_smem_to_gmem_groups'", out["reason"])
    c = groups_case("group")
    c["program"][0]["body"][0]["body"][2]["wait"] = "no"
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "crash", out)
    self.assertIn(f"{STORE}.wait: expected a boolean, got 'no'", out["reason"])


class InterpretTest(unittest.TestCase):
  """(b) interpret mode writes at issue time: y holds x however the stores are waited for."""

  def check(self, variant, semantics="lane"):
    out = executor("interpret").run(groups_case(variant, semantics=semantics))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    self.assertEqual(out["outputs"][0]["written"], [[0, 128]])
    np.testing.assert_array_equal(output_array(out, (128,)), X)
    waits = [(w["barrier"], w["phase"], w["completed"]) for w in out["ctas"][0]["waits"]]
    self.assertEqual(waits, [("bar[0]", 0, True), ("bar[0]", 1, True)])

  def test_commit_group_and_wait_one_read_only(self):
    for semantics in ("lane", "warpgroup"):
      with self.subTest(semantics=semantics):
        self.check("group", semantics)

  def test_stores_waited_for_read_only_in_the_loop(self):
    self.check("read_only")

  def test_uncommitted_stores_never_waited_for(self):
    self.check("nowait")


class NegativeWaitTest(unittest.TestCase):
  """(c) wait_smem_to_gmem(-1): JAX's ValueError at trace, the same on both releases."""

  def test_jax_raises_at_trace(self):
    c = groups_case("read_only")
    c["program"][0]["body"][1]["n"] = -1
    for mode in ("interpret", "ir"):
      with self.subTest(mode=mode):
        if mode == "ir":
          c["target"]["profile"] = "mosaic"
        out = executor(mode).run(c)
        self.assertEqual(out["kind"], "rejected", json.dumps(out)[:3000])
        d = out["diagnostic"]
        self.assertEqual((d["stage"], d["exception"], d["message"]),
                         ("trace", "ValueError", "n must be a non-negative integer, got -1"), d)
        self.assertEqual(d.get("op"), "$.program[0].body[1]")


class ReproTest(unittest.TestCase):
  """(a) the repro script writes the same calls, each op's with its JSON path."""

  def generate(self, case):
    return cfjax_repro.generate({
        "case": case, "mode": "interpret", "expected": {"kind": "completed", "outputs": []},
        "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
        "command": "collfuzz repro t.json"})

  def lines(self, src):
    return [ln.strip() for ln in src.splitlines()
            if "smem_to_gmem" in ln or "commit_smem" in ln]

  def test_lines_of_each_variant(self):
    store = "plgpu.copy_smem_to_gmem(buf, y.at[pl.ds(i * 64, 64),]"
    self.assertEqual(self.lines(self.generate(groups_case("group"))), [
        f"plgpu.commit_smem()  # {STORE}",
        f"{store}, commit_group=False)",
        f"plgpu.commit_smem_to_gmem_group()  # {LOOP}.body[3]",
        f"plgpu.wait_smem_to_gmem(1, wait_read_only=True)  # {LOOP}.body[4]",
        "plgpu.wait_smem_to_gmem(0)  # $.program[0].body[1]"])
    self.assertEqual(self.lines(self.generate(groups_case("read_only"))), [
        f"plgpu.commit_smem()  # {STORE}",
        f"{store})",
        f"plgpu.wait_smem_to_gmem(0, wait_read_only=True)  # {LOOP}.body[3]",
        "plgpu.wait_smem_to_gmem(0)  # $.program[0].body[1]"])
    c = groups_case("read_only")
    del c["program"][0]["body"][0]["body"][2]["wait"]  # the plain trio
    c["program"][0]["body"][0]["body"][2]["commit_group"] = True  # written as the default
    self.assertEqual(self.lines(self.generate(c))[:3], [
        f"plgpu.commit_smem()  # {STORE}", f"{store})", "plgpu.wait_smem_to_gmem(0)"])

  def test_negative_n_passes_through(self):
    c = groups_case("read_only")
    c["program"][0]["body"][1]["n"] = -1
    self.assertIn("plgpu.wait_smem_to_gmem(-1)  # $.program[0].body[1]\n", self.generate(c))

  def test_bad_fields_are_refused_naming_them(self):
    c = groups_case("group")
    c["program"][0]["body"][0]["body"][4]["n"] = "1"
    with self.assertRaisesRegex(cfjax_repro.Unsupported, r"\.body\[4\]\.n: expected an integer"):
      self.generate(c)
    c = groups_case("group")
    c["program"][0]["body"][0]["body"][2]["commit_group"] = 0
    with self.assertRaisesRegex(cfjax_repro.Unsupported,
                                r"\.body\[2\]\.commit_group: expected a boolean"):
      self.generate(c)

  def test_script_runs_and_asserts_the_outputs(self):
    c = groups_case("group")
    out = executor("interpret").run(c)
    self.assertEqual(out["kind"], "completed", out)
    src = cfjax_repro.generate({"case": c, "mode": "interpret", "expected": out,
                                "match": "exact", "collfuzz": "collfuzz test", "jax": "0.11.2",
                                "command": "collfuzz repro t.json"})
    with tempfile.TemporaryDirectory() as d:
      path = write(d, "t.py", src)
      env = dict(os.environ, JAX_PLATFORMS="cpu")
      run = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env,
                           timeout=300, check=False)
    self.assertEqual(run.returncode, 0, run.stdout[-2000:] + run.stderr[-4000:])
    self.assertIn("1 output(s) hold the predicted values", run.stdout)


class ImportTest(unittest.TestCase):
  """(d) import: which wait a store absorbs, commit_group, the new ops; and the round trip."""

  KERNEL = textwrap.dedent('''
      import jax
      import jax.numpy as jnp
      from jax import lax
      from jax.experimental import pallas as pl
      from jax.experimental.pallas import mosaic_gpu as plgpu

      def collfuzz_case():
        def body(x_ref, y_ref, smem, bar):
          def trip(i, carry):
            plgpu.copy_gmem_to_smem(x_ref.at[pl.ds(i * 64, 64)], smem, bar.at[0])
            plgpu.barrier_wait(bar.at[0])
            plgpu.commit_smem()
            plgpu.copy_smem_to_gmem(smem, y_ref.at[pl.ds(i * 64, 64)]%s)
      %s
            return carry
          lax.fori_loop(0, 2, trip, None)
      %s
        kernel = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((128,), jnp.float32),
            scratch_types=[plgpu.SMEM((64,), jnp.float32), plgpu.Barrier(num_barriers=1)])
        return kernel, [jnp.arange(128, dtype=jnp.float32)]
      ''')

  def import_kernel(self, store_kwargs, in_trip, after):
    indent = lambda lines, k: "\n".join(" " * k + ln for ln in lines)  # noqa: E731
    src = self.KERNEL % (store_kwargs, indent(in_trip, 6), indent(after, 4))
    with tempfile.TemporaryDirectory() as d:
      return import_file(write(d, "k.py", src))

  def trip_and_after(self, c):
    (scope,) = c["program"]
    loop = scope["body"][0]
    self.assertEqual(loop["op"], "loop", c["program"])
    return loop["body"][2:], scope["body"][1:]

  def test_group_ops(self):
    c = self.import_kernel(", commit_group=False",
                           ["plgpu.commit_smem_to_gmem_group()",
                            "plgpu.wait_smem_to_gmem(1, wait_read_only=True)"],
                           ["plgpu.wait_smem_to_gmem(0)"])
    trip, after = self.trip_and_after(c)
    self.assertEqual([{k: v for k, v in op.items() if k not in ("src", "dst")} for op in trip], [
        {"op": "copy_smem_to_gmem", "commit_group": False, "wait": False},
        {"op": "commit_smem_to_gmem_group"},
        {"op": "wait_smem_to_gmem", "n": 1, "wait_read_only": True}])
    self.assertEqual(after, [{"op": "wait_smem_to_gmem", "n": 0}])

  def test_the_plain_trio_is_a_plain_store(self):
    c = self.import_kernel("", ["plgpu.wait_smem_to_gmem(0)"], [])
    trip, after = self.trip_and_after(c)
    self.assertEqual(len(trip), 1, trip)
    self.assertEqual(set(trip[0]), {"op", "src", "dst"})
    self.assertEqual(after, [])
    # a commit_smem between the store and its wait is an op of its own: the wait is one too
    c = self.import_kernel("", ["plgpu.commit_smem()", "plgpu.wait_smem_to_gmem(0)"], [])
    trip = self.trip_and_after(c)[0]
    self.assertEqual([{k: v for k, v in op.items() if k not in ("src", "dst")} for op in trip], [
        {"op": "copy_smem_to_gmem", "wait": False}, {"op": "commit_smem"},
        {"op": "wait_smem_to_gmem", "n": 0}])

  def test_only_a_plain_wait_right_after_the_store_is_absorbed(self):
    for in_trip, want in (
        (["plgpu.wait_smem_to_gmem(0, wait_read_only=True)"],
         [{"op": "wait_smem_to_gmem", "n": 0, "wait_read_only": True}]),
        (["plgpu.wait_smem_to_gmem(1)"], [{"op": "wait_smem_to_gmem", "n": 1}]),
        (["plgpu.commit_smem_to_gmem_group()", "plgpu.wait_smem_to_gmem(0)"],
         [{"op": "commit_smem_to_gmem_group"}, {"op": "wait_smem_to_gmem", "n": 0}]),
        ([], [])):
      with self.subTest(in_trip=in_trip):
        trip, after = self.trip_and_after(self.import_kernel("", in_trip, []))
        self.assertEqual(trip[0]["wait"], False)
        self.assertNotIn("commit_group", trip[0])
        self.assertEqual(trip[1:], want)
        self.assertEqual(after, [])
    # the wait after the loop is in another jaxpr: the store in the loop is not waited for
    trip, after = self.trip_and_after(self.import_kernel("", [], ["plgpu.wait_smem_to_gmem(0)"]))
    self.assertEqual(trip[0]["wait"], False)
    self.assertEqual(after, [{"op": "wait_smem_to_gmem", "n": 0}])

  def test_round_trip(self):
    """case -> repro script -> import gives the case back (tools/import_roundtrip.py's canonical
    form, plus the store-group fields and ops, which it passes through or leaves out)."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    import import_roundtrip  # pylint: disable=import-outside-toplevel

    def group_ops(ops):
      for op in ops:
        if op["op"] == "copy_smem_to_gmem":
          yield {k: op[k] for k in ("op", "commit_group", "wait") if k in op}
        elif op["op"] in ("commit_smem_to_gmem_group", "wait_smem_to_gmem"):
          yield op
        yield from group_ops(op.get("body", []))

    for variant in ("read_only", "group", "nowait"):
      with self.subTest(variant=variant):
        c = groups_case(variant)
        src = cfjax_repro.generate({"case": c, "mode": "interpret",
                                    "expected": {"kind": "completed", "outputs": []}})
        with tempfile.TemporaryDirectory() as d:
          got = import_file(write(d, "k.py", src))
        self.assertIsNone(import_roundtrip.first_difference(import_roundtrip.canonical(c),
                                                            import_roundtrip.canonical(got)))
        self.assertEqual(list(group_ops(got["program"])), list(group_ops(c["program"])))


class IrTest(unittest.TestCase):
  """(e) jax-ir: cp.async.bulk.commit_group (inline PTX) and cp.async.bulk.wait_group [read]
  (nvvm) are modelled; every store completes at issue."""

  def check(self, variant, semantics):
    out = executor("ir").run(groups_case(variant, profile="mosaic", semantics=semantics))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:3000])
    self.assertEqual(out["outputs"][0]["written"], [[0, 128]])
    np.testing.assert_array_equal(output_array(out, (128,)), X)

  def test_each_variant(self):
    for variant in ("read_only", "group", "nowait"):
      for semantics in ("lane", "warpgroup"):
        with self.subTest(variant=variant, semantics=semantics):
          self.check(variant, semantics)

  def test_an_unknown_ptx_statement_is_still_named(self):
    """What jax-ir does not model stays `unavailable`, naming it."""
    import cfjax_ir_ops_ptx  # pylint: disable=import-outside-toplevel
    self.assertIn("cp.async.bulk.commit_group;", cfjax_ir_ops_ptx._NOOP_PTX)  # pylint: disable=protected-access
    saved = set(cfjax_ir_ops_ptx._NOOP_PTX)  # pylint: disable=protected-access
    cfjax_ir_ops_ptx._NOOP_PTX.discard("cp.async.bulk.commit_group;")  # pylint: disable=protected-access
    try:
      out = executor("ir").run(groups_case("group", profile="mosaic"))
    finally:
      cfjax_ir_ops_ptx._NOOP_PTX.update(saved)  # pylint: disable=protected-access
    self.assertEqual(out["kind"], "unavailable", out)
    self.assertEqual(out["reason"], 'ptx "cp.async.bulk.commit_group;"')


@unittest.skipUnless(os.path.exists(COLLFUZZ), "needs build/release/collfuzz")
class CliTest(unittest.TestCase):
  """`collfuzz run --executors jax-ir` on the case; skipped while the binary cannot parse it."""

  def test_jax_ir_completes_through_the_cli(self):
    with tempfile.TemporaryDirectory() as d:
      path = write(d, "c.json", json.dumps(groups_case("group", profile="mosaic")))
      run = subprocess.run([COLLFUZZ, "run", path, "--executors", "jax-ir", "--json",
                            "--python", sys.executable, "--jax", metadata.version("jax")],
                           capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    if run.returncode == 2:
      self.skipTest(f"{COLLFUZZ} does not parse the case yet: {run.stderr.strip()[:300]}")
    self.assertIn(run.returncode, (0, 1), run.stderr[-3000:])
    (got,) = json.loads(run.stdout)  # one entry per case
    (ex,) = got["executors"]
    self.assertEqual(ex["outcome"]["kind"], "completed", json.dumps(ex)[:3000])
    self.assertEqual(bytes.fromhex(ex["outcome"]["outputs"][0]["hex"]), X.tobytes())


if __name__ == "__main__":
  unittest.main()
