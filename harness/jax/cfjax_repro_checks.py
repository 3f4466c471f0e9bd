"""The checks of a `collfuzz repro` script: the predicted outcome as assertions (cfjax_repro.py).

emit_raised writes the exception helpers (RAISED: raised() unwraps an exception as collfuzz's
adapter does, normalize() drops what differs from run to run). emit_checks writes, for a rejected
case, the expected exception, message (exact or contained) and step and `check_raised`; for a
completed one (not in lower mode), `check_outputs`: the written elements of each output against
the reference's bytes (literal values up to MAX_LITERAL_ELEMENTS, else slices of an input that
holds them, else hex), leaving out elements that hold the reference's SMEM sentinel.
"""

from __future__ import annotations

import math

import numpy as np

import cfjax_fill
from cfjax_repro_modes import STEP_OF_STAGE
from cfjax_repro_src import dtype_src, ident

# Output elements up to this many are written as literal values; larger ones as hex.
MAX_LITERAL_ELEMENTS = 64


# ---- the expected outcome

def _values(spec: dict, data: bytes) -> np.ndarray:
  """Bytes of an array (outcome hex) -> its flat element values."""
  dtype = spec["dtype"]
  n = math.prod(int(d) for d in spec["shape"])
  if cfjax_fill.DTYPE_BITS[dtype] == 4:
    raw = np.frombuffer(data, np.uint8)
    nib = np.empty(raw.size * 2, np.uint8)
    nib[0::2] = raw & 0xF
    nib[1::2] = raw >> 4
    nib = nib[:n].astype(np.int16)
    if dtype == "int4":
      nib = np.where(nib >= 8, nib - 16, nib)
    return nib
  return np.frombuffer(data, cfjax_fill.numpy_dtype(dtype))[:n]


