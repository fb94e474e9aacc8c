#!/usr/bin/python3
"""canny_golden.py — golden Canny outputs from OpenCV, and clrun compared with OpenCV.

Needs Debian's python3-opencv (and python3-numpy). Three commands:

  tools/canny_golden.py make DIR
      Writes the synthetic test images into DIR (shapes, gradients, noise, text-like strokes,
      sizes 1x1, 2x3, 3x1, odd widths, hostile edge maps: checkerboard, all strong, a one-pixel
      spiral across many tiles; gray, RGB, gray+alpha, RGBA, palette and 16-bit PNGs, PGM/PPM),
      then for each image and each parameter set of PARAMS the edges cv2.Canny gives on the image
      cv2.imread gives, as DIR/golden/NAME.PARAMS.png, and DIR/MANIFEST listing them.
      lib/ops/canny/test_canny.c compares clrun with every line of the manifest, bit for bit.

  tools/canny_golden.py compare CLRUN IMAGE_OR_DIR... [--low T --high T --l2 --aperture 3|5|7 --blur K[,SIGMA]]
      Runs `CLRUN op canny` and cv2.Canny on every image given (folders: every PNG/PGM/PPM in
      them) and reports each image whose edges differ, with the first differing pixels.
      Exit status 1 when any differs.

  tools/canny_golden.py frame W H OUT.png [SEED]
      A natural-looking 8-bit gray frame (smooth shading, blobs, lines, texture, noise) for
      benchmarks.
"""
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

# tag, low, high, L2, Sobel aperture, Gaussian pre-blur size (cv2.GaussianBlur(img, (k, k), 0); 0: none)
PARAMS = [("l1-50-100", 50, 100, False, 3, 0), ("l2-30-90", 30, 90, True, 3, 0), ("l1-10-250", 10, 250, False, 3, 0),
          ("l1-100-40", 100, 40, False, 3, 0), ("l2-0-0", 0, 0, True, 3, 0), ("a5-l1-200-600", 200, 600, False, 5, 0),
          ("a5-l2-300-900", 300, 900, True, 5, 0), ("a7-l1-100-400", 100, 400, False, 7, 0),
          ("a7-l2-2000-6000", 2000, 6000, True, 7, 0), ("b3-l1-20-60", 20, 60, False, 3, 3),
          ("b5-l2-15-45", 15, 45, True, 3, 5), ("b7-a5-l1-100-300", 100, 300, False, 5, 7)]
# the same with a sigma for the blur (cv2.GaussianBlur(img, (k, k), sigma)): tag, ..., blur, sigma
PARAMS_SIGMA = [("b3s0.6-l1-30-90", 30, 90, False, 3, 3, 0.6), ("b5s1.4-l1-20-60", 20, 60, False, 3, 5, 1.4),
                ("b7s2.3-l2-10-40", 10, 40, True, 3, 7, 2.3)]


