"""python3 check_picture.py FILE [--size WxH] [--text S]... [--points TITLE=N]...
[--colour RRGGBB]...: check that FILE is a well-formed SVG or PNG and holds
what a plot should. SVG: parsed as XML, the root's viewBox, each text among the
drawn texts and series titles, N point markers drawn for the series TITLE
(summed over panels; the key's sample is one of them), each colour used. PNG: every chunk's CRC, the header's
size, the image data inflating to exactly the scanlines, and a pixel of each
colour once the filters are undone. Prints 'ok'; an assertion names what failed."""
import argparse
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def check_svg(path, a):
    root = ET.parse(path).getroot()
    assert root.tag == SVG + "svg", root.tag
    if a.size:  # gnuplot's dynamic SVG: a viewBox, no fixed width and height
        assert root.get("viewBox") == "0 0 " + a.size.replace("x", " "), root.get("viewBox")
    texts = ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    titles = [t.text or "" for t in root.iter(SVG + "title")]
    for want in a.text:
        assert any(want in t for t in texts + titles), f"no text {want!r} in {texts + titles}"
    for spec in a.points:
        title, n = spec.rsplit("=", 1)
        drawn = 0
        for g in root.iter(SVG + "g"):
            t = g.find(SVG + "title")
            if t is not None and t.text == title:
                drawn += sum("translate" in (u.get("transform") or "") for u in g.iter(SVG + "use"))
        assert drawn == int(n), f"series {title!r}: {drawn} points drawn, expected {n}"
    source = re.sub(r"\s", "", open(path).read())
    for c in a.colour:
        rgb = "rgb(%d,%d,%d)" % tuple(int(c[i:i + 2], 16) for i in (0, 2, 4))
        assert rgb in source or "#" + c.lower() in source.lower(), f"colour {c} not used"


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def check_png(path, a):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind}"
        chunks.append((kind, body))
        pos += 12 + n
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND", [c[0] for c in chunks]
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if a.size:
        assert f"{w}x{h}" == a.size, f"{w}x{h}"
    assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(b for k, b in chunks if k == b"IDAT"))
    stride = w * bpp
    assert len(raw) == h * (1 + stride), (len(raw), h * (1 + stride))
    prev, pixels = bytearray(stride), set()
    for y in range(h):
        f, line = raw[y * (1 + stride)], bytearray(raw[y * (1 + stride) + 1:(y + 1) * (1 + stride)])
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            up, ul = prev[x], prev[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + (0, left, up, (left + up) // 2, paeth(left, up, ul))[f]) & 255
        pixels.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    assert len(pixels) > 2, "a blank picture"
    for c in a.colour:
        assert bytes.fromhex(c) in pixels, f"no pixel of colour {c}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("--size")
    p.add_argument("--text", action="append", default=[])
    p.add_argument("--points", action="append", default=[])
    p.add_argument("--colour", action="append", default=[])
    a = p.parse_args()
    if a.file.endswith(".svg"):
        check_svg(a.file, a)
    else:
        assert not a.text and not a.points, "--text and --points are for SVG"
        check_png(a.file, a)
    print("ok")


if __name__ == "__main__":
    sys.exit(main())
