"""OpenCV's peers of `clrun bench pipeline`: Canny over a folder of image files, end to end.

usage: python3 opencv_pipeline.py jpeg DIR
         writes DIR/NAME.jpg (quality 95, cv2.imwrite) for every DIR/NAME.png; prints "made N"
       python3 opencv_pipeline.py run DIR EXT OUT JOBS
         times cv2.imwrite(OUT/NAME.png, cv2.Canny(cv2.imread(F, 0), 50, 100)) over DIR/*.EXT:
         in one process ("loop SECONDS", edges in OUT/loop) and on a multiprocessing.Pool of JOBS
         processes ("pool SECONDS", edges in OUT/pool; the pool is started before the clock).
Exits non-zero when cv2 is missing.
"""
import glob
import multiprocessing
import os
import sys
import time

import cv2


def canny_file(args):
    f, out = args
    cv2.imwrite(os.path.join(out, os.path.splitext(os.path.basename(f))[0] + '.png'), cv2.Canny(cv2.imread(f, 0), 50, 100))


def main():
    if sys.argv[1] == 'jpeg':
        fs = sorted(glob.glob(os.path.join(sys.argv[2], '*.png')))
        for f in fs:
            cv2.imwrite(f[:-4] + '.jpg', cv2.imread(f, cv2.IMREAD_UNCHANGED), [cv2.IMWRITE_JPEG_QUALITY, 95])
        print('made', len(fs))
        return
    d, ext, out, jobs = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    fs = sorted(glob.glob(os.path.join(d, '*.' + ext)))
    for sub in ('loop', 'pool'):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    t0 = time.perf_counter()
    for f in fs:
        canny_file((f, os.path.join(out, 'loop')))
    print('loop', time.perf_counter() - t0, flush=True)
    with multiprocessing.Pool(jobs) as pool:
        pool.map(abs, range(jobs))  # the workers are up before the clock starts
        t0 = time.perf_counter()
        pool.map(canny_file, [(f, os.path.join(out, 'pool')) for f in fs], chunksize=1)
        print('pool', time.perf_counter() - t0)


if __name__ == '__main__':
    main()
