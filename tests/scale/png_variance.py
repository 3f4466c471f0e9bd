#!/usr/bin/env python3
"""Prints the number of distinct colours and the pixel variance of a PNG (8-bit RGB or RGBA,
non-interlaced, as Chromium writes its screenshots), decoded with zlib only (no Pillow).
Exit 1 when the image is blank (one colour) or cannot be decoded."""
import struct, sys, zlib

def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR": ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT": idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line); prev = line
    return w, h, bpp, rows

w, h, bpp, rows = decode(sys.argv[1])
colours, total, total2, n = set(), 0, 0, 0
for line in rows[::4]:
    for x in range(0, len(line), bpp * 4):
        px = tuple(line[x:x + 3]); colours.add(px)
        v = sum(px) / 3; total += v; total2 += v * v; n += 1
var = total2 / n - (total / n) ** 2
print(f"{w}x{h}, {len(colours)} colours, variance {var:.1f}")
sys.exit(0 if len(colours) > 8 and var > 10 else 1)
