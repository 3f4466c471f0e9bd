"""The JAX adapter's modules (harness/jax/*.py) import one another one way: no cycle, not even
through an import inside a function; and the jax-ir evaluator loads every op family.

    python3 -m unittest tests/jax/test_import_layering.py

Needs only the standard library (the modules are parsed, not imported).
"""

import ast
import glob
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ADAPTER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "harness", "jax")


def import_graph() -> dict:
  """module -> the harness/jax modules it imports (at top level or anywhere inside)."""
  paths = {os.path.basename(p)[:-3]: p for p in glob.glob(os.path.join(ADAPTER, "*.py"))}
  graph = {}
  for mod, path in paths.items():
    with open(path, encoding="utf-8") as f:
      tree = ast.parse(f.read(), path)
    deps = set()
    for node in ast.walk(tree):
      if isinstance(node, ast.Import):
        deps |= {a.name.split(".")[0] for a in node.names}
      elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        deps.add(node.module.split(".")[0])
    graph[mod] = sorted(d for d in deps if d in paths and d != mod)
  return graph


def cycles(graph: dict) -> list:
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on_stack, out = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in graph[v]:
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      comp = []
      while True:
        w = stack.pop()
        on_stack.discard(w)
        comp.append(w)
        if w == v:
          break
      if len(comp) > 1:
        out.append(sorted(comp))

  for v in sorted(graph):
    if v not in index:
      visit(v)
  return out


class ImportLayering(unittest.TestCase):

  def test_no_import_cycle(self):
    self.assertEqual(cycles(import_graph()), [])

  def test_ir_does_not_import_execute(self):
    self.assertNotIn("cfjax_execute", import_graph()["cfjax_ir"])

  def test_ir_core_is_the_lowest_evaluator_layer(self):
    graph = import_graph()
    above = [d for d in graph["cfjax_ir_core"] if d.startswith("cfjax_ir_") and d != "cfjax_ir_extract"]
    self.assertEqual(above, [])

  def test_evaluator_loads_every_op_family(self):
    graph = import_graph()
    families = sorted(m for m in graph if m.startswith("cfjax_ir_ops_"))
    self.assertTrue(families)
    self.assertEqual([m for m in families if m not in graph["cfjax_ir_eval"]], [])


if __name__ == "__main__":
  unittest.main()
