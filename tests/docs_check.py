"""docs_check.py SOURCE BUILD — every code snippet of README.md, docs/API.md, docs/PYTHON.md and
docs/CLI.md is run, so a wrong example fails CI: ```c blocks are compiled against the build's
libclrun and run, ```sh blocks run under sh -e, ```python blocks under python3 with the build's
package. Blocks without a language (sample output) are text.

A snippet that is a fragment (no main, variables declared elsewhere) is wrapped in a prelude named by
a comment on the line before its fence, <!-- doc-test: prelude=NAME -->: the declarations and data
the prose implies, from PRELUDES below, and for some a check of the result after it. A block that
cannot run here says so on that line, <!-- doc-test: not run: REASON -->, and a shell line can be
left out the same way, <!-- doc-test: except=PREFIX[,PREFIX]: REASON -->; both are listed in the
output (never skipped silently). Everything runs in a scratch folder holding the files the snippets
name (A.npy, photo.png, kernel.cl, examples/ …), with clrun on the PATH and the test device as
"gpu" (CI has none: clrun.open("gpu") means the device the tests run on)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC, BUILD = (os.path.abspath(p) for p in sys.argv[1:3])
DOCS = ["README.md", "docs/API.md", "docs/PYTHON.md", "docs/CLI.md"]
DEVICE = os.environ.get("CLRUN_TEST_DEVICE") or "cpu"

# ---- preludes ---------------------------------------------------------------------------------------

C_HEAD = """#include <clrun.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
"""

PRELUDES = {
    # README's C in ten lines: a GEMM from host arrays, checked against the CPU after
    ("c", "gemm"): ("""
    const size_t m = 37, n = 29, k = 53;
    float *ha = malloc(4 * m * k), *hb = malloc(4 * k * n), *hc = calloc(m * n, 4);
    for (size_t i = 0; i < m * k; i++) ha[i] = (float)((i * 7) % 11) - 5;
    for (size_t i = 0; i < k * n; i++) hb[i] = (float)((i * 5) % 13) - 6;
""", """
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float w = 0;
            for (size_t t = 0; t < k; t++) w += ha[i * k + t] * hb[t * n + j];
            if (hc[i * n + j] != w) { fprintf(stderr, "C[%zu][%zu] = %g, want %g\\n", i, j, hc[i * n + j], w); return 1; }
        }
    free(ha), free(hb), free(hc);
"""),
    # docs/API.md's five minutes: the seed's multiply (multiply.cl in the folder), checked after
    ("c", "multiply"): ("""
    enum { N = 400 };
    size_t n = N, bytes = N * sizeof(float);
    float host_a[N], host_b[N], host_d[N];
    for (int i = 0; i < N; i++) host_a[i] = (float)i * 0.5f, host_b[i] = (float)(N - i), host_d[i] = -1;
""", """
    if (st) return 1;
    for (int i = 0; i < N; i++)
        if (host_d[i] != host_a[i] * host_b[i]) { fprintf(stderr, "dest[%d] = %g\\n", i, host_d[i]); return 1; }
    clrun_buf_free(a), clrun_buf_free(b), clrun_buf_free(d), clrun_kernel_free(k), clrun_prog_free(prog), clrun_close(ctx);
