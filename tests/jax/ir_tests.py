"""Tests of jax-ir (harness/jax/cfjax_ir*.py, docs/ir-executor.md) on the JAX release running them.

    .venv-jax/bin/python -m unittest tests/jax/ir_tests.py            # JAX 0.11.2
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/ir_tests.py   # JAX 0.12.0.1
    ctest --preset release -R jax_ir                                  # both (tests/jax/run_ir_tests.sh)

Needs build/release/collfuzz (COLLFUZZ_BIN overrides); skipped without it. The planted-edit tests
("proof that it can fail") edit the lowered module as a compiler bug would (CFJAX_IR_EDIT) and
check that the oracles flag the edited kernel while they pass the unedited one.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

JAX_VERSION = metadata.version("jax")
COLLFUZZ = os.environ.get("COLLFUZZ_BIN", os.path.join(ROOT, "build", "release", "collfuzz"))
MULTICAST = os.path.join(ROOT, "corpus", "mode.multicast__cluster2x1_x.json")


def collfuzz(*args, edit=None):
  env = dict(os.environ)
  env.pop("CFJAX_IR_EDIT", None)
  if edit:
    env["CFJAX_IR_EDIT"] = edit
  return subprocess.run([COLLFUZZ, *args, "--python", sys.executable, "--jax", JAX_VERSION],
                        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False)


EDITS = {
    # CTA 1 drops out of the multicast: its buffer stays the sentinel and its wait never ends.
    "mask": "CTA 1 dst element 0: expected 0x3f800000 (32-bit), got 0xa5a5a5a5",
    # 16 more bytes per lane armed: 2048 bytes never arrive.
    "expect_tx": "got pending 0 tx 2048",
    # Every lane issues the copy: 128 times the bytes land.
    "predicate": "received 4194304",
    # The box starts 8 rows lower: other rows land in the buffer.
    "coord": "CTA 0 dst element 0: expected 0x3f800000 (32-bit), got 0x44004000",
}


@unittest.skipUnless(os.path.exists(COLLFUZZ), "needs build/release/collfuzz")
class PlantedEdits(unittest.TestCase):
  """Each edit is one a compiler bug could make; the unedited module agrees with the reference.
  One replay runs the unedited case and one copy of it per edit (CFJAX_IR_EDIT=CASE:EDIT,...)."""

  def test_each_edit_is_flagged_and_the_unedited_case_agrees(self):
    """One `collfuzz run`: the unedited case, one copy per edit, an unknown edit, and the
    predicate=False case of this release (0.11.2: completes; 0.12.0.1: the new deadlock, which
    agrees with the 0.12.0.1 reference)."""
    with open(MULTICAST, encoding="utf-8") as f:
      case = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
      names, files = {}, []
      for edit in ["none", *EDITS, "nope"]:
        c = dict(case, name=f"{case['name']}__edit_{edit}")
        names[edit] = c["name"]
        files.append(os.path.join(tmp, c["name"] + ".json"))
        with open(files[-1], "w", encoding="utf-8") as f:
          json.dump(c, f)
      pred = "mode.predicate_false__plain" if JAX_VERSION == "0.11.2" else "deadlock.predicate_false__plain"
      files.append(os.path.join(ROOT, "corpus", pred + ".json"))
      spec = ",".join(f"{names[e]}:{e}" for e in [*EDITS, "nope"])
      p = collfuzz("run", *files, "--executors", "jax-ir", edit=spec)
    self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
    sections = {}
    for chunk in p.stdout.split("\n== "):
      sections[chunk.lstrip("= ").split(" ", 1)[0]] = chunk
    self.assertIn("jax-ir: agrees with the reference", sections[names["none"]], p.stdout)
    for edit, expect in EDITS.items():
      sec = sections[names[edit]]
      self.assertRegex(sec, r"jax-ir: \d+ disagreement\(s\)", edit)
      self.assertIn(expect, sec, edit)
    self.assertIn("CFJAX_IR_EDIT: unknown edit 'nope'", sections[names["nope"]])
    sec = sections[pred]
    self.assertIn("jax-ir: agrees with the reference", sec, p.stdout)
    self.assertIn("jax-ir: completed (mosaic)" if JAX_VERSION == "0.11.2" else "jax-ir: deadlock (mosaic)", sec)


@unittest.skipUnless(os.path.exists(COLLFUZZ), "needs build/release/collfuzz")
class UndefinedBehaviour(unittest.TestCase):
  """A multicast past the cluster (a collective axis named twice in a cluster of 2) is the outcome
  `undefined` with its code, which agrees with the reference's prediction."""

  def test_multicast_outside_cluster(self):
    case = os.path.join(ROOT, "corpus", "run.multicast.outside_cluster__repeated_axis_cluster_of_2.json")
    p = collfuzz("run", case, "--executors", "jax-ir")
    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
    self.assertIn("jax-ir: agrees with the reference", p.stdout)
    self.assertIn("undefined behaviour multicast_outside_cluster", p.stdout)


class UnknownOps(unittest.TestCase):
  """An op the evaluator does not model makes the case unavailable with the op's name."""

  def test_unknown_op_named(self):
    from jax._src.interpreters import mlir  # pylint: disable=import-outside-toplevel
    from jax._src.lib.mlir import ir  # pylint: disable=import-outside-toplevel
    import cfjax_case  # pylint: disable=import-outside-toplevel
    import cfjax_ir_eval  # pylint: disable=import-outside-toplevel
    from cfjax_ir_extract import Unsupported  # pylint: disable=import-outside-toplevel
    with open(MULTICAST, encoding="utf-8") as f:
      case = cfjax_case.Case.from_json(json.load(f))
    ctx = mlir.make_ir_context()
    with ctx:
      m = ir.Module.parse("func.func @f(%a: f32) -> f32 {\n  %0 = math.sqrt %a : f32\n  return %0 : f32\n}")
      comp = cfjax_ir_eval.Compiler(cfjax_ir_eval.Machine(case, {}, [], None))
      op = list(m.body.operations[0].regions[0].blocks[0].operations)[0]
      with self.assertRaises(Unsupported) as cm:
        comp.op(op)
    self.assertEqual(str(cm.exception), "op math.sqrt")


@unittest.skipUnless(os.path.exists(COLLFUZZ), "needs build/release/collfuzz")
class PredicateFalse(unittest.TestCase):
  """JAX 0.12.0.1 predicates the arrive.expect_tx itself: predicate=False and a wait deadlock.
  Against the 0.12.0.1 reference that agrees (above); against 0.11.2's it is a disagreement."""

  @unittest.skipUnless(JAX_VERSION == "0.12.0.1", "the 0.12.0.1 behaviour")
  def test_0_12_deadlock_disagrees_with_the_0_11_reference(self):
    with tempfile.TemporaryDirectory() as out:
      t = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "jax_upgrade_triage.py"),
                          "--python", sys.executable, "--against", "0.11.2", "--modes", "ir",
                          "--campaign", "0", "--collfuzz", COLLFUZZ, "--out", out,
                          os.path.join(ROOT, "corpus", "mode.predicate_false__plain.json")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
      self.assertEqual(t.returncode, 0, t.stdout + t.stderr)
      with open(os.path.join(out, "disagreements.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    self.assertEqual([(r["file"], r["why"]) for r in rows],
                     [("corpus/mode.predicate_false__plain.json", "reference completed; deadlock")])


if __name__ == "__main__":
  unittest.main()
