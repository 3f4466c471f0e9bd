"""The known JAX bugs (ci/known-jax-bugs.json) are still bugs in the JAX that runs this test.

Each entry names a reproduction: a case file with its standalone script beside it (the script
asserts what collfuzz predicts and fails while the bug is there), or a standalone script alone
(for constructs the case format cannot express yet), which takes `--expect-bug`. The test runs
each script with this interpreter and asserts that the bug shows, with the entry's pattern in
what JAX raised, on every release the entry lists. When a JAX release fixes one, this test fails
and the entry's `jax` list (or the entry) is to be updated.
"""

import json
import os
import re
import subprocess
import sys
import unittest

import jax

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def entries():
  with open(os.path.join(ROOT, "ci", "known-jax-bugs.json")) as f:
    return json.load(f)["bugs"]


class KnownJaxBugsTest(unittest.TestCase):

  def test_every_entry_has_a_reproduction_in_the_repository(self):
    for bug in entries():
      case = os.path.join(ROOT, bug["case"])
      self.assertTrue(os.path.exists(case), f"{bug['id']}: {bug['case']} is missing")
      if case.endswith(".json"):
        script = case[:-len(".json")] + ".py"
        self.assertTrue(os.path.exists(script), f"{bug['id']}: no standalone script beside its case")

  def test_each_bug_still_shows_on_this_release(self):
    ran = 0
    for bug in entries():
      if jax.__version__ not in bug["jax"]:
        continue
      case = os.path.join(ROOT, bug["case"])
      with self.subTest(bug=bug["id"]):
        if case.endswith(".py"):
          proc = subprocess.run([sys.executable, case, "--expect-bug"], capture_output=True,
                                text=True, timeout=300, check=False)
          self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
          self.assertRegex(proc.stdout, bug["pattern"])
        else:
          script = case[:-len(".json")] + ".py"
          proc = subprocess.run([sys.executable, script], capture_output=True, text=True,
                                timeout=300, check=False)
          # The script asserts collfuzz's prediction, so the bug is an AssertionError whose text
          # holds what JAX raised.
          self.assertNotEqual(proc.returncode, 0, f"{bug['id']}: the script passed: fixed?")
          self.assertIn("AssertionError", proc.stderr)
          self.assertIsNotNone(re.search(bug["pattern"], proc.stderr), proc.stderr[-2000:])
        ran += 1
    self.assertGreater(ran, 0, f"no known bug lists JAX {jax.__version__}: nothing was checked")


if __name__ == "__main__":
  unittest.main()
