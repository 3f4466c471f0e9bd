#!/usr/bin/env python3
"""The parts of ci/gpu-differential that read and write JSON (standard library only, so that any
Python 3.9+ runs it: the GPU runner's, or the JAX one).

  gpu_check.py planted WORKER REPORT [WORKER_ARGS...]
      a planted expect_tx mismatch, then a normal case, to one worker, every read with a deadline
  gpu_check.py verdicts --executor E --replay R.json --out V.json [--admission A.jsonl]
                        [--reruns RR.json --rerun-count N] [--rerun-list L.txt] [--expect-unavailable]
      one verdict per case for an executor that runs on the GPU (cuda, jax-gpu)
  gpu_check.py jax-files --device-arch ARCH --admission A.jsonl --out L.txt --left-out O.json DIR
      the case files jax-gpu is asked about, in order (the ones the cuda executor runs first)
  gpu_check.py merge OUT.json IN.json...      concatenates replay --json-out arrays
  gpu_check.py versions                       (run by the JAX Python) JAX, jaxlib, plugins, devices
  gpu_check.py summary OUT_DIR STATUS EMULATED    summary.md and summary.json
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time

# ---- planted ------------------------------------------------------------------------------------


class NoAnswer(Exception):
  pass


class Worker:
  """A worker process read line by line, each read with a deadline (it must never hang the check)."""

  def __init__(self, argv):
    self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    self.buf = b""

  def line(self, seconds: float, what: str) -> dict:
    deadline = time.monotonic() + seconds
    while b"\n" not in self.buf:
      left = deadline - time.monotonic()
      if left <= 0:
        raise NoAnswer(f"the worker did not answer {what} within {seconds:g} s")
      ready, _, _ = select.select([self.p.stdout], [], [], left)
      if ready:
        chunk = os.read(self.p.stdout.fileno(), 1 << 16)
        if not chunk:
          raise NoAnswer(f"the worker exited before answering {what} (status {self.p.poll()})")
        self.buf += chunk
    line, self.buf = self.buf.split(b"\n", 1)
    return json.loads(line)

  def close(self):
    try:
      self.p.stdin.close()
      self.p.wait(timeout=10)
    except Exception:  # pylint: disable=broad-except
      self.p.kill()
      self.p.wait()


def cmd_planted(argv) -> int:
  worker, report = argv[0], argv[1]
  answer_s = float(os.environ.get("COLLFUZZ_GPU_ANSWER_S", "20"))
  w = Worker([worker] + argv[2:])
  result = {"answer_deadline_s": answer_s}
  ok = False
  try:
    hello = w.line(answer_s, "with its hello")
    result["device"] = hello.get("info", {}).get("device")

    def ask(i, path):
      case = json.load(open(path, encoding="utf-8"))
      case.pop("expect", None)
      t = time.monotonic()
      w.p.stdin.write((json.dumps({"id": i, "case": case}) + "\n").encode())
      w.p.stdin.flush()
      answer = w.line(answer_s, os.path.basename(path))
      return answer["outcome"], (time.monotonic() - t) * 1000

    planted, planted_ms = ask(1, "corpus/deadlock.leader_tracked__size1_axis.json")
    after, after_ms = ask(2, "corpus/mode.multicast__cluster4_rows.json")
    waits = [x for cta in planted.get("ctas", []) for x in cta.get("waits", [])]
    result.update({
        "planted_kind": planted["kind"], "planted_reason": planted.get("reason"),
        "planted_round_trip_ms": round(planted_ms, 1),
        "planted_elapsed_ms": planted.get("info", {}).get("elapsed_ms"),
        "wait_budget_ms": planted.get("info", {}).get("wait_budget_ms"),
        "waits_timed_out": sum(1 for x in waits if not x["completed"]), "waits": len(waits),
        "next_case_kind": after["kind"], "next_case_round_trip_ms": round(after_ms, 1),
    })
    ok = (planted["kind"] == "timeout" and result["waits_timed_out"] == len(waits) == 2
          and after["kind"] == "completed" and planted_ms < 5000)
    if not ok:
      result["problem"] = "the planted mismatch did not come back as a timeout followed by a completed case"
  except NoAnswer as e:
    result["no_answer"] = str(e)
    result["problem"] = str(e)
  except (OSError, ValueError, KeyError) as e:
    result["problem"] = f"{type(e).__name__}: {e}"
  finally:
    if "no_answer" in result:
      w.p.kill()
      w.p.wait()
    else:
      w.close()
  json.dump(result, open(report, "w", encoding="utf-8"), indent=1)
  print(json.dumps(result), file=sys.stderr)
  if "no_answer" in result:
    return 4
  return 0 if ok else 1


# ---- verdicts -----------------------------------------------------------------------------------


def load_admission(path):
  out = {}
  if path:
    for line in open(path, encoding="utf-8"):
      if line.strip():
        a = json.loads(line)
        out[a["case"]] = a
  return out


def cmd_verdicts(argv) -> int:
  ap = argparse.ArgumentParser(prog="gpu_check.py verdicts")
  ap.add_argument("--executor", required=True)
  ap.add_argument("--replay", required=True)
  ap.add_argument("--out", required=True)
  ap.add_argument("--admission")
  ap.add_argument("--reruns")
  ap.add_argument("--rerun-count", type=int, default=0)
  ap.add_argument("--rerun-list")
  ap.add_argument("--expect-unavailable", action="store_true",
                  help="the executor cannot run here (no GPU): every case must be reported unavailable")
  ap.add_argument("--fail-on-flaky", action="store_true")
  a = ap.parse_args(argv)
  checks = json.load(open(a.replay, encoding="utf-8"))
  admission = load_admission(a.admission)
  mine = {c["case"]: c for c in checks if c["executor"] == a.executor}
  others = [c for c in checks if c["executor"] != a.executor and c["status"] == "fail"]
  reruns = {}
  if a.reruns and os.path.exists(a.reruns):
    for c in json.load(open(a.reruns, encoding="utf-8")):
      if c["executor"] == a.executor:
        reruns.setdefault(c["case"], []).append(c)

  cases = {}
  problems = []
  for c in others:
    problems.append(f"{c['case']} [{c['executor']}]: {c['message']}")
  for name, c in sorted(mine.items()):
    adm = admission.get(name)
    v = {"file": c["file"], "first": c["status"], "message": c["message"]}
    if adm is not None:
      v["admission"] = adm["admission"]
      v["admission_reason"] = adm.get("reason", "")
    declared_unavailable = adm is not None and adm["admission"] == "unavailable"
    if a.expect_unavailable:
      if c["status"] == "skip":
        v["verdict"] = "unavailable"
      else:
        v["verdict"] = "failed"
        problems.append(f"{name}: reported '{c['status']}' although {a.executor} cannot run here")
    elif c["status"] == "pass":
      v["verdict"] = "passed"
      if declared_unavailable:
        v["verdict"] = "failed"
        problems.append(f"{name}: ran although the executor declares it unavailable ({adm.get('reason')})")
    elif c["status"] == "skip":
      if adm is None and admission:
        v["verdict"] = "failed"
        problems.append(f"{name}: not in the executor's declaration")
      elif declared_unavailable or not admission:
        v["verdict"] = "unavailable"
      else:
        v["verdict"] = "failed"
        problems.append(f"{name}: required ({adm['admission']}) but not run: {c['message']}")
    else:  # a disagreement on the GPU: its reruns decide
      runs = reruns.get(name, [])
      bad = sum(1 for r in runs if r["status"] != "pass")
      v["reruns"] = len(runs)
      v["reruns_disagreeing"] = bad
      if not a.reruns:
        v["verdict"] = "disagrees"  # first pass: to be rerun
      elif len(runs) == 0:
        v["verdict"] = "failed"
        v["count"] = "failed 1/1 (not rerun: no time left)"
        problems.append(f"{name}: {c['message']} (not rerun)")
      elif bad == len(runs):
        v["verdict"] = "failed"
        v["count"] = f"failed {bad}/{len(runs)}"
        problems.append(f"{name}: {v['count']}: {c['message']}")
      else:
        v["verdict"] = "flaky"
        v["count"] = f"flaky {bad}/{len(runs)}"
        if a.fail_on_flaky:
          problems.append(f"{name}: {v['count']} (COLLFUZZ_GPU_FAIL_ON_FLAKY=1): {c['message']}")
      if a.rerun_count and len(runs) < a.rerun_count and a.reruns:
        v["count"] = v.get("count", "") + f" (asked for {a.rerun_count} reruns)"
    cases[name] = v
  for name, adm in sorted(admission.items()):
    if name not in mine:
      problems.append(f"{name}: declared '{adm['admission']}' but not replayed")
  if admission and not a.expect_unavailable:
    if adm_bad := [n for n, x in admission.items() if x["admission"] == "bad_case"]:
      problems += [f"{n}: the worker cannot read it: {admission[n].get('reason')}" for n in adm_bad]
    if not any(x["admission"] != "unavailable" for x in admission.values()):
      problems.append(f"{a.executor} declares no case it can run: nothing required was compared")

  counts = {}
  for v in cases.values():
    counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
  required = sum(1 for v in cases.values() if v.get("admission", "run") != "unavailable")
  result = {"executor": a.executor, "counts": counts, "cases": cases, "problems": problems,
            "required": required if admission else None,
            "other_executor_failures": len(others)}
  json.dump(result, open(a.out, "w", encoding="utf-8"), indent=1)
  if a.rerun_list:
    with open(a.rerun_list, "w", encoding="utf-8") as f:
      for v in cases.values():
        if v["verdict"] == "disagrees":
          f.write(v["file"] + "\n")
  line = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
  if admission and not a.expect_unavailable:
    line += f"; {required} required by the executor's declaration"
  print(f"{a.executor}: {line or 'no cases'}", file=sys.stderr)
  for v in cases.values():
    if v["verdict"] in ("flaky", "failed") and "count" in v:
      print(f"  {v['count']}: {os.path.basename(v['file'])}", file=sys.stderr)
  for p in problems[:40]:
    print("  FAIL " + p, file=sys.stderr)
  return 1 if problems else 0


# ---- jax-gpu's case list ------------------------------------------------------------------------


def cmd_jax_files(argv) -> int:
  ap = argparse.ArgumentParser(prog="gpu_check.py jax-files")
  ap.add_argument("--device-arch", required=True)
  ap.add_argument("--admission", required=True)
  ap.add_argument("--out", required=True)
  ap.add_argument("--left-out", required=True)
  ap.add_argument("dirs", nargs="+")
  a = ap.parse_args(argv)
  admission = load_admission(a.admission)
  files = []
  for d in a.dirs:
    for root, _, names in os.walk(d):
      files += [os.path.join(root, n) for n in names if n.endswith(".json")]
  # Order: the cases the cuda executor runs, then the others, then those expected to deadlock (on
  # a GPU each of those costs jax-gpu a whole case timeout and a restart).
  first, then, last, left_out = [], [], [], []
  for f in sorted(files):
    try:
      case = json.load(open(f, encoding="utf-8"))
      arch, name = case["target"]["arch"], case["name"]
      deadlock = (case.get("expect") or {}).get("kind") == "deadlock"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
      then.append(f)  # the replay reports it
      continue
    if a.device_arch and arch != a.device_arch:
      left_out.append({"file": f, "reason": f"targets {arch}; jax-gpu compiles for the device ({a.device_arch})"})
    elif deadlock:
      last.append(f)
    elif admission.get(name, {}).get("admission") in ("run", "rejected", "probe_launch"):
      first.append(f)
    else:
      then.append(f)
  with open(a.out, "w", encoding="utf-8") as f:
    f.writelines(x + "\n" for x in first + then + last)
  json.dump(left_out, open(a.left_out, "w", encoding="utf-8"), indent=1)
  print(f"jax-gpu: {len(first) + len(then) + len(last)} case files ({len(first)} that the cuda executor also "
        f"runs first, {len(last)} expected to deadlock last); {len(left_out)} left out for another target",
        file=sys.stderr)
  return 0


def cmd_merge(argv) -> int:
  merged = []
  for path in argv[1:]:
    if os.path.exists(path):
      merged += json.load(open(path, encoding="utf-8"))
  json.dump(merged, open(argv[0], "w", encoding="utf-8"), indent=1)
  return 0


# ---- versions (run by the JAX Python) -----------------------------------------------------------


def cmd_versions(_argv) -> int:
  from importlib import metadata  # pylint: disable=import-outside-toplevel
  out = {"python": sys.executable, "python_version": sys.version.split()[0], "packages": {}}
  for dist in metadata.distributions():
    name = (dist.metadata["Name"] or "").lower().replace("_", "-")
    if name.startswith("jax") or name in ("numpy", "ml-dtypes", "scipy", "opt-einsum") or \
        name.startswith("nvidia-"):
      out["packages"][name] = dist.version
  try:
    import jax  # pylint: disable=import-outside-toplevel
    out["jax_default_backend"] = jax.default_backend()
    try:
      devs = jax.devices("cuda")
      out["jax_cuda_devices"] = [f"{d.platform}:{d.id} {d.device_kind}" for d in devs]
      try:
        out["jax_cuda_platform_version"] = devs[0].client.platform_version
      except Exception as e:  # pylint: disable=broad-except
        out["jax_cuda_platform_version"] = f"unknown ({type(e).__name__})"
    except Exception as e:  # pylint: disable=broad-except
      out["jax_cuda_devices"] = []
      out["jax_cuda_error"] = f"{type(e).__name__}: {e}"[:500]
  except Exception as e:  # pylint: disable=broad-except
    out["jax_import_error"] = f"{type(e).__name__}: {e}"[:500]
  print(json.dumps(out, indent=1))
  return 0


# ---- summary ------------------------------------------------------------------------------------


def cmd_summary(argv) -> int:
  out, status, emulated = argv[0], int(argv[1]), argv[2] == "1"

  def load(name):
    try:
      return json.load(open(os.path.join(out, name), encoding="utf-8"))
    except Exception:  # pylint: disable=broad-except
      return None

  def text(name):
    try:
      return open(os.path.join(out, name), encoding="utf-8").read().strip()
    except Exception:  # pylint: disable=broad-except
      return ""

  steps = []
  for line in text("steps.tsv").splitlines():
    parts = line.split("\t")
    if len(parts) == 4:
      steps.append({"step": parts[0], "verdict": parts[1], "seconds": int(parts[2]), "detail": parts[3]})
  cuda = load("cuda-verdicts.json") or {}
  jx = "jax-lower" if os.path.exists(os.path.join(out, "jax-lower-verdicts.json")) else "jax-gpu"
  jaxv = load(f"{jx}-verdicts.json") or {}
  bench = load("bench.json") or {}
  rows = [(b["name"], b["items_per_second"]) for b in bench.get("benchmarks", []) if "items_per_second" in b]
  skipped = [s for s in steps if s["verdict"] in ("skipped (time)", "partial (time)", "failed (time)")]
  left_out = [s["step"] + " (" + s["verdict"] + ")" for s in steps
              if s["verdict"].startswith(("skipped", "unavailable")) and s not in skipped]
  flaky = [f"{c['count']} {n} ({e})" for e, v in (("cuda", cuda), (jx, jaxv))
           for n, c in sorted(v.get("cases", {}).items()) if c["verdict"] == "flaky"]
  word = {0: "green", 1: "failed", 3: "out of time"}.get(status, f"exit {status}")
  summary = {
      "status": word, "exit": status, "emulated": emulated,
      "steps": steps, "cut_for_time": [s["step"] for s in skipped], "left_out": left_out,
      "flaky": flaky,
      "device": text("device.txt"), "worker_hello": text("worker-hello.json"),
      "versions": load("versions.json"),
      "cuda": {"counts": cuda.get("counts"), "required": cuda.get("required"),
               "problems": cuda.get("problems")},
      jx.replace("-", "_"): {"counts": jaxv.get("counts"), "problems": jaxv.get("problems")},
      "planted": load("planted.json"), "campaign": load("campaign/summary.json"),
      "benchmarks": [{"name": n, "items_per_second": r} for n, r in rows],
  }
  json.dump(summary, open(os.path.join(out, "summary.json"), "w", encoding="utf-8"), indent=1)

  # The campaign's own summary up to its coverage table (the whole of it is in campaign/summary.md).
  campaign_md = text("campaign/summary.md").split("## Rule coverage")[0].replace("# collfuzz campaign summary", "").strip()
  md = ["# collfuzz GPU differential check", ""]
  if emulated:
    md += ["**EMULATED**: the CUDA worker ran the device tables on the CPU and there is no GPU, so "
           "jax-gpu could not run. Green here means the script, the worker protocol and the binaries "
           "work; nothing below is a GPU result.", ""]
  md += [f"status: **{word}**", ""]
  if skipped:
    md += [f"- skipped or cut for lack of time: {', '.join(s['step'] for s in skipped)}"]
  if left_out:
    md += [f"- not run here: {', '.join(left_out)}"]
  if flaky:
    md += [f"- flaky on the GPU (disagreed, then agreed on some reruns): {'; '.join(flaky)}"]
  md += ["",
         "| step | verdict | seconds | detail |", "|---|---|---|---|"]
  md += [f"| {s['step']} | {s['verdict']} | {s['seconds']} | {s['detail'].replace('|', '/')} |" for s in steps]
  md += ["", "## Device and versions", "```", summary["device"], summary["worker_hello"], "```", "```",
         json.dumps(summary["versions"], indent=1), "```"]

  def per_case(title, v):
    md.extend(["", f"## {title}", "", f"counts: {v.get('counts')}" +
               (f"; required by the executor's declaration: {v.get('required')}" if v.get("required") is not None else ""), ""])
    for p in v.get("problems") or []:
      md.append(f"- FAIL {p[:400]}")
    cases = v.get("cases", {})
    for name, c in sorted(cases.items()):
      if c["verdict"] in ("flaky", "failed") and "count" in c:
        md.append(f"- {c['count']}: {name}: {c.get('message', '')[:300]}")
    unav = [(n, c) for n, c in sorted(cases.items()) if c["verdict"] == "unavailable"]
    if unav:
      # Grouped by the reason's first clause; each case's whole reason is in the verdicts file.
      reasons = {}
      for n, c in unav:
        reason = c.get("admission_reason") or c.get("message", "")
        reasons.setdefault(reason.split(" (")[0][:200], []).append(n)
      md.append("")
      md.append(f"{len(unav)} unavailable (not failures), by reason (each case's reason: {v.get('file', '')}):")
      for r, names in sorted(reasons.items(), key=lambda x: -len(x[1])):
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        md.append(f"- {len(names)} x {r}: {', '.join(names[:10])}{more}")

  cuda["file"] = "cuda-verdicts.json"
  jaxv["file"] = f"{jx}-verdicts.json"
  per_case("cuda: corpus replay (reference, sim, cuda)", cuda)
  per_case(f"{jx}: corpus replay", jaxv)
  left_out = load(f"{jx}-left-out.json") or []
  if left_out:
    md.extend(["", f"{len(left_out)} case files left out of {jx}'s replay: they target another "
               f"arch than the device's ({', '.join(os.path.basename(x['file'])[:-5] for x in left_out[:10])}"
               f"{' ...' if len(left_out) > 10 else ''})"])
  md += ["", "## Planted expect_tx mismatch", "", "```", json.dumps(summary["planted"], indent=1), "```", "",
         "## Campaign", "", campaign_md or "(no campaign summary)", "",
         "## Benchmarks (items/s: cases/s, or clusters/s for the launch floor)", "",
         "| benchmark | items/s |", "|---|---|"]
  md += [f"| {n} | {r:,.0f} |" for n, r in rows]
  open(os.path.join(out, "summary.md"), "w", encoding="utf-8").write("\n".join(md) + "\n")
  return 0


def cmd_cross(argv) -> int:
  """cross --a REPLAY.json --b REPLAY.json --out FILE: per case file, the statuses of two replays'
  executors (jax-gpu and jax-ir); prints one line: how many both ran, and where they differ."""
  ap = argparse.ArgumentParser(prog="gpu_check.py cross")
  ap.add_argument("--a", required=True)
  ap.add_argument("--b", required=True)
  ap.add_argument("--out", required=True)
  a = ap.parse_args(argv)

  def load(path):
    try:
      with open(path, encoding="utf-8") as f:
        return {c["file"]: c for c in json.load(f) if c.get("executor") != "reference"}
    except (OSError, ValueError):
      return {}
  ra, rb = load(a.a), load(a.b)
  both = [f for f in ra if f in rb and ra[f]["status"] != "skip" and rb[f]["status"] != "skip"]
  differ = [{"file": f, ra[f]["executor"]: ra[f]["status"], rb[f]["executor"]: rb[f]["status"],
             "signatures": ra[f].get("signatures", []) + rb[f].get("signatures", [])}
            for f in both if ra[f]["status"] != rb[f]["status"]]
  with open(a.out, "w", encoding="utf-8") as f:
    json.dump({"both_ran": len(both), "differ": differ}, f, indent=1)
  print(f"{len(both)} case(s) ran on both, {len(differ)} with different verdicts")
  return 0


def main() -> int:
  if len(sys.argv) < 2:
    print(__doc__, file=sys.stderr)
    return 2
  cmd, argv = sys.argv[1], sys.argv[2:]
  commands = {"planted": cmd_planted, "verdicts": cmd_verdicts, "jax-files": cmd_jax_files, "cross": cmd_cross,
              "merge": cmd_merge, "versions": cmd_versions, "summary": cmd_summary}
  if cmd not in commands:
    print(__doc__, file=sys.stderr)
    return 2
  return commands[cmd](argv)


if __name__ == "__main__":
  sys.exit(main())
