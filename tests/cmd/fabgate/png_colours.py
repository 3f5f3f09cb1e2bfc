#!/usr/bin/env python3
"""Decodes an 8-bit truecolour PNG (what Chromium's --screenshot writes) with the standard
library only and prints "WIDTHxHEIGHT COLOURS SHARE": the number of distinct pixel colours in
the top MAX_ROWS rows (default 800: where the verdict, the gate and the layer timelines are; a
row depends only on the rows above it, so the rest need not be decoded), and the share of the
most common one, so a test can tell a drawn page from a blank one. Exit 1 with a reason on
anything it cannot decode."""

import struct
import sys
import zlib
from collections import Counter


def fail(why):
    print("png_colours: " + why)
    sys.exit(1)


def main(path, max_rows):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": not a PNG")
    pos, header, idat = 8, None, b""
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    if not header:
        fail(path + ": no IHDR")
    width, height, depth, colour_type, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(colour_type)
    if depth != 8 or not channels or interlace:
        fail("%s: unsupported PNG (depth %d, colour type %d, interlace %d)"
             % (path, depth, colour_type, interlace))
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = Counter()
    for row in range(min(height, max_rows)):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                line[i] = (line[i] + predictor) & 0xFF
        if row % 4 == 0:  # every fourth row is plenty to count colours
            for i in range(0, stride, channels * 2):
                colours[bytes(line[i:i + 3])] += 1
        previous = line
    common = colours.most_common(1)[0][1] / max(1, sum(colours.values()))
    print("%dx%d %d %.3f" % (width, height, len(colours), common))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 800)
