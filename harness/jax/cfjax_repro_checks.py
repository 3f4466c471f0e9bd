"""The checks of a `collfuzz repro` script: the predicted outcome as assertions (cfjax_repro.py).

emit_raised writes the exception helpers (RAISED: raised() unwraps an exception as collfuzz's
adapter does, normalize() drops what differs from run to run). emit_checks writes, for a rejected
case, the expected exception, message (exact or contained) and step and `check_raised`; for a
completed one (not in lower mode), `check_outputs`: the written elements of each output against
the reference's bytes as a readable numpy expression (runs of np.full and np.arange, short literal
lists, slices of an input that holds them; never hex), compared by the script's check_array, which
names the first differing element by its index with both values and counts the elements that
differ. Elements the reference leaves undefined (not `written`: racy, or an out-of-bounds copy of
undefined contents) and those that hold its SMEM sentinel are not compared.
"""

from __future__ import annotations

import math

import numpy as np

import cfjax_fill
from cfjax_repro_modes import STEP_OF_STAGE
from cfjax_repro_src import dtype_src, ident, shape_src


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
  if dtype == "uint64":  # as int64: the script's .astype(jnp.uint64) wraps them back, as fills do
    return np.frombuffer(data, np.int64)[:n]
  a = np.frombuffer(data, cfjax_fill.numpy_dtype(dtype))[:n]
  if a.dtype.kind == "V":
    # bfloat16 and float8 (ml_dtypes, kind "V"): their scalars are no np.floating, and int() of
    # one truncates it (114.5 was written as 114); float64 holds each exactly.
    a = a.astype(np.float64)
  return a


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
    return str(int(f)) if f.is_integer() and abs(f) < 2 ** 53 and str(f) != "-0.0" else repr(f)
  return repr(int(v))


def _integral(v) -> int | None:
  """v as a Python int when it is an integer value (of any dtype), else None."""
  if isinstance(v, (float, np.floating)):
    f = float(v)
    if not math.isfinite(f) or not f.is_integer() or abs(f) >= 2 ** 53 or str(f) == "-0.0":
      return None
    return int(f)
  return int(v)


def _small(i) -> bool:
  """An integer np.full and np.arange take without overflow."""
  return i is not None and -(1 << 62) <= i < (1 << 62)


# A run of at least this many equally spaced integers is written as np.full or np.arange.
MIN_RUN = 4
# Literal values per line of a literal list.
LITERALS_PER_LINE = 16
# A written range that holds a slice of an input and leaves more literal values than this after
# compressing is written as that slice (a random fill's copy).
MAX_LITERALS_BEFORE_SLICE = 2 * LITERALS_PER_LINE


def runs(values: list) -> list:
  """Flat element values -> parts ("full", n, v), ("arange", start, stop, step) or ("list",
  [values]) that concatenated give them again: the expected array as readable numpy."""
  ints = [_integral(v) for v in values]
  parts: list = []
  lits: list = []
  i = 0
  n = len(values)
  while i < n:
    j = i + 1
    if _small(ints[i]) and i + 1 < n and _small(ints[i + 1]):
      step = ints[i + 1] - ints[i]
      j = i + 2
      while j < n and _small(ints[j]) and ints[j] - ints[j - 1] == step:
        j += 1
      if j - i >= MIN_RUN:
        if lits:
          parts.append(("list", lits))
          lits = []
        if step == 0:
          parts.append(("full", j - i, ints[i]))
        else:
          parts.append(("arange", ints[i], ints[i] + step * (j - i), step))
        i = j
        continue
    lits.append(values[i])
    i += 1
  if lits:
    parts.append(("list", lits))
  out: list = []
  for p in parts:
    out.extend(_tile_list(p[1]) if p[0] == "list" else [p])
  return out


