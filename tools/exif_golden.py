#!/usr/bin/python3
"""exif_golden.py — EXIF-oriented test images and what cv2.imread makes of them.

Needs Debian's python3-opencv (and python3-numpy).

  tools/exif_golden.py DIR
      Writes into DIR, for each EXIF orientation 1..8:
        oN.jpg  a 37×20 color JPEG (cv2.imwrite, quality 95) with an APP1 Exif block whose IFD0
                holds Orientation = N (big-endian TIFF for even N, little-endian for odd N)
        oN.png  the same pixels as a PNG with an eXIf chunk (big-endian TIFF) before IDAT
        oN.jpg.golden.png, oN.png.golden.png
                the pixels cv2.imread(FILE) returns (IMREAD_COLOR: the orientation applied),
                stored as RGB
      and g6.jpg, a gray JPEG with Orientation 6, with the golden cv2.imread(FILE,
      IMREAD_GRAYSCALE) returns. tests/test_files.c checks clrun_image_read against each golden.
"""
import os
import struct
import sys
import zlib

import cv2
import numpy as np


def tiff(orientation, big_endian):
    e = ">" if big_endian else "<"
    head = b"MM\x00\x2a" if big_endian else b"II\x2a\x00"
    return head + struct.pack(e + "I", 8) + struct.pack(e + "H", 1) + struct.pack(e + "HHIHH", 0x112, 3, 1, orientation, 0) + \
        struct.pack(e + "I", 0)


def with_app1(jpeg, block):
    app = b"Exif\x00\x00" + block
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app) + 2) + app + jpeg[2:]


def with_exif_chunk(png, block):
    chunk = struct.pack(">I", len(block)) + b"eXIf" + block + struct.pack(">I", zlib.crc32(b"eXIf" + block) & 0xffffffff)
    at = png.index(b"IDAT") - 4
    return png[:at] + chunk + png[at:]


def main(out):
    os.makedirs(out, exist_ok=True)
    h, w = 20, 37  # not square, so every orientation gives a different image
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([(x * 7) % 256, (y * 13) % 256, ((x + 2 * y) * 5) % 256], axis=-1).astype(np.uint8)
    img[3:7, 4:30] = (20, 200, 90)
    jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    png = cv2.imencode(".png", img)[1].tobytes()
    for o in range(1, 9):
        for ext, data in (("jpg", with_app1(jpeg, tiff(o, o % 2 == 0))), ("png", with_exif_chunk(png, tiff(o, True)))):
            path = os.path.join(out, f"o{o}.{ext}")
            with open(path, "wb") as f:
                f.write(data)
            got = cv2.imread(path)
            cv2.imwrite(path + ".golden.png", got)  # BGR in memory, RGB in the file
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    g = with_app1(cv2.imencode(".jpg", gray, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes(), tiff(6, False))
    path = os.path.join(out, "g6.jpg")
    with open(path, "wb") as f:
        f.write(g)
    cv2.imwrite(path + ".golden.png", cv2.imread(path, cv2.IMREAD_GRAYSCALE))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
