"""Writes public/logo.png: a 64x64 gate (the gateway) on a rounded teal square. Standard library only.

    python3 scripts/make-logo.py
"""
import struct
import zlib
from pathlib import Path

SIZE = 64
RADIUS = 14
TOP, BOTTOM = (0x00, 0xD1, 0xB2), (0x00, 0x8C, 0x7A)  # Bulma primary to a darker teal
WHITE = (255, 255, 255)


def inside_rounded_square(x: int, y: int) -> bool:
    cx = min(max(x, RADIUS), SIZE - 1 - RADIUS)
    cy = min(max(y, RADIUS), SIZE - 1 - RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS ** 2


def in_gate(x: int, y: int) -> bool:
    lintel = 13 <= x <= 50 and 15 <= y <= 20
    beam = 17 <= x <= 46 and 26 <= y <= 29
    pillars = (19 <= x <= 24 or 39 <= x <= 44) and 20 <= y <= 49
    return lintel or beam or pillars


def pixel(x: int, y: int) -> bytes:
    if not inside_rounded_square(x, y):
        return bytes((0, 0, 0, 0))
    if in_gate(x, y):
        return bytes((*WHITE, 255))
    f = y / (SIZE - 1)
    return bytes((*(round(a + (b - a) * f) for a, b in zip(TOP, BOTTOM)), 255))


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png() -> bytes:
    rows = b"".join(b"\x00" + b"".join(pixel(x, y) for x in range(SIZE)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "public" / "logo.png"
    out.write_bytes(png())
    print(f"wrote {out} ({out.stat().st_size} bytes)")
