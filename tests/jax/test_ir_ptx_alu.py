"""jax-ir's blocks of 32-bit register arithmetic in inline PTX (cfjax_ir_ptx_alu): the PTX ISA's
prmt, lop3 and packed bf16/f16 arithmetic on their own, and Mosaic GPU's int8 -> bfloat16
sequence (FragmentedArray.astype's upcast_i8_to_bf16) over every byte value, against the exact
conversion. The conversion inside real kernels is test_vector_convert's (PairTest.test_8bit)."""

import os
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "harness", "jax"))

import cfjax_ir_ptx_alu as alu  # noqa: E402
from cfjax_ir_extract import Unsupported  # noqa: E402

# FragmentedArray.astype's int8 -> bfloat16 block, whitespace normalised as cfjax_ir_ops_ptx does
# (selector 0x4140 for bytes 0 and 1 of the word, 0x4342 for bytes 2 and 3).
I8_BF16 = ("{{ .reg .b32 s<3>; prmt.b32 s0, $1, 0x43, {sel}; and.b32 s1, s0, 0xff7fff7f; "
           "and.b32 s2, s0, 0xff80ff80; sub.bf16x2 $0, s1, s2; }}")


def bf16_value(bits):
  return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


class AluTest(unittest.TestCase):

  def test_prmt_picks_bytes_and_replicates_signs(self):
    a, b = 0x83828180, 0x07060504
    self.assertEqual(alu.prmt(a, b, 0x3210), a)
    self.assertEqual(alu.prmt(a, b, 0x7654), b)
    self.assertEqual(alu.prmt(a, b, 0x4140), 0x04810480)
    # the selector's top bit: the picked byte's sign in all 8 bits
    self.assertEqual(alu.prmt(a, b, 0x0008), 0x808080FF)
    self.assertEqual(alu.prmt(a, b, 0x000C), 0x80808000)

  def test_lop3_is_its_truth_table(self):
    for lut, f in ((0xF0, lambda a, b, c: a), (0xCC, lambda a, b, c: b), (0xAA, lambda a, b, c: c),
                   (0x80, lambda a, b, c: a & b & c), (0xE4, lambda a, b, c: (a & c) | (b & ~c))):
      a, b, c = 0x12345678, 0x9ABCDEF0, 0x0F0F00FF
      self.assertEqual(alu.lop3(a, b, c, lut), f(a, b, c) & 0xFFFFFFFF, hex(lut))

  def test_packed_bf16_sub_rounds_each_half(self):
    stmts, regs = alu.parse_block("{ sub.bf16x2 $0, $1, $2; }")
    # high half: 3.0 - 1.0; low half: 1.0 - 2^-9 rounds to 1.0 (bf16 has 8 significant bits)
    a = (0x4040 << 16) | 0x3F80
    b = (0x3F80 << 16) | 0x3B00
    got = alu.run_block(stmts, regs, {1: a, 2: b})[0]
    self.assertEqual(bf16_value(got >> 16), 2.0)
    self.assertEqual(bf16_value(got), 1.0)

  def test_int8_to_bf16_every_byte(self):
    for sel, shift in ((0x4140, 0), (0x4342, 16)):
      stmts, regs = alu.parse_block(I8_BF16.format(sel=sel))
      for v in range(-128, 128):
        for other in (0, 0x7F, 0x80):
          word = ((v & 0xFF) | (other << 8)) << shift | (0x5A if shift else 0)
          got = alu.run_block(stmts, regs, {1: word & 0xFFFFFFFF})[0]
          self.assertEqual(bf16_value(got), float(v), (sel, v, other))
          want_hi = other - 256 if other >= 128 else other
          self.assertEqual(bf16_value(got >> 16), float(want_hi), (sel, v, other))

  def test_what_is_no_block(self):
    self.assertIsNone(alu.parse_block("mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;"))
    self.assertIsNone(alu.parse_block("{ .reg .b32 s; cvt.rn.bf16x2.f32 $0, $1, $2; }"))
    stmts, regs = alu.parse_block("{ .reg .b32 s; and.b32 $0, s, 1; }")
    with self.assertRaises(Unsupported):
      alu.run_block(stmts, regs, {1: 0})  # s read before it is written


if __name__ == "__main__":
  unittest.main()
