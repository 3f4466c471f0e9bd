#!/usr/bin/env python3
"""Writes the other lowering semantics' run of corpus/jax-tests' hand translations.

JAX's PallasCallTest and PallasCallTCGen05Test run their tests under Lane semantics (the test
metaclass's default); PallasCallWGTest and PallasCallTCGen05WGTest inherit the same tests and run
them under Warpgroup semantics, through `self.kernel`. Some cases of corpus/jax-tests were written
with `plgpu.kernel`'s own default (Warpgroup), others with Lane as the base class sets. For each
case named below this writes its twin under the other semantics: `NAME__lane.json` or
`NAME__wg.json` beside it, with `py/` the same kernel file, its `compiler_params` set to the other
semantics. The expectation is the original's: the lowering semantics change no byte, barrier or
wait of these kernels (docs/python.md, "JAX tests as a corpus"). tools/jax_tests_import.py then
imports each twin and replays it like the others.

    python3 tools/jax_tests_other_class.py
"""

import json
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIR = os.path.join(ROOT, "corpus", "jax-tests")

# case -> the class pair its test belongs to (base class under Lane, WG class under Warpgroup)
CASES = {
    "collective_copy_gmem_to_smem": ("PallasCallTest", "PallasCallWGTest"),
    "collective_arrival_count": ("PallasCallTest", "PallasCallWGTest"),
    "leader_tracked_cluster_barrier": ("PallasCallTest", "PallasCallWGTest"),
    "copy_gmem_to_smem_replicated": ("PallasCallTCGen05Test", "PallasCallTCGen05WGTest"),
    "copy_gmem_to_smem_partitioned__warp_level_False_squeezed_index_False":
        ("PallasCallTCGen05Test", "PallasCallTCGen05WGTest"),
    "copy_gmem_to_smem_partitioned__warp_level_False_squeezed_index_True":
        ("PallasCallTCGen05Test", "PallasCallTCGen05WGTest"),
    # warp_map under Warpgroup semantics (the mosaic_gpu dialect's warp_map op; 2026-12-07)
    "copy_gmem_to_smem_partitioned__warp_level_True_squeezed_index_False":
        ("PallasCallTCGen05Test", "PallasCallTCGen05WGTest"),
    "copy_gmem_to_smem_partitioned__warp_level_True_squeezed_index_True":
        ("PallasCallTCGen05Test", "PallasCallTCGen05WGTest"),
}
# Not here: the two raises tests (JAX raises while tracing, whatever the semantics).
PARAMS = "compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.{})"


def semantics_of(case: dict) -> str:
  return case["target"].get("semantics", "warpgroup")


def twin_py(src: str, to: str) -> str:
  """The kernel file with its plgpu.kernel(...) call's compiler_params set to `to`."""
  sem = {"lane": "Lane", "warpgroup": "Warpgroup"}[to]
  if "lowering_semantics=plgpu.LoweringSemantics." in src:
    return re.sub(r"lowering_semantics=plgpu\.LoweringSemantics\.\w+",
                  f"lowering_semantics=plgpu.LoweringSemantics.{sem}", src)
  # no compiler_params: plgpu.kernel(...)'s last argument gets them
  m = re.search(r"plgpu\.kernel\(", src)
  depth, i = 0, m.end() - 1
  while True:
    if src[i] == "(":
      depth += 1
    elif src[i] == ")":
      depth -= 1
      if depth == 0:
        break
    i += 1
  head = src[:i].rstrip()
  sep = "" if head.endswith(",") else ","
  if "\n" in src[m.start():i]:
    return head + sep + "\n      " + PARAMS.format(sem) + ",\n  " + src[i:]
  return head + sep + " " + PARAMS.format(sem) + src[i:]


def main() -> int:
  written = 0
  for name, (base, wg) in CASES.items():
    with open(os.path.join(DIR, name + ".json"), encoding="utf-8") as f:
      case = json.load(f)
    with open(os.path.join(DIR, "py", name + ".py"), encoding="utf-8") as f:
      src = f.read()
    to = "lane" if semantics_of(case) == "warpgroup" else "warpgroup"
    cls = base if to == "lane" else wg
    twin = name + ("__lane" if to == "lane" else "__wg")
    case["name"] = case["name"] + ("__lane" if to == "lane" else "__wg")
    case["target"]["semantics"] = to
    case["notes"] = (f"{cls}'s run of the test ({to.capitalize()} semantics, as its self.kernel "
                     f"sets): the kernel and expectation of {name}.json (written under "
                     f"{semantics_of(json.load(open(os.path.join(DIR, name + '.json'))))} "
                     "semantics), which the lowering semantics do not change. Written by "
                     "tools/jax_tests_other_class.py. " + case["notes"])
    doc = (f"{cls}'s run of {name} ({to.capitalize()} semantics): py/{name}.py with its\n"
           "compiler_params set so. Written by tools/jax_tests_other_class.py.\n\n")
    py = twin_py(src, to)
    py = '"""' + doc + py[3:] if py.startswith('"""') else '"""' + doc + '"""\n' + py
    with open(os.path.join(DIR, twin + ".json"), "w", encoding="utf-8") as f:
      f.write(json.dumps(case, indent=1) + "\n")
    with open(os.path.join(DIR, "py", twin + ".py"), "w", encoding="utf-8") as f:
      f.write(py)
    written += 1
  print(f"{written} twins written to {DIR}")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
