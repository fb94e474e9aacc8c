#!/usr/bin/env python3
"""offline_check.py — the kernel library compiled offline for GPUs this machine does not have.

    offline_check.py SOURCE_DIR CLANG OCLOC     (CLANG or OCLOC may be "-": that half is skipped)

Every kernel source of lib/ops/ (but the NVIDIA-only ones, which test_nvptx covers) is compiled over
option sets the host code emits (lib/ops/*.c: the same -D names and values), by clang for AMD GPUs
(amdgcn-amd-amdhsa: gfx90a, gfx940, gfx1100; gfx942 needs LLVM 17, newer than Debian 12's clang 16)
and by Intel's ocloc for its GPUs (dg2, pvc). Each compile must succeed, and for the GPU-shaped
kernels the code must be what the tuning assumes: no scratch memory (no spills, no private arrays
placed in memory) and local memory within the target's limit (AMD: 64 KiB per work-group; Intel:
64 KiB on dg2, 128 KiB on pvc). The CPU-shaped kernels (one work-item per block, private arrays by
design: the files and the kernels named *_cpu) are only compiled. Findings known and not fixed are
listed in ACCOUNTED with their reasons and reported, not failed. OpenCL built-ins come from libclc's amdgcn library (Debian's libclc-15),
so that calls do not stay external and the resource figures are real.

Exit 0 when everything holds, 1 on any failure (each listed), 77 when neither compiler is there.
"""
import concurrent.futures
import os
import re
import struct
import subprocess
import sys
import tempfile

AMD_TARGETS = ["gfx90a", "gfx940", "gfx1100"]
INTEL_TARGETS = {"dg2": 64 * 1024, "pvc": 128 * 1024}
AMD_LDS = 64 * 1024
LIBCLC_AMD = "/usr/lib/clc/amdgcn--amdhsa.bc"

# Findings the check knows of, each with its reason: reported as ACCOUNTED, not failed. A key is
# (file, target, a piece of the options, a piece of the problem's text).
NOT_TUNED = ("no AMD or Intel GPU has run clrun: the portable GEMM's built-in tiles were measured on NVIDIA "
             "(an 8x8 micro-tile per work-item) and are not tuned there (docs/VENDORS.md)")
ACCOUNTED = [
    ("gemm.cl", ("gfx1100",), "", "", "RDNA3's wave32 register file spills the 128-wide tiles' micro-tiles; " + NOT_TUNED),
    ("gemm.cl", ("pvc",), "", "scratch", "PVC's 128 registers per thread hold less than an 8x8 micro-tile and its operands; " + NOT_TUNED),
    ("gemm.cl", ("gfx90a", "gfx940"), "-DTK=16", "", "f16/bf16 inputs with 16-deep slices (the conversions unrolled over the "
     "slice) outgrow the register file; f32 fits (420 VGPRs at 128x128); " + NOT_TUNED),
    ("reduce.cl", ("pvc",), "-DCLRUN_CHUNKED=0", "scratch", "IGC places clrun_dot's per-lane vectors in scratch on PVC; untested there"),
    ("sparse.cl", ("pvc",), "", "scratch", "IGC places clrun_sp24_decompress's 4-element group in scratch on PVC; untested there"),
]


def accounted(problem, f, target, opts):
    for af, targets, ao, ap, why in ACCOUNTED:
        if af == f and target in targets and ao in opts and ap in problem:
            return why
    return None


# (file, options, GPU-shaped): the option sets lib/ops/*.c builds each source with
GEMM_TILES = [(64, 128, 16, 8, 8, 1, 1), (128, 128, 16, 8, 8, 1, 2), (64, 128, 8, 8, 8, 1, 1), (128, 128, 8, 8, 8, 1, 1)]


