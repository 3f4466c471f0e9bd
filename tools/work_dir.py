"""A tool's scratch folder: the one the user named (--work, kept), or a temporary one removed when
the tool's process exits (the CI runs these tools on every push; each left 4 MB in /tmp before)."""

from __future__ import annotations

import atexit
import shutil
import tempfile


def work_dir(named: str | None, prefix: str) -> str:
  """`named` when given (kept for the user to read); otherwise a new temporary folder, removed at
  exit."""
  if named:
    return named
  path = tempfile.mkdtemp(prefix=prefix)
  atexit.register(shutil.rmtree, path, ignore_errors=True)
  return path
