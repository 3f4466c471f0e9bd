"""`collfuzz import` of a value loaded from SMEM before a write of that SMEM (cfjax_import_stale).

A case evaluates a vector value where it is used (docs/case-format.md "vector_store",
"Loop-carried values"): a vector_store's value at the store, a carry's `init` at the loop and its
`next` at the end of the trip, each `{"load": {"alloc": ...}}` reading the allocation then. A
Python kernel that loads `v = tile[...]`, writes `tile` and then uses `v` would import as a case
reading the new contents: the importer refuses it, naming the load's line and the write's.

    XLA_FLAGS=--xla_cpu_max_isa=AVX .venv-jax/bin/python -m unittest tests/jax/test_import_stale_loads.py
    .venv-jax-0.12.0.1/bin/python -m unittest tests/jax/test_import_stale_loads.py

The expected cases are written out here by hand, never copied from a run.
"""

import os
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

from loop_case_support import import_source  # noqa: E402

import cfjax_import  # noqa: E402

# A kernel of int32[128] inputs x and z, output y, an SMEM tile (shape TILE) and two barriers;
# BODY is the kernel body's text after x has been copied into the tile and waited for.
KERNEL = '''\
import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

def collfuzz_case():
  def body(x_ref, z_ref, y_ref, tile, bar):
    plgpu.copy_gmem_to_smem(x_ref, tile, bar.at[0])
    plgpu.barrier_wait(bar.at[0])
%s
  kernel = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((128,), jnp.int32),
      scratch_types=[plgpu.SMEM(%s, jnp.int32), plgpu.Barrier(num_barriers=2)])
  return kernel, [jnp.arange(128, dtype=jnp.int32), jnp.ones((128,), jnp.int32)]
'''


def kernel(body: str, tile=(128,), x_shape=None) -> str:
  src = KERNEL % (textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 4), tuple(tile))
  if x_shape is not None:  # x (and z) of another shape than 128
    src = src.replace("jnp.arange(128, dtype=jnp.int32), jnp.ones((128,), jnp.int32)",
                      f"jnp.arange({x_shape[0] * x_shape[1]}, dtype=jnp.int32).reshape"
                      f"({x_shape}), jnp.ones({x_shape}, jnp.int32)")
  return src


def line(src: str, text: str) -> int:
  """The 1-based number of the one line of `src` holding `text`."""
  found = [k + 1 for k, s in enumerate(src.splitlines()) if text in s]
  assert len(found) == 1, (text, found)
  return found[0]


def ops(program):
  for op in program:
    yield op
    yield from ops(op.get("body", []))


def vector_stores(case):
  return [op for op in ops(case["program"]) if op["op"] == "vector_store"]


def tile_load(index=None):
  load = {"alloc": "tile"}
  if index is not None:
    load["index"] = index
  return {"load": load}