def _tile_list(values: list) -> list:
  """A literal list as parts where a pattern repeats at least 3 times (8 elements or more):
  ("tile", [("list", pattern)], repetitions, length)."""
  keys = [_literal(v) for v in values]
  n = len(keys)
  out: list = []
  lits: list = []
  i = 0
  while i < n:
    best = None
    for p in range(2, min(MAX_PERIOD, (n - i) // 3) + 1):
      j = i + p
      while j < n and keys[j] == keys[j - p]:
        j += 1
      if j - i >= 3 * p and j - i >= 8:
        best = (p, j - i)
        break
    if best is None:
      lits.append(values[i])
      i += 1
      continue
    p, m = best
    m -= m % p  # whole repetitions: the rest is a literal tail
    if lits:
      out.append(("list", lits))
      lits = []
    out.append(("tile", [("list", values[i:i + p])], m // p, m))
    i += m
  if lits:
    out.append(("list", lits))
  return out


# A range that repeats a pattern of at most this many elements (an iota fill wrapping around a
# small dtype's range) is written as np.tile of the pattern.
MAX_PERIOD = 64


def periodic(values: list):
  """("tile", runs of the pattern, repetitions, length) when `values` repeat a pattern of at most
  MAX_PERIOD elements at least twice, and the pattern compresses to fewer parts than the whole."""
  keys = [_literal(v) for v in values]
  n = len(keys)
  for p in range(2, min(MAX_PERIOD, n // 2) + 1):
    if all(keys[i] == keys[i - p] for i in range(p, n)):
      pattern = runs(values[:p])
      if len(pattern) < len(runs(values)):
        return ("tile", pattern, -(-n // p), n)
      return None
  return None


def _one_line(part) -> str:
  lines = part_src(part)
  return lines[0] if len(lines) == 1 else ""


def part_src(part) -> list:
  """One part of runs() as source lines, the lines after the first indented relative to it."""
  if part[0] == "full":
    return [f"np.full({part[1]}, {part[2]})"]
  if part[0] == "arange":
    _, a, b, step = part
    return [f"np.arange({a}, {b})" if step == 1 else f"np.arange({a}, {b}, {step})"]
  if part[0] == "tile":
    _, pattern, reps, n = part
    inner = [_one_line(p) for p in pattern]
    if all(inner) and sum(len(x) for x in inner) < 120:
      pat = inner[0] if len(inner) == 1 else f"np.concatenate([{', '.join(inner)}])"
      return [f"np.tile({pat}, {reps})" + ("" if reps * _count(pattern) == n else f"[:{n}]")]
    lines = ["np.tile(np.concatenate(["]
    for p in pattern:
      lines.extend("    " + line for line in part_src(p)[:-1])
      lines.append("    " + part_src(p)[-1] + ",")
    lines.append(f"]), {reps})" + ("" if reps * _count(pattern) == n else f"[:{n}]"))
    return lines
  vals = [_literal(v) for v in part[1]]
  if len(vals) <= LITERALS_PER_LINE:
    return [f"np.array([{', '.join(vals)}])"]
  lines = ["np.array(["]
  for k in range(0, len(vals), LITERALS_PER_LINE):
    lines.append(f"    {', '.join(vals[k:k + LITERALS_PER_LINE])},")
  lines.append("])")
  return lines


def _count(parts: list) -> int:
  """How many elements runs() parts hold."""
  n = 0
  for p in parts:
    n += p[1] if p[0] == "full" else len(p[1]) if p[0] == "list" else \
        (p[2] - p[1]) // p[3] if p[0] == "arange" else p[3]
  return n


def ranges_src(ranges: list) -> str:
  """[[b, e), ...] -> np.r_[b:e, ...] (the flat indices compared)."""
  return "np.r_[" + ", ".join(f"{b}:{e}" for b, e in ranges) + "]"


CHECK_ARRAY = '''

def check_array(name, got, want, at=None):
  """Asserts that array `got` holds `want` (NaN equal to NaN). `at`: the row-major flat indices of
  `got` that `want` predicts (None: every element, `want` of got's shape). Names the first
  differing element by its index, with the expected and actual values and how many differ."""
  got = np.asarray(got)
  want = np.asarray(want)
  assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, expected {want.dtype}"
  flat = got.reshape(-1) if at is None else got.reshape(-1)[at]
  want = want.reshape(-1)
  if jnp.issubdtype(want.dtype, jnp.floating):  # bfloat16 and float8 too (ml_dtypes)
    a, b = flat.astype(np.float64), want.astype(np.float64)
    differ = (a != b) & ~(np.isnan(a) & np.isnan(b))
  else:  # int4 too
    differ = flat.astype(np.int64) != want.astype(np.int64)
  if differ.any():
    k = int(np.argmax(differ))
    index = np.unravel_index(k if at is None else int(np.asarray(at)[k]), got.shape)
    raise AssertionError(
        f"{name}[{', '.join(str(int(i)) for i in index)}]: expected {want[k]}, got {flat[k]} "
        f"({int(differ.sum())} of {differ.size} compared elements differ)")
'''


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
    cause = x.__cause__ or x.__context__
    # JAX chains its JaxStackTraceBeforeTransformation (the source line) as the cause of the
    # exception a lowering rule raised: that one is the original, not a wrapper.
    if cause is not None and type(cause).__name__ == "JaxStackTraceBeforeTransformation":
      return type(x).__name__, str(x)
    x = cause
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
  E(CHECK_ARRAY.strip("\n"))
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
    alternatives = [(a["exception"], a["message"]) for a in d.get("alternatives", [])]
    if alternatives:
      E("# Other errors of the same stage JAX may raise instead (collfuzz's Diagnostic alternatives:")
      E("# another thread's or CTA's error first in interpret mode, or the layout search running")
      E("# out of fuel before it proves the system unsatisfiable)")
      E(f"ALTERNATIVES = {alternatives!r}")
    E("")
    E("")
    E("def check_raised(e, step):")
    E("  name, message = raised(e)")
    if alternatives:
      E("  for alt_name, alt_message in ALTERNATIVES:")
      E("    if name == alt_name and normalize(message) == normalize(alt_message):")
      E("      assert step == EXPECTED_STEP, f\"expected it at {EXPECTED_STEP}, raised at {step}\"")
      E("      print(f\"as predicted (an alternative): {name} at {step}: {message}\")")
      E("      return")
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
      n_checks += _emit_output_check(E, k, spec, rec, inputs)
    E(f"  print('as predicted: the kernel completed; {n_checks} output(s) hold the predicted values')")
    E("")
    E("")


def _emit_output_check(E, k: int, spec: dict, rec: dict, inputs: list) -> int:
  """The check of output k: its predicted elements as a numpy expression (runs of np.full and
  np.arange, literal lists, slices of an input), compared by check_array. 1 if it checks any."""
  name = spec["name"]
  data = bytes.fromhex(rec.get("hex", ""))
  ranges, skipped = _compared_ranges(spec, rec, data)
  vals = _values(spec, data)
  n = math.prod(int(d) for d in spec["shape"])
  ne = sum(e - b for b, e in ranges)
  var = ident(name) + "_want"
  E(f"  # {name}: {spec['dtype']}{list(int(d) for d in spec['shape'])}")
  if skipped:
    E(f"  # {skipped} written element(s) hold SMEM that no copy wrote: collfuzz predicts its")
    E("  # sentinel 0xA5, JAX leaves it uninitialised; not compared.")
  if ne == 0:
    E(f"  # no element of {name} is predicted: no copy wrote one, or collfuzz's reference leaves")
    E("  # every written one undefined (racy writers); nothing to compare")
    return 0
  if ne < n - skipped:
    E(f"  # {n - skipped - ne} element(s) are not compared (not in `at`): no copy wrote them, or")
    E("  # collfuzz's reference leaves them undefined (two writers raced on them, or an")
    E("  # out-of-bounds copy of undefined contents wrote them).")
  eb = _element_bytes(spec)
  raw: list = []  # runs() parts, and ("slice", input index, offset, count)
  for b, e in ranges:
    seg = [vals[i] for i in range(b, e)]
    rs = runs(seg)
    tiled = periodic(seg)
    if tiled is not None:
      rs = [tiled]
    literals = sum(len(p[1]) for p in rs if p[0] == "list")
    src = _input_slice(inputs, spec, data[b * eb:e * eb]) \
        if literals > MAX_LITERALS_BEFORE_SLICE else None
    for p in ([("slice", src[0], src[1], e - b)] if src is not None else rs):
      q = raw[-1] if raw else None
      if q and p[0] == "list" and q[0] == "list":
        raw[-1] = ("list", q[1] + p[1])  # one list across ranges
      elif q and p[0] == "full" and q[0] == "full" and p[2] == q[2]:
        raw[-1] = ("full", q[1] + p[1], p[2])
      elif q and p[0] == "arange" and q[0] == "arange" and p[3] == q[3] and p[1] == q[2]:
        raw[-1] = ("arange", q[1], p[2], p[3])
      else:
        raw.append(p)
  parts: list = []  # (source lines, comment)
  for p in raw:
    if p[0] == "slice":
      _, k_in, off, count = p
      parts.append(([f"np.asarray(inputs[{k_in}]).reshape(-1)[{off}:{off + count}]"],
                    f"{inputs[k_in]['name']}'s elements [{off}, {off + count})"))
    else:
      parts.append((part_src(p), None))
  dtype = dtype_src(spec["dtype"])
  if spec["dtype"] == "uint64" and any(p[0] != "slice" for p in raw):
    E("  # (uint64 values past 2**63 are written as negative int64: .astype wraps them, as fills do)")
  whole = ne == n
  at = "" if whole else f", at={ranges_src(ranges)}"
  reshape = f".reshape({shape_src(spec['shape'])})" if whole else ""
  if len(parts) == 1 and parts[0][1] is not None:
    E(f"  {var} = {parts[0][0][0]}.astype({dtype}){reshape}  # {parts[0][1]}")
  elif len(parts) == 1:
    lines = parts[0][0]
    E(f"  {var} = {lines[0]}" + ("" if len(lines) > 1 else f".astype({dtype}){reshape}"))
    for line in lines[1:-1]:
      E(f"  {line}")
    if len(lines) > 1:
      E(f"  {lines[-1]}.astype({dtype}){reshape}")
  else:
    E(f"  {var} = np.concatenate([")
    for lines, comment in parts:
      for j, line in enumerate(lines):
        last = j == len(lines) - 1
        tail = ("," if last else "") + (f"  # {comment}" if comment and last else "")
        E(f"      {line}{tail}")
    E(f"  ]).astype({dtype}){reshape}")
  E(f"  check_array({('output ' + name)!r}, results[{k}], {var}{at})")
  return 1