def _element_bytes(spec: dict) -> int:
  return max(1, cfjax_fill.DTYPE_BITS[spec["dtype"]] // 8)


def _compared_ranges(spec: dict, rec: dict, data: bytes) -> tuple[list, int]:
  """The written element ranges, less elements whose predicted bytes are all the SMEM sentinel
  (collfuzz's reference fills unwritten SMEM with 0xA5; JAX leaves it uninitialised)."""
  eb = _element_bytes(spec)
  bits = cfjax_fill.DTYPE_BITS[spec["dtype"]]
  skipped = 0
  out = []
  for b, e in rec.get("written", []):
    cur = None
    for i in range(int(b), int(e)):
      if bits == 4:
        byte = data[i // 2]
        sentinel = ((byte >> (4 * (i % 2))) & 0xF) == (cfjax_fill.SMEM_SENTINEL & 0xF) and \
            False  # a nibble cannot be told from a value: compare it
      else:
        sentinel = all(x == cfjax_fill.SMEM_SENTINEL for x in data[i * eb:(i + 1) * eb])
      if sentinel:
        skipped += 1
        cur = None
        continue
      if cur is not None and cur[1] == i:
        cur[1] = i + 1
      else:
        cur = [i, i + 1]
        out.append(cur)
  return out, skipped


def _input_slice(inputs: list, spec: dict, want: bytes):
  """(input index, element offset) of an input whose filled contents hold `want` contiguously."""
  if cfjax_fill.DTYPE_BITS[spec["dtype"]] == 4 or not want:
    return None
  eb = _element_bytes(spec)
  for k, a in enumerate(inputs):
    if a["dtype"] != spec["dtype"]:
      continue
    have = cfjax_fill.fill_bytes(a)
    at = have.find(want)
    while at != -1 and at % eb:
      at = have.find(want, at + 1)
    if at != -1:
      return k, at // eb
  return None


def _literal(v) -> str:
  if isinstance(v, (float, np.floating)):
    f = float(v)
    if math.isnan(f):
      return "np.nan"
    if math.isinf(f):
      return "np.inf" if f > 0 else "-np.inf"
    return repr(f)
  return repr(int(v))


RAISED = '''

def raised(e):
  """(class name, message) of the exception JAX raised, unwrapped as collfuzz's adapter does.

  An exception raised inside an interpret-mode callback reaches Python inside an XlaRuntimeError
  whose text ends with the original traceback: its last "Name: message" line (or a bare "Name")."""
  seen = set()
  x = e
  while x is not None and id(x) not in seen:
    seen.add(id(x))
    if type(x).__name__ not in ("XlaRuntimeError", "JaxRuntimeError", "RuntimeError"):
      return type(x).__name__, str(x)
    x = x.__cause__ or x.__context__
  text = str(e)
  found = [m for m in re.finditer(r"^([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception))(: |$)", text, re.M)
           if m.group(1).split(".")[-1] not in ("XlaRuntimeError", "JaxRuntimeError")]
  if found:
    return found[-1].group(1).split(".")[-1], text[found[-1].end():].rstrip("\\n")
  return type(e).__name__, text


def normalize(message):
  """Object addresses and interpret-mode barrier ids differ from run to run."""
  message = re.sub(r"<object object at 0x[0-9a-fA-F]+>", "<object object at 0x...>", message)
  return re.sub(r"\\bbarrier [0-9]+\\b", "barrier <id>", message)
'''


def emit_raised(E):
  """raised() and normalize(), after make_inputs."""
  E(RAISED.rstrip("\n"))
  E("")
  E("")


def emit_checks(E, r, req: dict):
  """check_raised or check_outputs, as r.kind asks; `r` is the cfjax_repro_modes.Request."""
  kind, mode, expected, inputs, outputs = r.kind, r.mode, r.expected, r.inputs, r.outputs
  # the expected outcome
  if kind == "rejected":
    d = expected["diagnostic"]
    step = STEP_OF_STAGE.get(d.get("stage", ""), d.get("stage", ""))
    E(f"EXPECTED_EXCEPTION = {d['exception']!r}")
    E(f"EXPECTED_MESSAGE = {d['message']!r}")
    E(f"# JAX's message {'contains' if req.get('match') == 'contains' else 'is'} this text"
      + (f" (rule {d['rule']}, stage {d['stage']})" if d.get("rule") else ""))
    E(f"MESSAGE_MATCH = {req.get('match', 'exact')!r}")
    E(f"EXPECTED_STEP = {step!r}")
    E("")
    E("")
    E("def check_raised(e, step):")
    E("  name, message = raised(e)")
    E("  assert name == EXPECTED_EXCEPTION, (")
    E("      f\"expected {EXPECTED_EXCEPTION} at {EXPECTED_STEP}, got {name} at {step}: {message}\")")
    E("  got, want = normalize(message), normalize(EXPECTED_MESSAGE)")
    E("  same = want in got if MESSAGE_MATCH == 'contains' else got == want")
    E("  assert same, f\"expected message {EXPECTED_MESSAGE!r}, got {message!r}\"")
    E("  assert step == EXPECTED_STEP, f\"expected it at {EXPECTED_STEP}, raised at {step}\"")
    E("  print(f\"as predicted: {name} at {step}: {message}\")")
    E("")
    E("")
  elif kind == "completed" and mode != "lower":
    E("def check_outputs(results, inputs):")
    n_checks = 0
    for k, (spec, rec) in enumerate(zip(outputs, expected.get("outputs", []))):
      data = bytes.fromhex(rec.get("hex", ""))
      ranges, skipped = _compared_ranges(spec, rec, data)
      vals = _values(spec, data)
      ne = sum(e - b for b, e in ranges)
      E(f"  {ident(spec['name'])} = np.asarray(results[{k}]).reshape(-1)")
      if skipped:
        E(f"  # {skipped} written element(s) hold SMEM that no copy wrote: collfuzz predicts its "
          "sentinel 0xA5, JAX leaves it uninitialised; not compared.")
      if ne == 0:
        E(f"  # no element of {spec['name']} is written")
        continue
      if ne <= MAX_LITERAL_ELEMENTS or cfjax_fill.DTYPE_BITS[spec["dtype"]] == 4:
        idx = [i for b, e in ranges for i in range(b, e)]
        E(f"  want = np.array([{', '.join(_literal(vals[i]) for i in idx)}]).astype({dtype_src(spec['dtype'])})")
        E(f"  got = {ident(spec['name'])}[np.array({idx!r}, dtype=np.int64)]")
      else:
        eb = _element_bytes(spec)
        parts = []
        for b, e in ranges:
          src = _input_slice(inputs, spec, data[b * eb:e * eb])
          if src is not None:
            k_in, off = src
            parts.append(f"np.asarray(inputs[{k_in}]).reshape(-1)[{off}:{off + e - b}]"
                         f"  # {inputs[k_in]['name']}'s elements [{off}, {off + e - b})")
          else:
            parts.append(f"np.frombuffer(bytes.fromhex({data[b * eb:e * eb].hex()!r}), "
                         f"{dtype_src(spec['dtype'])})")
        E(f"  # the written elements {ranges!r} ([begin, end), row-major) are predicted to hold:")
        E("  want = np.concatenate([")
        for part in parts:
          E(f"      {part.replace('  #', ',  #', 1) if '  #' in part else part + ','}")
        E("  ])")
        E(f"  got = np.concatenate([{ident(spec['name'])}[b:e] for b, e in {ranges!r}])")
      E(f"  np.testing.assert_array_equal(got, want, err_msg={'output ' + spec['name']!r})")
      n_checks += 1
    E(f"  print('as predicted: the kernel completed; {n_checks} output(s) hold the predicted values')")
    E("")
    E("")
