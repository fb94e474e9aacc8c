/* test_nvptx.c — the NVIDIA-only kernels (lib/ops/gemm/nv/gemm_wgmma_nv.cl, gemm_mma_nv.cl) compiled to PTX by
 * clang's NVPTX target on any machine, for the tile and layout options the host can pass, then put
 * through the -clrun-ptx-rewrite rewrite: every option set compiles, every wgmma the kernel should
 * issue comes out uncommented with its registers filled in, the warp-specialised forms carry their
 * mbarrier protocol. CPU-only CI never builds these kernels otherwise (the NVIDIA driver does, at run
 * time); running them stays with the GPU tests. Skipped (exit 77) where clang has no NVPTX target. */
#include "helpers.h"
#include "opkit.h" /* clrun__ptx_rewrite (the static library) */

#include <stdio.h>
#include <unistd.h>

#define CLANG "clang -x cl -cl-std=CL1.2 -fgnu-keywords -Dasm=__asm__ -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -O2 -S"

#define OPS SOURCE_DIR "/lib/ops"

static char tmp[64];

/* PTX of file under options, rewritten; NULL (and a failure) when clang refuses. Without libclc,
 * OpenCL built-ins (barrier, get_local_id) stay calls to external functions: the text is what counts. */
static char *ptx_of(const char *file, const char *opts)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, CLANG " -w -I" OPS " -I" OPS "/gemm %s -o %s " OPS "/gemm/nv/%s 2>&1", opts, tmp, file);
    FILE *p = popen(cmd, "r");
    char line[512];
    int said = 0;
    while (p && fgets(line, sizeof line, p))
        if (said++ < 8) fprintf(stderr, "  clang: %s", line);
    if (!p || pclose(p) != 0) {
        fail_msg("%s with %s does not compile for NVPTX", file, opts);
        return NULL;
    }
    FILE *f = fopen(tmp, "rb");
    assert_non_null(f);
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n < sizeof buf);
    size_t out = 0;
    char *r = clrun__ptx_rewrite((const unsigned char *)buf, n, &out);
    if (!r) fail_msg("%s with %s: the rewrite found no .target line", file, opts);
    return r;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p++) n++;
    return n;
}

/* occurrences of what at the start of a line (after blanks): live instructions, not comments */
static int live(const char *text, const char *what)
{
    int n = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *q = l;
        while (*q == ' ' || *q == '\t') q++;
        if (strncmp(q, what, strlen(what)) == 0) n++;
    }
    return n;
}