def option_sets():
    sets = [("vector.cl", "-cl-fp32-correctly-rounded-divide-sqrt", True),
            ("convert.cl", "", True), ("amp.cl", "", True)]
    sets += [("quant.cl", f"-DVEC={v}", True) for v in (1, 4)]
    for half in (0, 1):
        for aligned in (0, 1):
            sets.append(("reduce.cl", f"-w -DCLRUN_VW=4 -DCLRUN_CHUNKED=0 -DCLRUN_ALIGNED={aligned} -DCLRUN_HALF={half}", True))
        sets.append(("reduce.cl", f"-w -DCLRUN_VW=8 -DCLRUN_CHUNKED=1 -DCLRUN_ALIGNED=1 -DCLRUN_HALF={half}", False))
    for i, (tm, tn, tk, wm, wn, vec, db) in enumerate(GEMM_TILES):
        for abt in (0, 1, 2):
            ta, tb = (i + abt) % 2, (i // 2 + abt) % 2  # every tile meets both layouts over the types
            sets.append(("gemm.cl", f"-DTM={tm} -DTN={tn} -DTK={tk} -DWM={wm} -DWN={wn} -DVEC={vec} -DDB={db} -DTA={ta} -DTB={tb} "
                                    f"-DGW={4 if abt == 0 else 1} -DPSUM={1 if abt != 1 else 0} -DABT={abt}", True))
    for abt in (0, 1, 2):
        sets.append(("gemm_cpu.cl", f"-DVW=8 -DRM=4 -DTA=0 -DTB={abt % 2} -DPSUM=1 -DABT={abt}", False))
    sets.append(("gemm_cpu.cl", "-DVW=8 -DRM=4 -DTA=0 -DTB=1 -DPSUM=0 -DABT=1 -DSP=1", False))
    sets += [("gemm_s8.cl", f"-DTA={ta} -DTB={tb} -DEPI={epi}", True) for ta, tb, epi in ((0, 0, 0), (0, 1, 1), (1, 0, 1))]
    sets += [("gemm_s8.cl", f"-DTR={tr}", True) for tr in (0, 1)]
    sets += [("sparse.cl", f"-DABT={abt}", True) for abt in (1, 2)]
    sets += [("sparse.cl", f"-DABT={abt} -DTB={tb}", True) for abt, tb in ((1, 0), (2, 1))]
    canny = "-DCN={cn} -DL2={l2} -DR={r} -DBX=32 -DBY=8 -DPY=4 -DCW=128 -DRB=64 -DKB={kb} -DMAP_IN=0 -DALIGN4={a4}"
    for cn, l2, r, kb, a4 in ((1, 0, 1, 3, 1), (1, 1, 2, 5, 0), (3, 0, 3, 7, 0)):
        o = canny.format(cn=cn, l2=l2, r=r, kb=kb, a4=a4)
        sets += [("canny_gpu.cl", o, True), ("canny_blur.cl", o, True), ("canny_cpu.cl", o, False)]
    return sets


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    return p.returncode, p.stdout.decode(errors="replace")


def kernel_path(src, f):
    """The kernel source f (a base name, unique across the op folders of lib/ops)."""
    for d, _, names in sorted(os.walk(os.path.join(src, "lib", "ops"))):
        if f in names:
            return os.path.join(d, f)
    raise FileNotFoundError(f"{f}: not in lib/ops")


def include_flags(src):
    """-I for every folder of lib/ops that holds kernel headers: the kernels include them by base name."""
    flags = []
    for d, _, names in sorted(os.walk(os.path.join(src, "lib", "ops"))):
        if any(n.endswith(".h") for n in names):
            flags += ["-I", d]
    return flags


def amd(clang, src, target, f, opts, gpu, tmp):
    out = os.path.join(tmp, f"{f}.{target}.{abs(hash(opts))}.s")
    cmd = [clang, "-x", "cl", "-cl-std=CL1.2", "-target", "amdgcn-amd-amdhsa", f"-mcpu={target}", "-nogpulib", "-O2", "-S",
           "-Wno-linker-warnings", "-Xclang", "-finclude-default-header", "-Xclang", "-mlink-builtin-bitcode", "-Xclang", LIBCLC_AMD,
           *include_flags(src), *opts.split(), kernel_path(src, f), "-o", out]
    rc, text = run(cmd)
    if rc:
        return [f"{f} [{opts}] does not compile for {target}:\n{text[-1500:]}"]
    asm = open(out).read()
    os.unlink(out)
    problems = []
    kernels = re.findall(r"^\s+\.name:\s+(\S+)\s*$", asm, re.M)
    fields = {k: [int(v) for v in re.findall(rf"^\s+\.{k}:\s+(\d+)", asm, re.M)]
              for k in ("private_segment_fixed_size", "group_segment_fixed_size", "vgpr_spill_count", "sgpr_spill_count")}
    n = len(fields["group_segment_fixed_size"])
    if n == 0:
        return [f"{f} [{opts}] for {target}: no kernel metadata in the assembly"]
    for i in range(n):
        name = kernels[i] if i < len(kernels) else f"kernel {i}"
        lds = fields["group_segment_fixed_size"][i]
        if lds > AMD_LDS:
            problems.append(f"{f} [{opts}] {name} on {target}: {lds} bytes of LDS, over {AMD_LDS}")
        if gpu and not name.endswith("_cpu"):  # a CPU-shaped kernel beside GPU ones (canny_blur.cl)
            for k in ("private_segment_fixed_size", "vgpr_spill_count", "sgpr_spill_count"):
                if i < len(fields[k]) and fields[k][i]:
                    problems.append(f"{f} [{opts}] {name} on {target}: {k} {fields[k][i]} (the GPU shape assumes no scratch)")
    return problems


def intel_kernels(binary):
    """(name, per-thread scratch bytes, local bytes) of each kernel in ocloc's device binary: the
    'Intel(R) OpenCL Device Binary' section, read as IGC's patch-token layout (program header of 7
    u32, kernel headers of 40 bytes, then name, heaps and patch list; token 18 is
    MEDIA_VFE_STATE {offset, per-thread scratch}, 15 ALLOCATE_LOCAL_SURFACE {offset, size})."""
    data = open(binary, "rb").read()
    # ELF64: section headers
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    dev = None
    for s in secs:
        nm = names[s[0]:names.index(b"\0", s[0])].decode()
        if nm.startswith("Intel(R) OpenCL Device Binary"):
            dev = data[s[4]:s[4] + s[5]]
    if dev is None:
        raise ValueError("no 'Intel(R) OpenCL Device Binary' section")
    magic, _ver, _dev, _ptr, nkern, _step, plist = struct.unpack_from("<7I", dev, 0)
    if magic != 0x494E5443:
        raise ValueError(f"device binary magic {magic:#x}, not CTNI")
    pos = 28 + plist
    out = []
    for _ in range(nkern):
        _ck, _hash, nsz, psz, heap, gsh, dsh, ssh, _unpadded = struct.unpack_from("<IQ7I", dev, pos)
        pos += 40
        name = dev[pos:pos + nsz].split(b"\0")[0].decode()
        pos += nsz + heap + gsh + dsh + ssh
        end, scratch, local = pos + psz, 0, 0
        while pos + 8 <= end:
            tok, size = struct.unpack_from("<II", dev, pos)
            if size < 8:
                raise ValueError(f"patch token {tok} of size {size}")
            if tok == 18:
                scratch = max(scratch, struct.unpack_from("<I", dev, pos + 12)[0])
            elif tok == 15:
                local += struct.unpack_from("<I", dev, pos + 12)[0]
            pos += size
        pos = end
        out.append((name, scratch, local))
    return out


def intel(ocloc, src, target, f, opts, gpu, tmp):
    od = tempfile.mkdtemp(dir=tmp)
    env = dict(os.environ)
    libdir = os.path.join(os.path.dirname(os.path.dirname(ocloc)), "lib", "x86_64-linux-gnu")
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    rc, text = run([ocloc, "compile", "-q", "-file", kernel_path(src, f), "-device", target, "-out_dir", od,
                    "-options", " ".join(include_flags(src) + [opts])], env)
    bins = [os.path.join(od, b) for b in os.listdir(od) if b.endswith(".bin")]
    if rc or not bins:
        return [f"{f} [{opts}] does not compile for Intel {target}:\n{text[-1500:]}"]
    problems = []
    try:
        for name, scratch, local in intel_kernels(bins[0]):
            if local > INTEL_TARGETS[target]:
                problems.append(f"{f} [{opts}] {name} on {target}: {local} bytes of local memory, over {INTEL_TARGETS[target]}")
            if gpu and scratch and not name.endswith("_cpu"):
                problems.append(f"{f} [{opts}] {name} on {target}: {scratch} bytes of scratch per thread (the GPU shape assumes none)")
    except (ValueError, struct.error) as e:
        problems.append(f"{f} [{opts}] on {target}: cannot read ocloc's binary: {e}")
    for b in os.listdir(od):
        os.unlink(os.path.join(od, b))
    os.rmdir(od)
    return problems


def main():
    src, clang, ocloc = sys.argv[1], sys.argv[2], sys.argv[3]
    have_clang = clang != "-" and os.path.exists(LIBCLC_AMD)
    have_ocloc = ocloc != "-"
    if not have_clang and not have_ocloc:
        print("offline_check: neither clang (with libclc) nor ocloc is installed (sh tools/vendors.sh ocloc; clang-16, libclc-15): skipped")
        return 77
    if not have_clang:
        print("offline_check: no clang with libclc: the AMD half is skipped")
    if not have_ocloc:
        print("offline_check: no ocloc: the Intel half is skipped")
    jobs = []
    for f, opts, gpu in option_sets():  # CPU-shaped kernels: compiled for one target of each vendor
        if have_clang:
            jobs += [(amd, clang, t, f, opts, gpu) for t in (AMD_TARGETS if gpu else AMD_TARGETS[:1])]
        if have_ocloc:
            jobs += [(intel, ocloc, t, f, opts, gpu) for t in (list(INTEL_TARGETS) if gpu else ["dg2"])]
    problems, known = [], []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        for j, p in zip(jobs, ex.map(lambda j: j[0](j[1], src, j[2], j[3], j[4], j[5], tmp), jobs)):
            for q in p:
                why = accounted(q, j[3], j[2], j[4])
                (known if why else problems).append((q, why))
    done = len(jobs)
    for q, why in known:
        print("ACCOUNTED:", q, "--", why)
    for q, _ in problems:
        print("FAIL:", q)
    print(f"offline_check: {done} compiles ({len(option_sets())} option sets; "
          f"{'AMD ' + ', '.join(AMD_TARGETS) if have_clang else ''}{'; ' if have_clang and have_ocloc else ''}"
          f"{'Intel ' + ', '.join(INTEL_TARGETS) if have_ocloc else ''}), {len(problems)} problem(s), {len(known)} accounted")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
