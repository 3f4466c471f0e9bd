"""jax-ir on warp-level code (`plgpu.warp_map`, Lane semantics, PrimitiveSemantics.Warp;
docs/case-format.md "warp_map"): a copy issued by one warp lowers to each of its 32 lanes doing
`nvvm.mbarrier.arrive.nocomplete` with count 3 and then `arrive_expect_tx(bytes // 32)`, and a
`barrier_arrive` by one warp to each lane's inline `mbarrier.arrive...b64 _, [$0], 4;`. Both count
as one Pallas arrival of 128 hardware arrivals. A no-complete arrival that would complete the
phase is undefined behaviour in PTX (run.mbarrier.nocomplete_completes): jax-ir's lanes arrive
together, and it reports "undefined" with that code.

    .venv-jax/bin/python -m unittest discover -s tests/jax -p 'test_warp_level_ir.py'
    .venv-jax-0.12.0.1/bin/python -m unittest discover -s tests/jax -p 'test_warp_level_ir.py'

The expected counts are the corpus cases' notes, derived by hand from JAX's lowering.
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))
sys.path.insert(0, HERE)

from loop_case_support import executor  # noqa: E402


def corpus_case(name):
  with open(os.path.join(ROOT, "corpus", name + ".json"), encoding="utf-8") as f:
    case = json.load(f)
  case.pop("expect", None)
  return case


def barrier(out):
  (cta,) = out["ctas"]
  (bar,) = cta["barriers"]
  return bar, cta["waits"]


class WarpLevelIrTest(unittest.TestCase):

  def assert_completes_with(self, name, counts):
    """The corpus case `name` completes on jax-ir, its one barrier with (count, arrivals, armed,
    received, phases) `counts`, and its one wait passes."""
    out = executor("ir").run(corpus_case(name))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    bar, waits = barrier(out)
    self.assertEqual((bar["count"], bar["arrivals"], bar["armed"], bar["received"], bar["phases"]),
                     counts)
    self.assertEqual([w["completed"] for w in waits], [True])

  def test_a_copy_by_one_warp_is_one_pallas_arrival(self):
    # 32 lanes x (3 + 1) = 128 hardware arrivals, one Pallas arrival; 16 x 64 f32 armed.
    self.assert_completes_with("warp.copy__one_warp", (1, 1, 4096, 4096, 1))

  def test_a_warps_barrier_arrive_counts_four_per_lane(self):
    # Four warps copy a row block each (4 arrivals, 4096 B) and warp 1 arrives (one more).
    self.assert_completes_with("warp.copy__row_per_warp_and_arrive", (5, 5, 4096, 4096, 1))

  def test_the_warps_run_in_warp_order(self):
    # Every warp copies (no `when`) into a Barrier(num_arrivals=1)
    # (corpus/run.mbarrier.nocomplete_completes__every_warp_one_arrival.json). jax-ir runs a
    # warp_map's warps one after another, as the reference does: each warp's 96 no-complete and
    # 32 expect_tx arrivals meet 128 pending with its bytes armed, and its copy completes a phase.
    # No no-complete arrival completes one in this order (the reference predicts the undefined
    # behaviour by searching every order, and does not compare this run); 4 phases bring the
    # wait's parity round again: a deadlock. Run op by op across the warps (every warp's arrivals
    # before any transfer), the second warp's no-complete arrivals would complete phase 0.
    out = executor("ir").run(corpus_case("run.mbarrier.nocomplete_completes__every_warp_one_arrival"))
    self.assertEqual(out["kind"], "deadlock", json.dumps(out)[:2000])
    bar, waits = barrier(out)
    self.assertEqual((bar["count"], bar["arrivals"], bar["armed"], bar["received"], bar["phases"]),
                     (1, 4, 16384, 16384, 4))
    self.assertEqual([w["completed"] for w in waits], [False])
    # With num_arrivals=4 (corpus/warp.copy__every_warp.json): one phase of 4 arrivals.
    out = executor("ir").run(corpus_case("warp.copy__every_warp"))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])

  def test_a_multicast_that_lands_early_does_not_complete_a_phase_mid_warp_map(self):
    # corpus/warp.copy__order_against_early_multicast.json: CTA 0's barrier enters its warp_map
    # at tx -256 (CTA 1's multicast half); warp by warp, tx is -128 at the last arrival and the
    # phase stays open, as the canonical schedule has it. (0.12.0.1 gates CTA 0's arrival for its
    # predicated-off multicast too: one arrival stays pending.)
    import jax  # pylint: disable=import-outside-toplevel
    out = executor("ir").run(corpus_case("warp.copy__order_against_early_multicast"))
    self.assertEqual(out["kind"], "completed", json.dumps(out)[:2000])
    bar = [b for b in out["ctas"][0]["barriers"] if b["alloc"] == "bar"][0]
    pending = 1 if jax.__version__ == "0.12.0.1" else 0
    self.assertEqual((bar["phases"], bar["pending"], bar["tx"], bar["received"]),
                     (0, pending, -256, 768))

if __name__ == "__main__":
  unittest.main()
