"""Headless Chromium for the timeline tests: find it, dump a page's DOM, take a screenshot, read its pixels.

Chromium comes from Debian's ``chromium`` package (``.ci/steps/35-chromium.sh``
installs it); without it the tests that need it skip with one line saying so.
The PNG reader handles what Chromium writes (8-bit RGB/RGBA, non-interlaced).
"""

import os
import shutil
import struct
import subprocess
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars"]


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(binary, tmp_path, *args):
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path)}
    out = subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                         timeout=120, env=env)
    return out.stdout.decode("utf-8", "replace"), out.stderr.decode("utf-8", "replace"), out.returncode


def read_png(path):
    """``(width, height, rows)``: rows of (r, g, b) tuples."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and not interlace, "unsupported PNG"
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, prev, rows = zlib.decompress(idat), width * channels, bytearray(width * channels), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        prev = line
    return width, height, rows