static void wgmma_kernel(void **state)
{
    (void)state;
    static const struct {
        const char *opts;
        int mma, ws; /* wgmma instructions expected; warp-specialised form */
    } cases[] = {
        /* the host's default tiles in all four layouts: 2 slices of 64 rows × 2 steps of k16 */
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=0 -DTA=0 -DTB=0 -DC2=1", 4, 0},
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=0 -DTA=1 -DTB=0 -DC2=0", 4, 0},
        {"-DABT=2 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=0 -DTA=0 -DTB=1 -DC2=1", 4, 0},
        {"-DABT=2 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=0 -DTA=1 -DTB=1 -DC2=1", 4, 0},
        /* s8 with its epilogue: k32 steps */
        {"-DABT=3 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=0 -DTA=0 -DTB=1 -DC2=0 -DEPI=1", 4, 0},
        /* narrower instructions, 32-byte slices, one slice in flight, two warpgroups */
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=2 -DWN=64 -DSTAGES=3 -DWAIT=1 -DKB=64 -DWS=0 -DTA=0 -DTB=0 -DC2=1", 4, 0},
        {"-DABT=1 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=4 -DWAIT=0 -DKB=32 -DWS=0 -DTA=1 -DTB=0 -DC2=1", 1, 0},
        /* warp-specialised */
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=2 -DWN=128 -DSTAGES=5 -DWAIT=1 -DKB=32 -DWS=1 -DTA=0 -DTB=0 -DC2=1", 1, 1},
        {"-DABT=2 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=2 -DWAIT=0 -DKB=64 -DWS=2 -DTA=1 -DTB=1 -DC2=1", 4, 2},
        {"-DABT=3 -DBM=64 -DBN=256 -DWG=1 -DWN=256 -DSTAGES=3 -DWAIT=1 -DKB=32 -DWS=1 -DTA=0 -DTB=1 -DC2=1 -DEPI=0", 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = ptx_of("gemm_wgmma_nv.cl", cases[i].opts);
        if (!p) continue;
        const int n = live(p, "wgmma.mma_async.sync.aligned.m64n");
        if (n != cases[i].mma) fail_msg("%s: %d wgmma.mma_async, want %d", cases[i].opts, n, cases[i].mma);
        if (live(p, "//@@")) fail_msg("%s: a //@@ line survived the rewrite", cases[i].opts);
        /* the accumulators as registers, the predicate set from its operand */
        if (count(p, "wgmma.mma_async") && !strstr(p, "{%f") && !strstr(p, "{%r")) fail_msg("%s: no register list", cases[i].opts);
        if (count(p, "setp.ne.b32 p, %r") != n) fail_msg("%s: the scale predicate is not set from a register", cases[i].opts);
        if (!live(p, "wgmma.fence.sync.aligned") || !live(p, "wgmma.commit_group.sync.aligned") ||
            !live(p, "wgmma.wait_group.sync.aligned"))
            fail_msg("%s: fence, commit or wait missing", cases[i].opts);
        if (!live(p, "fence.proxy.async.shared::cta")) fail_msg("%s: no proxy fence", cases[i].opts);
        const int tries = count(p, "mbarrier.try_wait.parity"), noinc = count(p, "cp.async.mbarrier.arrive.noinc"),
                  arrive = count(p, "mbarrier.arrive.shared.b64");
        if (cases[i].ws ? !tries || !arrive || (cases[i].ws == 1) != (noinc > 0)
                        : tries || noinc || arrive || (count(p, "bar.sync") + count(p, "barrier")) == 0)
            fail_msg("%s: the synchronisation does not match WS %d (try_wait %d, noinc %d, arrive %d)", cases[i].opts, cases[i].ws, tries,
                     noinc, arrive);
        if (!strstr(p, ".target sm_") || !strstr(strstr(p, ".target sm_"), "a")) fail_msg("%s: target not rewritten", cases[i].opts);
        free(p);
    }
}

/* The TMA form (-DTMA=1, with WS 1): one producer thread arms each stage's mbarrier with the bytes
 * to expect and issues tensor copies from the two maps, acquired once through the tensormap proxy;
 * no thread copies with cp.async. */
static void tma_kernel(void **state)
{
    (void)state;
    static const struct {
        const char *opts;
        int mma, copies; /* wgmma instructions and tensor copies per stage expected */
    } cases[] = {
        {"-DABT=1 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=3 -DWAIT=1 -DKB=32 -DWS=1 -DTA=0 -DTB=0 -DC2=1 -DTMA=1", 1, 1 + 4},
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=2 -DWN=128 -DSTAGES=5 -DWAIT=1 -DKB=32 -DWS=1 -DTA=0 -DTB=1 -DC2=1 -DTMA=1", 1, 1 + 1},
        {"-DABT=2 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=2 -DWAIT=0 -DKB=64 -DWS=1 -DTA=1 -DTB=0 -DC2=0 -DTMA=1", 4, 2 + 2},
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=2 -DWN=64 -DSTAGES=2 -DWAIT=0 -DKB=64 -DWS=1 -DTA=1 -DTB=1 -DC2=1 -DTMA=1", 4, 2 + 1},
        /* s8 with its epilogue (A M×K, B N×K): k32 steps, byte boxes */
        {"-DABT=3 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=3 -DWAIT=0 -DKB=32 -DWS=1 -DTA=0 -DTB=1 -DC2=0 -DEPI=1 -DTMA=1", 1, 1 + 1},
        {"-DABT=3 -DBM=128 -DBN=128 -DWG=1 -DWN=128 -DSTAGES=2 -DWAIT=1 -DKB=64 -DWS=1 -DTA=0 -DTB=1 -DC2=1 -DEPI=0 -DTMA=1", 4, 1 + 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = ptx_of("gemm_wgmma_nv.cl", cases[i].opts);
        if (!p) continue;
        const int n = live(p, "wgmma.mma_async.sync.aligned.m64n");
        if (n != cases[i].mma) fail_msg("%s: %d wgmma.mma_async, want %d", cases[i].opts, n, cases[i].mma);
        if (live(p, "//@@")) fail_msg("%s: a //@@ line survived the rewrite", cases[i].opts);
        const int copies = live(p, "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes");
        /* the loops over 64-wide blocks are unrolled by clang, or kept as one instruction in a loop */
        if (copies != cases[i].copies && copies != 2) fail_msg("%s: %d tensor copies, want %d", cases[i].opts, copies, cases[i].copies);
        if (live(p, "mbarrier.arrive.expect_tx.shared::cta.b64") != 1) fail_msg("%s: the stage is not armed once", cases[i].opts);
        if (live(p, "fence.proxy.tensormap::generic.acquire.gpu") != 2) fail_msg("%s: the maps are not acquired", cases[i].opts);
        if (count(p, "cp.async.cg") || count(p, "cp.async.ca") || count(p, "cp.async.mbarrier.arrive"))
            fail_msg("%s: threads still copy with cp.async", cases[i].opts);
        if (!count(p, "mbarrier.try_wait.parity") || !count(p, "mbarrier.arrive.shared.b64"))
            fail_msg("%s: the consumers' full/empty protocol is missing", cases[i].opts);
        free(p);
    }
}

/* -DCUDA_LAUNCH=1, the form launched through the CUDA driver (lib/cuda.c): its stages in one
 * __local array that the host's rewrite makes dynamic shared memory at module scope; the kernel
 * otherwise the TMA one. */
static void cuda_launch_kernel(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "-DABT=1 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=8 -DWAIT=0 -DKB=64 -DWS=1 -DTA=0 -DTB=0 -DC2=1 -DTMA=1 -DCUDA_LAUNCH=1",
        "-DABT=3 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=8 -DWAIT=0 -DKB=64 -DWS=1 -DTA=0 -DTB=1 -DC2=0 -DEPI=1 -DTMA=1 -DCUDA_LAUNCH=1",
        "-DABT=1 -DBM=128 -DBN=256 -DWG=2 -DWN=256 -DSTAGES=6 -DWAIT=0 -DKB=64 -DWS=1 -DTA=0 -DTB=1 -DC2=1 -DTMA=1 -DSP=1 -DSPMETA=1 "
        "-DCUDA_LAUNCH=1",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = ptx_of("gemm_wgmma_nv.cl", cases[i]);
        if (!p) continue;
        char *d = clrun__ptx_dynamic_smem(p, strlen(p));
        if (!d) fail_msg("%s: no __local clrun_dyn_smem in the PTX", cases[i]);
        const char *ext = strstr(d, ".extern .shared .align 1024 .b8 ");
        const char *entry = strstr(d, ".entry clrun_gemm_wgmma");
        if (!ext || !entry || ext > entry) fail_msg("%s: no module-scope dynamic declaration before the entry", cases[i]);
        const char *name = ext + strlen(".extern .shared .align 1024 .b8 ");
        if (!strstr(name, "clrun_dyn_smem[];") || strchr(name, '\n') < strstr(name, "[];"))
            fail_msg("%s: the declaration is not an unsized array: %.80s", cases[i], ext);
        if (strstr(d, "clrun_dyn_smem[16]")) fail_msg("%s: the static declaration survived", cases[i]);
        if (count(d, "clrun_dyn_smem") != count(p, "clrun_dyn_smem")) fail_msg("%s: uses of the array were lost", cases[i]);
        if (live(d, "wgmma.mma_async") < 1 || live(d, "cp.async.bulk.tensor") < 1)
            fail_msg("%s: the kernel lost its instructions", cases[i]);
        free(d);
        free(p);
    }
    assert_null(clrun__ptx_dynamic_smem(".version 8.0\n.target sm_90a\n.address_size 64\n.shared .b8 other[4];\n", 64));
    /* the group and global offsets of NVIDIA's OpenCL runtime are 0 in a driver launch; other
     * environment registers are refused */
    static const char head[] =
        ".version 8.0\n.target sm_90a\n.address_size 64\n.entry k()\n{\n.shared .align 16 .b8 k_clrun_dyn_smem[16];\n";
    char text[512];
    snprintf(text, sizeof text, "%smov.u32 %%r1, %%ctaid.x;\nmov.b32 %%r2, %%envreg0;\nmov.b32 %%r3, %%envreg5;\n}\n", head);
    char *d = clrun__ptx_dynamic_smem(text, strlen(text));
    assert_non_null(d);
    if (strstr(d, "envreg") || !strstr(d, "mov.b32 %r2, 0;") || !strstr(d, "mov.b32 %r3, 0;") || !strstr(d, "mov.u32 %r1, %ctaid.x;"))
        fail_msg("the offsets were not made 0: %s", d);
    free(d);
    snprintf(text, sizeof text, "%smov.b32 %%r2, %%envreg7;\n}\n", head);
    assert_null(clrun__ptx_dynamic_smem(text, strlen(text)));
    snprintf(text, sizeof text, "%smov.b32 %%r2, %%envreg12;\n}\n", head);
    assert_null(clrun__ptx_dynamic_smem(text, strlen(text)));
}

/* The 2:4 form (-DSP=1, with TMA): one wgmma.mma_async.sp k32 per 64-row piece and slice, A's
 * compressed tile and B's loaded by tensor copies, the metadata operand a register read from global
 * memory. */
static void sparse_kernel(void **state)
{
    (void)state;
    static const struct {
        const char *opts;
        int mma; /* wgmma.mma_async.sp instructions expected */
    } cases[] = {
        {"-DABT=1 -DBM=128 -DBN=128 -DWG=2 -DWN=128 -DSTAGES=3 -DWAIT=0 -DKB=64 -DWS=1 -DTA=0 -DTB=0 -DC2=1 -DTMA=1 -DSP=1 -DSPMETA=1", 1},
        {"-DABT=2 -DBM=128 -DBN=256 -DWG=1 -DWN=128 -DSTAGES=2 -DWAIT=1 -DKB=64 -DWS=1 -DTA=0 -DTB=1 -DC2=0 -DTMA=1 -DSP=1 -DSPMETA=2", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = ptx_of("gemm_wgmma_nv.cl", cases[i].opts);
        if (!p) continue;
        const int n = live(p, "wgmma.mma_async.sp.sync.aligned.m64n");
        if (n != cases[i].mma) fail_msg("%s: %d wgmma.mma_async.sp, want %d", cases[i].opts, n, cases[i].mma);
        if (live(p, "wgmma.mma_async.sync")) fail_msg("%s: a dense wgmma in the 2:4 kernel", cases[i].opts);
        if (!strstr(p, "k32.f32.")) fail_msg("%s: not the k32 shape", cases[i].opts);
        if (live(p, "//@@")) fail_msg("%s: a //@@ line survived the rewrite", cases[i].opts);
        if (!live(p, "cp.async.bulk.tensor.3d")) fail_msg("%s: no tensor copies", cases[i].opts);
        if (!count(p, "ld.global.nc.u32") && !count(p, "ld.global.u32")) fail_msg("%s: the metadata is not read", cases[i].opts);
        free(p);
    }
}

static void mma_kernel(void **state) /* the mma.sync kernel the wgmma one falls back to */
{
    (void)state;
    static const char *const cases[] = {
        "-DABT=1 -DBM=128 -DBN=128 -DBK=32 -DWTM=64 -DWTN=64 -DSTAGES=3 -DTFACC=1 -DTA=0 -DTB=0 -DC2=1",
        "-DABT=2 -DBM=128 -DBN=128 -DBK=32 -DWTM=64 -DWTN=64 -DSTAGES=3 -DTFACC=1 -DTA=1 -DTB=1 -DC2=0",
        "-DABT=0 -DBM=128 -DBN=128 -DBK=16 -DWTM=64 -DWTN=64 -DSTAGES=3 -DTFACC=2 -DTA=1 -DTB=0 -DC2=1",
        "-DABT=3 -DBM=128 -DBN=128 -DBK=64 -DWTM=64 -DWTN=64 -DSTAGES=3 -DTA=0 -DTB=1 -DEPI=1",
        "-DABT=1 -DBM=128 -DBN=128 -DBK=32 -DWTM=64 -DWTN=64 -DSTAGES=3 -DTA=0 -DTB=0 -DC2=1 -DSP=1 -DSPMETA=1 -DSPORD=1",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = ptx_of("gemm_mma_nv.cl", cases[i]);
        if (!p) continue;
        if (!count(p, "mma.sync.aligned") && !count(p, "mma.sp")) fail_msg("%s: no mma instruction", cases[i]);
        free(p);
    }
}

int main(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/clrun-nvptx-%d.ptx", (int)getpid());
    if (system("clang -x cl -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -S -o /dev/null - < /dev/null > /dev/null 2>&1") !=
        0) {
        printf("clang with an NVPTX target not found: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wgmma_kernel),  cmocka_unit_test(tma_kernel), cmocka_unit_test(cuda_launch_kernel),
        cmocka_unit_test(sparse_kernel), cmocka_unit_test(mma_kernel),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(tmp);
    return rc;
}
