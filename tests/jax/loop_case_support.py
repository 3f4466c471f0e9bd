"""Helpers shared by the loop tests (test_loop_index.py, test_loop_slots.py,
test_arrive_and_wait.py): a case run through cfjax_execute, an output read back, a kernel file
imported, the loops of a program."""

import os

import numpy as np


def output_array(out, shape, k=0):
  o = out["outputs"][k]
  return np.frombuffer(bytes.fromhex(o["hex"]), np.float32).reshape(shape)


def executor(mode):
  os.environ["JAX_PLATFORMS"] = "cpu"
  import cfjax_execute  # pylint: disable=import-outside-toplevel
  return cfjax_execute.Executor(mode)


def import_file(path):
  import cfjax_import  # pylint: disable=import-outside-toplevel
  _, case = cfjax_import.import_kernel(path, "", "sm_90a", "interpret", "")
  return case


def loops(ops):
  for op in ops:
    if op["op"] == "loop":
      yield op
    yield from loops(op.get("body", []))
