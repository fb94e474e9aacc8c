"""The seed's OpenCV CUDA flow, cv2.cuda.createCannyEdgeDetector(50, 100).detect(frame), on any
vendor's device: Canny edges of a 1080p frame, equal to cv2.Canny byte for byte.

    python3 examples/python/canny.py [IMAGE] [DEVICE]
"""
import sys
import time

import numpy as np

import clrun

if len(sys.argv) > 1 and sys.argv[1] != "-":
    frame = clrun.imread(sys.argv[1])
else:  # a synthetic 1080p frame: smooth shapes and noise
    yy, xx = np.mgrid[0:1080, 0:1920]
    frame = (128 + 60 * np.sin(xx / 37.0) * np.cos(yy / 23.0) + np.random.default_rng(1).normal(0, 8, (1080, 1920)))
    frame = np.clip(frame, 0, 255).astype(np.uint8)
with clrun.open(sys.argv[2] if len(sys.argv) > 2 else None) as ctx:
    clrun.canny(ctx, frame, 50, 100)  # builds the kernels (cached on disk after the first run)
    t0 = time.perf_counter()
    edges = clrun.canny(ctx, frame, 50, 100)
    ms = (time.perf_counter() - t0) * 1e3
    print(f"on {ctx.device.name}: {frame.shape[1]}x{frame.shape[0]}, {int((edges > 0).sum())} edge pixels, {ms:.1f} ms "
          "(upload, edges, download)")
try:
    import cv2
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
    if frame.ndim == 2:
        print("equal to cv2.Canny(frame, 50, 100):", bool(np.array_equal(edges, cv2.Canny(gray, 50, 100))))
except ImportError:
    pass
