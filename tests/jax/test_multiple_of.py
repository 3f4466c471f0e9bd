"""pl.multiple_of in a dynamic index (`{"axis": "y", "mul": 8, "multiple_of": 8}` is
`pl.multiple_of(lax.axis_index("y") * 8, 8)`) through the Python side: the translation
(cfjax_translate), the repro script (cfjax_repro_body), `collfuzz import` (cfjax_import_index,
_values) with its refusals, and the run of the case on JAX's interpret mode.

    .venv-jax/bin/python -m unittest tests/jax/test_multiple_of.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_multiple_of.py
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

from loop_case_support import import_source  # noqa: E402

import cfjax_import_values  # noqa: E402
import cfjax_repro_body  # noqa: E402

KERNEL = '''
import jax, jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def body(x, out):
  def scope(smem, bar):
    plgpu.copy_gmem_to_smem(x.at[pl.ds(START, 8)], smem, bar)
    plgpu.barrier_wait(bar)
  pl.run_scoped(scope, plgpu.SMEM((8, 8), jnp.float32), plgpu.Barrier(num_arrivals=1))

def collfuzz_case():
  kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((1,), jnp.float32), cluster=(2,),
                        cluster_names=("y",))
  return kernel, (jnp.zeros((16, 8), jnp.float32),)
'''


def first_copy_start(case):
  """The start of the first copy_gmem_to_smem's first GMEM index entry, wherever it is."""
  def walk(ops):
    for op in ops:
      if op.get("op") == "copy_gmem_to_smem":
        return op["src"]["index"][0]["start"]
      for key in ("body", "then"):
        if isinstance(op.get(key), list):
          found = walk(op[key])
          if found is not None:
            return found
    return None
  return walk(case["program"])


class ReproTest(unittest.TestCase):

  def test_the_script_wraps_the_whole_index(self):
    writer = cfjax_repro_body.Writer.__new__(cfjax_repro_body.Writer)
    writer.loop_names = {}
    self.assertEqual(writer.dynamic_index({"axis": "y", "mul": 4, "multiple_of": 8}),
                     "pl.multiple_of(lax.axis_index('y') * 4, 8)")
    self.assertEqual(writer.dynamic_index({"axis": "y", "add": 8, "mod": 16, "multiple_of": 8}),
                     "pl.multiple_of((lax.axis_index('y') + 8) % 16, 8)")

  def test_the_importer_spells_and_writes_it(self):
    a = cfjax_import_values.Axis("y", 4).assumed(8)
    self.assertEqual(a.spelt(), "pl.multiple_of(lax.axis_index('y') * 4, 8)")
    self.assertEqual(a.entry(), {"axis": "y", "mul": 4, "multiple_of": 8})


class ImportTest(unittest.TestCase):

  def test_a_hinted_start_is_imported(self):
    case = import_source(KERNEL.replace("START", "pl.multiple_of(lax.axis_index('y') * 4, 8)"))
    self.assertEqual(first_copy_start(case), {"axis": "y", "mul": 4, "multiple_of": 8})

  def test_arithmetic_after_the_hint_is_refused(self):
    import cfjax_import_values as values  # pylint: disable=import-outside-toplevel
    with self.assertRaises(values.ImportRefused) as ctx:
      import_source(KERNEL.replace("START", "pl.multiple_of(lax.axis_index('y') * 4, 8) + 1"))
    self.assertIn("pl.multiple_of", str(ctx.exception))


if __name__ == "__main__":
  unittest.main()