"""),
    # docs/API.md's interop: an application's own OpenCL context, queue and buffers
    ("c", "interop"): ("""
    const size_t m = 16, n = 16, k = 16;
    clrun_device_info info;
    unsigned idx = 0;
    if (clrun_device_select(getenv("DOC_DEVICE"), &idx, NULL) || clrun_device_get(idx, &info)) return 3;
    cl_platform_id plats[16]; cl_uint np = 0;
    clGetPlatformIDs(16, plats, &np);
    cl_device_id my_device = NULL;
    for (cl_uint p = 0; p < np && !my_device; p++) {
        cl_device_id devs[16]; cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd; i++) {
            char name[256] = "";
            clGetDeviceInfo(devs[i], CL_DEVICE_NAME, sizeof name, name, NULL);
            if (!my_device && !strcmp(name, info.name)) my_device = devs[i];
        }
    }
    cl_int err;
    cl_context my_context = clCreateContext(NULL, 1, &my_device, NULL, NULL, &err);
    cl_command_queue my_queue = clCreateCommandQueue(my_context, my_device, 0, &err);
    float host[2 * 16 * 16], out[16 * 16];
    for (int i = 0; i < 2 * 16 * 16; i++) host[i] = (float)(i % 7) - 3;
    cl_mem my_a = clCreateBuffer(my_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    cl_mem my_c = clCreateBuffer(my_context, CL_MEM_READ_WRITE, sizeof out, NULL, &err);
""", """
    clEnqueueReadBuffer(my_queue, my_c, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float w = 0;
            for (size_t t = 0; t < k; t++) w += host[i * k + t] * host[m * k + t * n + j];
            if (out[i * n + j] != w) { fprintf(stderr, "C[%zu][%zu] = %g, want %g\\n", i, j, out[i * n + j], w); return 1; }
        }
    clReleaseMemObject(my_a), clReleaseMemObject(my_c), clReleaseCommandQueue(my_queue), clReleaseContext(my_context);
"""),
    # docs/API.md's streams: uploads on two queues while GEMMs run, every result checked after
    ("c", "streams"): ("""
    enum { chunks = 4, M = 32 };
    clrun_ctx *ctx;
    if (clrun_open(&ctx, getenv("DOC_DEVICE"))) return 3;
    const size_t bytes = M * M * sizeof(float);
    clrun_buf *in[2], *b, *out[chunks];
    float *host[chunks], hb[M * M], res[M * M];
    clrun_gemm_desc desc[chunks];
    for (int i = 0; i < M * M; i++) hb[i] = (float)(i % 5);
    clrun_buf_new_from(ctx, hb, bytes, 0, &b);
    clrun_buf_new(ctx, bytes, 0, &in[0]), clrun_buf_new(ctx, bytes, 0, &in[1]);
    for (int i = 0; i < chunks; i++) {
        clrun_host_alloc(ctx, bytes, (void **)&host[i]);
        for (int j = 0; j < M * M; j++) host[i][j] = (float)((i + j) % 3);
        clrun_buf_new(ctx, bytes, 0, &out[i]);
        desc[i] = (clrun_gemm_desc){.m = M, .n = M, .k = M, .alpha = 1, .a = in[i % 2], .lda = M, .b = b, .ldb = M, .c = out[i], .ldc = M};
    }
""", """
    for (int i = 0; i < chunks; i++) {
        clrun_download(out[i], 0, res, bytes);
        for (int r = 0; r < M; r++)
            for (int c = 0; c < M; c++) {
                float w = 0;
                for (int t = 0; t < M; t++) w += host[i][r * M + t] * hb[t * M + c];
                if (res[r * M + c] != w) { fprintf(stderr, "chunk %d: C[%d][%d] = %g, want %g\\n", i, r, c, res[r * M + c], w); return 1; }
            }
    }
    clrun_close(ctx);
"""),
    # docs/PYTHON.md's fragments: the names the prose has made before
    ("python", "arrays"): ("""
import numpy as np, clrun
ctx = clrun.open()
x = ctx.asarray(np.random.rand(1000).astype(np.float32))
y = ctx.asarray(np.random.rand(1000).astype(np.float32))
z = ctx.empty(1000)
host = np.random.rand(4096).astype(np.float32)
""", ""),
    ("python", "seed"): ("""
import numpy as np
SOURCE = open("examples/multiply.cl").read()
a2, b2 = np.random.rand(64, 32).astype(np.float32), np.random.rand(32, 48).astype(np.float32)
""", ""),
    ("python", "pyopencl"): ("""
import numpy as np, pyopencl as cl, clrun
m, n, k = 32, 24, 40
a, b = np.random.rand(m, k).astype(np.float32), np.random.rand(k, n).astype(np.float32)
with clrun.open() as c:
    pdev = cl.Device.from_int_ptr(c.device_int_ptr)  # a root device: valid after the context closes
pctx = cl.Context([pdev])
""", ""),
}

# Python snippets: clrun.open("gpu") means the test device here (CI has no GPU)
PY_HEAD = f"""import os, clrun
_open = clrun.open
clrun.open = lambda spec=None: _open({DEVICE!r} if spec == "gpu" else spec)
"""


# ---- the scratch folder -----------------------------------------------------------------------------


def scratch():
    import numpy as np
    d = tempfile.mkdtemp(prefix="clrun-docs.")
    rng = np.random.default_rng(7)
    np.save(os.path.join(d, "A.npy"), rng.standard_normal((64, 48)).astype(np.float32))
    np.save(os.path.join(d, "B.npy"), rng.standard_normal((48, 32)).astype(np.float32))
    np.save(os.path.join(d, "X.npy"), rng.standard_normal((16, 64)).astype(np.float32))
    np.save(os.path.join(d, "images.npy"), rng.standard_normal((2, 3, 16, 16)).astype(np.float32))  # NCHW
    np.save(os.path.join(d, "filters.npy"), rng.standard_normal((8, 3, 3, 3)).astype(np.float32))
    with open(os.path.join(d, "kernel.cl"), "w") as f:
        f.write("__kernel void scale(__global float *y, float a) { size_t i = get_global_id(0); y[i] = a * (float)i; }\n")
    shutil.copytree(os.path.join(SRC, "examples"), os.path.join(d, "examples"))
    shutil.copy(os.path.join(SRC, "examples", "multiply.cl"), d)  # docs/API.md builds it from the folder
    shutil.copytree(os.path.join(SRC, "python"), os.path.join(d, "python"))
    img = os.path.join(SRC, "tests", "data", "canny")
    png = sorted(f for f in os.listdir(img) if f.endswith(".png"))[0]
    shutil.copy(os.path.join(img, png), os.path.join(d, "photo.png"))
    os.makedirs(os.path.join(d, "frames"))
    for i in range(3):
        shutil.copy(os.path.join(img, png), os.path.join(d, "frames", f"f{i}.png"))
    os.makedirs(os.path.join(d, "edges"))
    os.symlink(BUILD, os.path.join(d, "build"))  # build/libclrun.so.0, build/examples/…
    return d


# ---- running ----------------------------------------------------------------------------------------


def blocks(path):
    """(line, language, directive, text) of every fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i, out = 0, []
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        prev = lines[i - 1] if i else ""
        d = re.match(r"^<!-- doc-test: (.*) -->$", prev.strip())
        out.append((i + 1, m.group(1), d.group(1) if d else "", "\n".join(lines[i + 1:j])))
        i = j + 1
    return out


def run(cmd, cwd, env, what, timeout=600):
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    if r.returncode:
        sys.stdout.write(r.stdout.decode(errors="replace")[-4000:])
        return f"{what}: exit {r.returncode}"
    return None


def main():
    work = scratch()
    env = dict(os.environ)
    # clrun, and the interpreter running this (with NumPy) as the snippets' python3
    env["PATH"] = os.pathsep.join([os.path.join(BUILD, "tools", "clrun"), os.path.dirname(sys.executable), env["PATH"]])
    env["PYTHONPATH"] = os.path.join(SRC, "python")
    env["CLRUN_LIBRARY"] = os.path.join(BUILD, "libclrun.so.0")
    env["CLRUN_DEVICE"] = env["DOC_DEVICE"] = DEVICE
    env["LD_LIBRARY_PATH"] = BUILD + (os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    ran, not_run, failures = 0, [], []
    cc = os.environ.get("CC", "cc")
    for doc in DOCS:
        for line, lang, directive, text in blocks(os.path.join(SRC, doc)):
            where = f"{doc}:{line}"
            if lang not in ("c", "sh", "python"):
                continue
            if directive.startswith("not run:"):
                not_run.append(f"{where} ({lang}): {directive[8:].strip()}")
                continue
            pm = re.match(r"prelude=(\w+)", directive)
            head, tail = PRELUDES.get((lang, pm.group(1)), ("", "")) if pm else ("", "")
            if pm and (lang, pm.group(1)) not in PRELUDES:
                failures.append(f"{where}: no prelude {pm.group(1)!r} for {lang}")
                continue
            if lang == "c":
                src = os.path.join(work, f"snippet{line}.c")
                body = text if "int main" in text else "int main(void)\n{\n" + head + text + "\n" + tail + "    return 0;\n}\n"
                with open(src, "w") as f:
                    f.write(C_HEAD + body)
                exe = src[:-2]
                err = run([cc, "-std=c11", "-Wall", "-o", exe, src, "-I" + os.path.join(SRC, "include"), "-L" + BUILD, "-lclrun",
                           "-lOpenCL", "-lm", "-Wl,-rpath," + BUILD], work, env, f"{where}: compiling")
                err = err or run([exe], work, env, f"{where}: running")
            elif lang == "sh":
                em = re.match(r"except=([^:]+):\s*(.*)", directive)
                lines = text.split("\n")
                if em:
                    prefixes = [p.strip() for p in em.group(1).split(",")]
                    kept = [ln for ln in lines if not any(ln.strip().startswith(p) for p in prefixes)]
                    for ln in lines:
                        if ln not in kept:
                            not_run.append(f"{where}: `{ln.split('#')[0].strip()}`: {em.group(2)}")
                    lines = kept
                script = os.path.join(work, f"snippet{line}.sh")
                with open(script, "w") as f:
                    f.write("set -e\n" + head + "\n".join(lines) + "\n" + tail)
                err = run(["sh", script], work, env, where)
            else:
                script = os.path.join(work, f"snippet{line}.py")
                with open(script, "w") as f:
                    f.write(PY_HEAD + head + text + "\n" + tail)
                err = run([sys.executable, script], work, env, where)
            ran += 1
            if err:
                failures.append(err)
            print(f"{where} ({lang}): {'FAILED' if err else 'ok'}", flush=True)
    for n in not_run:
        print(f"not run: {n}")
    print(f"{ran} snippets run, {len(failures)} failed, {len(not_run)} not run (listed above)")
    shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAILED", f)
    return 1 if failures or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
