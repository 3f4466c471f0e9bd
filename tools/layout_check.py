#!/usr/bin/env python3
"""The source layout's two rules (README, "Layout"; issue 28): no source file over 800 lines, and
no include or import cycle.

  python3 tools/layout_check.py [ROOT]

Sources are the git-tracked C++, CUDA and Python files (corpus and baselines are data, not
sources). C++: the project's quoted includes ("harness/core/case.h") between tracked files.
Python: the imports of the modules in each directory holding .py files, including the ones made
inside functions (a lazy import still ties two modules together). Exits 1 naming every file over
the limit and every cycle, 0 otherwise.
"""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

MAX_LINES = 800
SOURCE_EXTENSIONS = ('.cpp', '.h', '.cu', '.cuh', '.py', '.def')


def tracked_files(root: str) -> list[str]:
  out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], check=True, capture_output=True)
  return [p for p in out.stdout.decode().split('\0') if p]


def cxx_edges(root: str, files: list[str]) -> dict[str, set[str]]:
  known = set(files)
  edges: dict[str, set[str]] = {}
  include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
  for f in files:
    if not f.endswith(('.cpp', '.h', '.cu', '.cuh')):
      continue
    with open(os.path.join(root, f), encoding='utf-8', errors='replace') as fh:
      text = fh.read()
    for inc in include.findall(text):
      # Project includes are root-relative; a sibling include is resolved next to the file.
      for cand in (inc, os.path.normpath(os.path.join(os.path.dirname(f), inc))):
        if cand in known:
          edges.setdefault(f, set()).add(cand)
          break
  return edges


def py_edges(root: str, files: list[str]) -> dict[str, set[str]]:
  edges: dict[str, set[str]] = {}
  by_dir: dict[str, dict[str, str]] = {}
  for f in files:
    if f.endswith('.py'):
      by_dir.setdefault(os.path.dirname(f), {})[os.path.basename(f)[:-3]] = f
  for directory, modules in by_dir.items():
    for name, f in modules.items():
      with open(os.path.join(root, f), encoding='utf-8') as fh:
        try:
          tree = ast.parse(fh.read(), f)
        except SyntaxError as e:
          print(f'layout_check: {f}: cannot parse: {e}', file=sys.stderr)
          continue
      for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
          targets = [a.name.split('.')[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
          targets = [node.module.split('.')[0]]
        for t in targets:
          if t in modules and t != name:
            edges.setdefault(f, set()).add(modules[t])
  return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
  """Every strongly connected component of more than one file (Tarjan), each sorted."""
  index: dict[str, int] = {}
  low: dict[str, int] = {}
  stack: list[str] = []
  on_stack: set[str] = set()
  found: list[list[str]] = []
  counter = [0]
  sys.setrecursionlimit(10000)

  def visit(v: str) -> None:
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on_stack.add(v)
    for w in sorted(edges.get(v, ())):
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
        found.append(sorted(comp))

  for v in sorted(edges):
    if v not in index:
      visit(v)
  return sorted(found)


def main() -> int:
  root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
  files = tracked_files(root)
  problems = 0
  for f in files:
    if not f.endswith(SOURCE_EXTENSIONS) or not os.path.isfile(os.path.join(root, f)):
      continue
    with open(os.path.join(root, f), 'rb') as fh:
      n = fh.read().count(b'\n')
    if n > MAX_LINES:
      print(f'layout_check: {f}: {n} lines, over the limit of {MAX_LINES}: split it by concept')
      problems += 1
  for kind, edges in (('include', cxx_edges(root, files)), ('import', py_edges(root, files))):
    for comp in cycles(edges):
      print(f'layout_check: an {kind} cycle among: {", ".join(comp)}')
      problems += 1
  if problems:
    return 1
  print(f'layout_check: {len(files)} tracked files; none over {MAX_LINES} lines; no include or import cycle')
  return 0


if __name__ == '__main__':
  sys.exit(main())