class StaleLoadTest(unittest.TestCase):

  def refused(self, src: str) -> str:
    with self.assertRaises(cfjax_import.ImportRefused) as e:
      import_source(src)
    return str(e.exception)

  def test_store_after_a_write_of_its_load_is_refused(self):
    src = kernel('''
        v = tile[...]
        tile[...] = v * 2
        plgpu.commit_smem()
        y_ref[...] = v + 1
        ''')
    msg = self.refused(src)
    load, write, store = (line(src, t) for t in ("v = tile[...]", "tile[...] = v * 2",
                                                 "y_ref[...] = v + 1"))
    self.assertRegex(msg, rf"k\.py:{store}: the value stored here loads `tile` \(line {load}\), "
                     rf"which the vector store at line {write} writes before this store; a case "
                     "evaluates a vector value where it is stored")

  def test_store_before_the_write_imports(self):
    case = import_source(kernel('''
        v = tile[...]
        y_ref[...] = v + 1
        tile[...] = v * 2
        plgpu.commit_smem()
        '''))
    stores = vector_stores(case)
    y = case["outputs"][0]["name"]
    self.assertEqual([s["dst"] for s in stores], [{"output": y}, {"alloc": "tile"}])
    self.assertEqual(stores[0]["value"], {"add": [tile_load(), {"const": 1}]})
    self.assertEqual(stores[1]["value"], {"mul": [tile_load(), {"const": 2}]})

  def test_load_again_after_the_write_imports(self):
    case = import_source(kernel('''
        tile[...] = tile[...] * 2
        plgpu.commit_smem()
        y_ref[...] = tile[...] + 1
        '''))
    self.assertEqual(vector_stores(case)[1]["value"], {"add": [tile_load(), {"const": 1}]})

  def test_copy_into_the_tile_before_the_use_is_refused(self):
    src = kernel('''
        v = tile[...]
        plgpu.copy_gmem_to_smem(z_ref, tile, bar.at[1])
        plgpu.barrier_wait(bar.at[1])
        y_ref[...] = v + 1
        ''')
    msg = self.refused(src)
    self.assertIn(f"k.py:{line(src, 'y_ref[...] = v + 1')}: the value stored here loads `tile` "
                  f"(line {line(src, 'v = tile[...]')}), which the copy_gmem_to_smem at line "
                  f"{line(src, 'copy_gmem_to_smem(z_ref')} writes before this store", msg)

  def test_load_of_an_input_is_never_refused(self):
    case = import_source(kernel('''
        v = x_ref[...]
        plgpu.copy_gmem_to_smem(z_ref, tile, bar.at[1])
        plgpu.barrier_wait(bar.at[1])
        tile[...] = v * 2
        plgpu.commit_smem()
        y_ref[...] = v + 3
        y_ref[...] = v + 1
        '''))
    stores = vector_stores(case)
    x = case["inputs"][0]["name"]
    self.assertEqual(stores[-1]["value"], {"add": [{"load": {"input": x}}, {"const": 1}]})

  def test_write_of_another_slot_imports(self):
    # tile.at[1] written between the load of tile.at[0] and its use: another part of the tile.
    src = '''
        v = tile.at[0][...]
        tile.at[1][...] = v * 2
        plgpu.commit_smem()
        y_ref[...] = v + 1
        '''
    case = import_source(kernel(src, tile=(2, 128)).replace(
        "plgpu.copy_gmem_to_smem(x_ref, tile, bar.at[0])",
        "plgpu.copy_gmem_to_smem(x_ref, tile.at[0], bar.at[0])"))
    self.assertEqual(vector_stores(case)[-1]["value"],
                     {"add": [tile_load([0]), {"const": 1}]})
    # The same slot written: refused.
    src2 = kernel(src.replace("tile.at[1][...] = v", "tile.at[0][...] = v"), tile=(2, 128)).replace(
        "plgpu.copy_gmem_to_smem(x_ref, tile, bar.at[0])",
        "plgpu.copy_gmem_to_smem(x_ref, tile.at[0], bar.at[0])")
    self.assertIn("the value stored here loads `tile`", self.refused(src2))