def frame(w, h, seed=1):
    """Natural-looking gray frame: low-frequency shading, shapes, lines, texture and noise."""
    rng = np.random.default_rng(seed)
    small = rng.random((max(2, h // 64), max(2, w // 64))).astype(np.float32)
    img = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC) * 140 + 50
    for _ in range(max(4, w * h // 40000)):
        c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        r = int(rng.integers(3, max(4, min(w, h) // 8)))
        cv2.circle(img, c, r, float(rng.integers(0, 255)), -1, lineType=cv2.LINE_AA)
    for _ in range(max(4, w * h // 80000)):
        p = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        q = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.line(img, p, q, float(rng.integers(0, 255)), int(rng.integers(1, 4)), lineType=cv2.LINE_AA)
    img += rng.normal(0, 6, img.shape).astype(np.float32)
    img = cv2.GaussianBlur(img, (3, 3), 0.8)
    return np.clip(img, 0, 255).astype(np.uint8)


def spiral(n):
    """A one-pixel-wide square spiral of strong edges on a flat background, n x n."""
    img = np.zeros((n, n), np.uint8)
    x0, y0, x1, y1 = 1, 1, n - 2, n - 2
    while x0 < x1 and y0 < y1:
        img[y0, x0:x1 + 1] = 255
        img[y0:y1 + 1, x1] = 255
        img[y1, x0:x1 + 1] = 255
        img[y0 + 2:y1 + 1, x0] = 255
        x0, y0, x1, y1 = x0 + 2, y0 + 2, x1 - 2, y1 - 2
    return img


def images(rng):
    """name -> (array, how to save: 'png', 'png16', 'pgm', 'ppm', 'gray_alpha', 'rgba', 'palette')."""
    out = {}
    out["one"] = (np.array([[200]], np.uint8), "png")
    out["two-by-three"] = (np.array([[0, 255], [255, 0], [10, 240]], np.uint8), "png")
    out["three-by-one"] = (np.array([[0, 128, 255]], np.uint8), "png")
    out["one-column"] = (rng.integers(0, 256, (37, 1)).astype(np.uint8), "png")
    out["noise-odd"] = (rng.integers(0, 256, (61, 97)).astype(np.uint8), "png")
    out["noise-low"] = (rng.integers(100, 140, (45, 131)).astype(np.uint8), "png")
    g = np.tile(np.arange(83, dtype=np.float32) * 3, (59, 1))
    out["gradient"] = (np.clip(g + g.T[:59, :1] * 0.5, 0, 255).astype(np.uint8), "png")
    s = np.zeros((96, 129), np.uint8)
    cv2.rectangle(s, (10, 10), (60, 50), 200, -1)
    cv2.circle(s, (95, 48), 25, 120, -1)
    cv2.line(s, (0, 95), (128, 0), 255, 1)
    cv2.ellipse(s, (40, 75), (30, 12), 30, 0, 360, 80, 2)
    out["shapes"] = (s, "png")
    t = np.full((70, 203), 230, np.uint8)
    cv2.putText(t, "clrun Canny 0123", (3, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.9, 20, 2)
    cv2.putText(t, "edges & strokes", (5, 60), cv2.FONT_HERSHEY_PLAIN, 1.5, 60, 1)
    out["text"] = (t, "png")
    out["checkerboard"] = (((np.indices((64, 77)).sum(axis=0) % 2) * 255).astype(np.uint8), "png")
    cb = np.kron((np.indices((9, 11)).sum(axis=0) % 2), np.ones((5, 7))).astype(np.uint8) * 255
    out["checker-blocks"] = (cb, "png")
    out["all-strong"] = (rng.integers(0, 2, (50, 67)).astype(np.uint8) * 255, "png")
    out["spiral"] = (spiral(203), "png")
    out["frame"] = (frame(321, 207, 3), "png")
    c = np.zeros((80, 113, 3), np.uint8)
    c[..., 0] = np.tile(np.arange(113, dtype=np.uint8) * 2, (80, 1))
    cv2.circle(c, (56, 40), 30, (0, 200, 90), -1)
    cv2.rectangle(c, (5, 5), (40, 70), (255, 255, 0), 2)
    c[..., 2] = np.clip(c[..., 2].astype(int) + rng.integers(0, 40, (80, 113)), 0, 255).astype(np.uint8)
    out["color"] = (c, "png")  # saved as RGB: cv2.imwrite wants BGR, see save()
    tie = np.zeros((40, 41, 3), np.uint8)
    tie[:, 20:, 0] = 200  # R and B step on different edges with equal magnitudes: tie rules
    tie[20:, :, 2] = 200
    tie[:, :, 1] = 200 - tie[:, :, 0]
    out["color-ties"] = (tie, "png")
    out["color-noise"] = (rng.integers(0, 256, (33, 47, 3)).astype(np.uint8), "png")
    out["gray16"] = ((frame(90, 70, 5).astype(np.uint16) * 257 + rng.integers(0, 256, (70, 90))).astype(np.uint16), "png16")
    out["gray-alpha"] = (frame(75, 64, 7), "gray_alpha")
    out["rgba"] = (np.dstack([frame(70, 52, 8), frame(70, 52, 9), frame(70, 52, 10)]), "rgba")
    out["palette"] = (frame(66, 49, 11), "palette")
    out["pgm"] = (frame(85, 61, 12), "pgm")
    out["ppm"] = (np.dstack([frame(59, 43, 13), frame(59, 43, 14), frame(59, 43, 15)]), "ppm")
    return out


def write_png(path, rows, color_type, bit_depth=8, palette=None):
    """Minimal PNG writer (zlib), for the layouts cv2.imwrite cannot make (gray+alpha, palette)."""
    import struct
    import zlib

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    h, w = rows.shape[:2]
    raw = b"".join(b"\x00" + rows[y].tobytes() for y in range(h))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0))
    if palette is not None:
        data += chunk(b"PLTE", palette.tobytes())
    data += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


def save(path_noext, arr, how):
    """Save; returns the file name."""
    if how in ("png", "png16"):
        p = path_noext + ".png"
        cv2.imwrite(p, arr[..., ::-1] if arr.ndim == 3 else arr)
    elif how == "gray_alpha":
        p = path_noext + ".png"
        write_png(p, np.dstack([arr, 255 - arr]), 4)
    elif how == "rgba":
        p = path_noext + ".png"
        cv2.imwrite(p, np.dstack([arr[..., ::-1], np.full(arr.shape[:2], 128, np.uint8)]))
    elif how == "palette":
        p = path_noext + ".png"
        levels = (arr // 16).astype(np.uint8)
        pal = np.stack([np.arange(16) * 17, 255 - np.arange(16) * 17, np.arange(16) * 8], axis=1).astype(np.uint8)
        write_png(p, levels, 3, 8, pal)
    elif how == "pgm":
        p = path_noext + ".pgm"
        cv2.imwrite(p, arr)
    elif how == "ppm":
        p = path_noext + ".ppm"
        cv2.imwrite(p, arr[..., ::-1])
    else:
        raise ValueError(how)
    return os.path.basename(p)


def opencv_edges(path, low, high, l2, aperture=3, blur=0, sigma=0.0):
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise RuntimeError("OpenCV cannot read " + path)
    if blur > 1:
        img = cv2.GaussianBlur(img, (blur, blur), sigma)
    return cv2.Canny(img, low, high, apertureSize=aperture, L2gradient=l2)


def cmd_make(d):
    rng = np.random.default_rng(20261202)
    os.makedirs(os.path.join(d, "golden"), exist_ok=True)
    lines = []
    for name, (arr, how) in images(rng).items():
        fname = save(os.path.join(d, name), arr, how)
        for tag, low, high, l2, aperture, blur, *sigma in PARAMS + PARAMS_SIGMA:
            e = opencv_edges(os.path.join(d, fname), low, high, l2, aperture, blur, *sigma)
            gname = "%s.%s.png" % (name, tag)
            cv2.imwrite(os.path.join(d, "golden", gname), e)
            lines.append("%s %s %g %g %d %d %d" % (fname, gname, low, high, int(l2), aperture, blur) + "".join(" %g" % x for x in sigma))
    with open(os.path.join(d, "MANIFEST"), "w") as f:
        f.write("# input golden low high l2 aperture blur [sigma] — made by tools/canny_golden.py make with OpenCV %s\n" % cv2.__version__)
        f.write("\n".join(lines) + "\n")
    print("wrote %d goldens for %d images into %s" % (len(lines), len(lines) // len(PARAMS + PARAMS_SIGMA), d))


def cmd_compare(clrun, targets, low, high, l2, aperture=3, blur=0, sigma=0.0):
    files = []
    for t in targets:
        if os.path.isdir(t):
            files += sorted(os.path.join(t, f) for f in os.listdir(t) if f.lower().endswith((".png", ".pgm", ".ppm", ".pnm")))
        else:
            files.append(t)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, f in enumerate(files):
            out = os.path.join(tmp, "%d.png" % i)
            cmd = [clrun, "op", "canny", f, "-o", out, "--low", str(low), "--high", str(high), "--aperture", str(aperture)]
            cmd += (["--l2"] if l2 else []) + (["--blur", "%d,%r" % (blur, sigma)] if blur else [])
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print("%s: clrun failed (%d): %s" % (f, r.returncode, r.stderr.strip()))
                bad += 1
                continue
            want = opencv_edges(f, low, high, l2, aperture, blur, sigma)
            got = cv2.imread(out, cv2.IMREAD_GRAYSCALE)
            if got.shape != want.shape or not np.array_equal(got, want):
                diff = np.argwhere(got != want) if got.shape == want.shape else []
                print("%s: DIFFERS (%d pixels; first at row, col %s)" % (f, len(diff), [tuple(x) for x in diff[:5]]))
                bad += 1
            else:
                print("%s: identical (%d edge pixels)" % (f, int((want > 0).sum())))
    print("%d of %d images differ" % (bad, len(files)))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "make":
        cmd_make(argv[2])
        return 0
    if len(argv) >= 4 and argv[1] == "compare":
        args, low, high, l2, aperture, blur, sigma = [], 50.0, 100.0, False, 3, 0, 0.0
        it = iter(argv[3:])
        for a in it:
            if a == "--low":
                low = float(next(it))
            elif a == "--high":
                high = float(next(it))
            elif a == "--l2":
                l2 = True
            elif a == "--aperture":
                aperture = int(next(it))
            elif a == "--blur":
                k, _, sg = next(it).partition(",")
                blur, sigma = int(k), float(sg or 0)
            else:
                args.append(a)
        return cmd_compare(argv[2], args, low, high, l2, aperture, blur, sigma)
    if len(argv) >= 5 and argv[1] == "frame":
        cv2.imwrite(argv[4], frame(int(argv[2]), int(argv[3]), int(argv[5]) if len(argv) > 5 else 1))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
