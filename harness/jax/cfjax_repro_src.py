"""Python source spelling for `collfuzz repro`'s scripts (cfjax_repro.py; docs/python.md).

The generator's error (Unsupported), the identifiers a case's names become (ident: a name the
script itself uses, or that is no identifier, gets another), and how axis names, dtypes, shapes,
barrier counts, tuples and comment blocks are written in the script's source.
"""

from __future__ import annotations

import keyword

# Names the script itself uses; a case name equal to one gets another identifier.
RESERVED = {"jax", "lax", "jnp", "np", "pl", "plgpu", "re", "sys", "threading", "functools",
             "main", "kernel_body", "make_kernel", "make_inputs", "raised", "check", "run",
             "InterpretGPUParams", "INTERPRET", "mgpu_utils", "mgpu_core", "contextlib"}


class Unsupported(ValueError):
  """Something in the case the generator cannot write (named in the message)."""


def ident(name: str) -> str:
  """A Python identifier for a case name (kept as is where it already is one)."""
  if name.isidentifier() and not keyword.iskeyword(name) and name not in RESERVED \
      and not name.startswith("v_"):
    return name
  return "v_" + "".join(c if c.isalnum() else f"_{ord(c):x}_" for c in name)


def axis_name_src(j) -> str:
  if isinstance(j, str):
    return repr(j)
  if isinstance(j, list) and j and all(isinstance(p, str) for p in j):
    return repr(tuple(j))
  raise Unsupported(f"not an axis name: {j!r}")


def axis_names_src(j) -> str:
  if isinstance(j, str):
    return repr((j,))
  if not isinstance(j, list):
    raise Unsupported(f"not a list of axis names: {j!r}")
  parts = [axis_name_src(a) for a in j]
  return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def dtype_src(name: str) -> str:
  return f"jnp.{name}"


def shape_src(shape) -> str:
  t = tuple(int(d) for d in shape)
  return repr(t)



def num_barriers_src(a: dict) -> str:
  """cfjax_translate.num_barriers: an int, or `()` for the case's `[]` (a 0-d barrier ref)."""
  n = a.get("num_barriers", 1)
  return "()" if isinstance(n, list) else str(int(n))


def tuple_src(items: list) -> str:
  return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"



def comment_block(text: str, width: int = 96) -> list[str]:
  out = []
  for para in text.split("\n"):
    line = "#"
    for word in para.split(" "):
      if len(line) + 1 + len(word) > width and line != "#":
        out.append(line)
        line = "#  "
      line += " " + word
    out.append(line)
  return out
