"""OpenCV's cv2.Canny (L1, thresholds 50/100), the peer of `clrun bench canny`.

usage: python3 opencv_canny.py IN.png EDGES.png REPS
Prints "cpu MS" (host cores) and writes those edges to EDGES.png; when OpenCV has OpenCL, also
"ocl MS" (device-resident, UMat) and "oclio MS" (upload + Canny + download). Medians of REPS after
a warm-up. Exits non-zero when cv2 is missing.
"""
import statistics
import sys
import time

import cv2

img = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
reps = int(sys.argv[3])


def med(f):
    f()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


cv2.ocl.setUseOpenCL(False)
print('cpu', med(lambda: cv2.Canny(img, 50, 100)))
cv2.imwrite(sys.argv[2], cv2.Canny(img, 50, 100))
if cv2.ocl.haveOpenCL():
    cv2.ocl.setUseOpenCL(True)
    u = cv2.UMat(img)

    def dev():
        cv2.Canny(u, 50, 100)
        cv2.ocl.finish()

    print('ocl', med(dev))
    print('oclio', med(lambda: cv2.Canny(cv2.UMat(img), 50, 100).get()))