class StaleCarryTest(unittest.TestCase):

  def refused(self, src: str) -> str:
    with self.assertRaises(cfjax_import.ImportRefused) as e:
      import_source(src)
    return str(e.exception)

  def test_next_loading_before_a_later_write_in_the_trip_is_refused(self):
    src = kernel('''
        def step(i, acc):
          v = tile[...]
          tile[...] = v + 1
          return acc + v
        y_ref[...] = lax.fori_loop(0, 4, step, jnp.zeros((128,), jnp.int32))
        ''')
    msg = self.refused(src)
    self.assertIn(f"the value the lax.fori_loop's body returns for its carry `acc` loads `tile` "
                  f"(line {line(src, 'v = tile[...]')}), which the vector store at line "
                  f"{line(src, 'tile[...] = v + 1')} writes before the end of the trip; a case "
                  "evaluates a carry's next at the end of each trip", msg)

  def test_next_loading_after_the_write_imports(self):
    case = import_source(kernel('''
        def step(i, acc):
          tile[...] = tile[...] + 1
          return acc + tile[...]
        y_ref[...] = lax.fori_loop(0, 4, step, jnp.zeros((128,), jnp.int32))
        '''))
    loop = next(op for op in ops(case["program"]) if op["op"] == "loop")
    self.assertEqual(loop["carry"]["next"], {"add": [{"carry": "acc"}, tile_load()]})

  def test_init_loading_before_a_write_is_refused(self):
    src = kernel('''
        v = tile[...]
        tile[...] = v * 2
        def step(i, acc):
          return acc + 1
        y_ref[...] = lax.fori_loop(0, 4, step, v)
        ''')
    msg = self.refused(src)
    self.assertIn(f"the value the lax.fori_loop's carry `acc` starts from loads `tile` (line "
                  f"{line(src, 'v = tile[...]')}), which the vector store at line "
                  f"{line(src, 'tile[...] = v * 2')} writes before the loop", msg)

  def test_value_loaded_before_a_loop_whose_body_writes_it_is_refused(self):
    # The store comes before the write in the body: the first trip reads what v holds, the
    # second what the first trip wrote.
    body = '''
        v = tile[...]
        def step(i, carry):
          y_ref[...] = v + 1
          tile[...] = tile[...] * 2
          return carry
        lax.fori_loop(0, %d, step, 0)
        '''
    src = kernel(body % 2)
    msg = self.refused(src)
    self.assertIn(f"k.py:{line(src, 'y_ref[...] = v + 1')}: the value stored here loads `tile` "
                  f"(line {line(src, 'v = tile[...]')}) before the lax.fori_loop at line "
                  f"{line(src, 'lax.fori_loop(0, 2')}, whose body writes it (the vector store "
                  f"at line {line(src, 'tile[...] = tile[...] * 2')})", msg)
    # One trip: no second trip to read the new contents.
    case = import_source(kernel(body % 1))
    self.assertEqual(vector_stores(case)[0]["value"], {"add": [tile_load(), {"const": 1}]})

  def test_slots_of_one_trip(self):
    # Double-buffered: trip i loads slot i % 2 and copies into slot (i + 1) % 2 before storing
    # the load: another slot of the same trip, imported; loading slot (i + 1) % 2: refused.
    body = '''
        def step(i, carry):
          v = tile.at[%s][...]
          plgpu.copy_gmem_to_smem(z_ref, tile.at[lax.rem(i + 1, 2)], bar.at[1])
          plgpu.barrier_wait(bar.at[1])
          y_ref[...] = v + 1
          return carry
        lax.fori_loop(0, 4, step, 0)
        '''

    def src(slot):
      return kernel(body % slot, tile=(2, 128)).replace(
          "plgpu.copy_gmem_to_smem(x_ref, tile, bar.at[0])",
          "plgpu.copy_gmem_to_smem(x_ref, tile.at[0], bar.at[0])")
    case = import_source(src("lax.rem(i, 2)"))
    self.assertEqual(vector_stores(case)[0]["value"],
                     {"add": [tile_load([{"loop": "i", "mod": 2}]), {"const": 1}]})
    self.assertIn("which the copy_gmem_to_smem at line", self.refused(src("lax.rem(i + 1, 2)")))

  def test_nd_loop_next_loading_before_a_later_write_is_refused(self):
    body = '''
        @plgpu.nd_loop((4,), collective_axes="x", init_carry=jnp.zeros((128,), jnp.int32))
        def acc(loop_info, carry):
          v = tile[...]
          %s
          return carry + %s
        y_ref[...] = acc
        '''
    stale = kernel(body % ("tile[...] = v + 1", "v"))
    fresh = kernel(body % ("tile[...] = tile[...] + 1", "tile[...]"))
    for k, src in enumerate((stale, fresh)):
      src = src.replace("body, out_type=", "body, cluster=(2,), cluster_names=(\"x\",), "
                        "out_type=")
      if k == 0:
        msg = self.refused(src)
        self.assertIn("the value the plgpu.nd_loop's body returns for its carry `acc` loads "
                      f"`tile` (line {line(src, 'v = tile[...]')}), which the vector store at "
                      f"line {line(src, 'tile[...] = v + 1')} writes before the end of the trip",
                      msg)
      else:
        case = import_source(src)
        loop = next(op for op in ops(case["program"]) if op["op"] == "nd_loop")
        self.assertEqual(loop["carry"]["next"], {"add": [{"carry": "acc"}, tile_load()]})


if __name__ == "__main__":
  unittest.main()
