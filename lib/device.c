/* device.c — platform and device discovery, ranking, selection strings, capability probe. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    clrun_device_info info;
    cl_platform_id platform;
    cl_device_id device;
    int multiple_known; /* preferred_multiple was answered by the device, not guessed */
};

/* cl_name_version (OpenCL 3.0), which the 1.2 headers clrun builds against do not declare */
struct name_version {
    cl_uint version;
    char name[64];
};

static pthread_mutex_t learn_lock = PTHREAD_MUTEX_INITIALIZER; /* preferred_multiple learnt by a context */
static pthread_once_t list_once = PTHREAD_ONCE_INIT;
static struct entry *list;
static unsigned list_n;
static clrun_status list_status;
static char list_err[1024];

static void get_str(cl_device_id d, cl_device_info what, char *out, size_t size)
{
    out[0] = 0;
    if (clGetDeviceInfo(d, what, size - 1, out, NULL) != CL_SUCCESS) out[0] = 0;
    out[size - 1] = 0;
}

static int has_ext(const char *exts, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = exts; (p = strstr(p, name)) != NULL; p += n)
        if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

/* A guess of the SIMD width from the vendor, used until a context probes the real value. */
static size_t guess_multiple(const clrun_device_info *in)
{
    char v[128];
    size_t i;
    for (i = 0; i + 1 < sizeof v && in->vendor[i]; i++) v[i] = (char)tolower((unsigned char)in->vendor[i]);
    v[i] = 0;
    if (strstr(v, "nvidia")) return 32;
    if (strstr(v, "advanced micro") || strstr(v, "amd")) return in->type == CLRUN_DEVICE_GPU ? 64 : 8;
    if (in->type == CLRUN_DEVICE_GPU) return 16;
    return 8;
}

static void probe(struct entry *e)
{
    clrun_device_info *in = &e->info;
    cl_device_id d = e->device;
    cl_device_type t = 0;
    cl_ulong u = 0;
    cl_uint ui = 0;
    cl_bool b = CL_FALSE;
    size_t sz = 0;

    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    /* one kind, or none: a device claiming several (Oclgrind's simulator says CPU, GPU and
     * accelerator at once) is "other", ranked last, never taken for `gpu` or `cpu` */
    const cl_device_type kinds = t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CPU);
    in->type = kinds == CL_DEVICE_TYPE_GPU           ? CLRUN_DEVICE_GPU
               : kinds == CL_DEVICE_TYPE_ACCELERATOR ? CLRUN_DEVICE_ACCELERATOR
               : kinds == CL_DEVICE_TYPE_CPU         ? CLRUN_DEVICE_CPU
                                                     : CLRUN_DEVICE_OTHER;
    get_str(d, CL_DEVICE_NAME, in->name, sizeof in->name);
    get_str(d, CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor);
    get_str(d, CL_DEVICE_VERSION, in->version, sizeof in->version);
    get_str(d, CL_DRIVER_VERSION, in->driver_version, sizeof in->driver_version);
    get_str(d, CL_DEVICE_OPENCL_C_VERSION, in->c_version, sizeof in->c_version);
    if (sscanf(in->c_version, "OpenCL C %d.%d", &in->c_version_major, &in->c_version_minor) != 2)
        in->c_version_major = 1, in->c_version_minor = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof u, &u, NULL) == CL_SUCCESS) in->global_mem = u;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof u, &u, NULL) == CL_SUCCESS) in->max_alloc = u;
    if (clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof u, &u, NULL) == CL_SUCCESS) in->local_mem = u;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof ui, &ui, NULL) == CL_SUCCESS) in->compute_units = ui;
    if (clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof sz, &sz, NULL) == CL_SUCCESS) in->max_work_group = sz;
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof in->max_work_item, in->max_work_item, NULL);
    if (clGetDeviceInfo(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof ui, &ui, NULL) == CL_SUCCESS)
        in->mem_base_align = ui / 8; /* reported in bits */
    if (in->mem_base_align == 0) in->mem_base_align = 128;
    if (clGetDeviceInfo(d, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof b, &b, NULL) == CL_SUCCESS) in->host_unified = b == CL_TRUE;

    size_t elen = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &elen) == CL_SUCCESS && elen > 0) {
        char *exts = malloc(elen + 1);
        if (exts && clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, elen, exts, NULL) == CL_SUCCESS) {
            exts[elen] = 0;
            in->fp64 = has_ext(exts, "cl_khr_fp64");
            in->fp16 = has_ext(exts, "cl_khr_fp16");
            in->subgroups = has_ext(exts, "cl_khr_subgroups");
        }
        free(exts);
    }
    cl_device_fp_config fp = 0;
    if (!in->fp64 && clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS) in->fp64 = fp != 0;
    fp = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS) in->fp32_denorms = (fp & CL_FP_DENORM) != 0;
    int major = 0, minor = 0;
    const int v3 = sscanf(in->version, "OpenCL %d.%d", &major, &minor) == 2 && major >= 3;
    /* OpenCL 3.0 moved sub-groups into the core as an optional feature: a device may support them
     * with no cl_khr_subgroups in its extensions (Intel's CPU runtime) */
    if (!in->subgroups && v3) {
        size_t fs = 0;
        if (clGetDeviceInfo(d, 0x106F /* CL_DEVICE_OPENCL_C_FEATURES */, 0, NULL, &fs) == CL_SUCCESS && fs >= sizeof(struct name_version)) {
            struct name_version *f = malloc(fs);
            if (f && clGetDeviceInfo(d, 0x106F, fs, f, NULL) == CL_SUCCESS)
                for (size_t i = 0; i < fs / sizeof *f && !in->subgroups; i++)
                    in->subgroups = strcmp(f[i].name, "__opencl_c_subgroups") == 0;
            free(f);
        }
    }
    /* OpenCL 3.0 answers the preferred multiple for the device; older ones only per kernel, which a
     * context asks of a one-line kernel (context.c), until then the vendor's usual width */
    sz = 0;
    if (v3 && clGetDeviceInfo(d, 0x1067 /* CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */, sizeof sz, &sz, NULL) == CL_SUCCESS && sz > 0)
        in->preferred_multiple = sz, e->multiple_known = 1;
    else in->preferred_multiple = guess_multiple(in);
}

static void build_list(void)
{
    cl_uint np = 0;
    cl_platform_id *plats = NULL;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0)) {
        list_status = CLRUN_NO_PLATFORM;
        snprintf(list_err, sizeof list_err,
                 "no OpenCL platform found (clGetPlatformIDs: %s). Install an OpenCL driver: on "
                 "Debian or Ubuntu `apt-get install pocl-opencl-icd` for the CPU, or your GPU "
                 "vendor's OpenCL package. The ICD loader reads the drivers listed in "
                 "/etc/OpenCL/vendors/*.icd, or in the folder named by $OCL_ICD_VENDORS%s%s%s.",
                 clrun_cl_error_name(err == CL_SUCCESS ? -1001 : err), getenv("OCL_ICD_VENDORS") ? " (now: " : "",
                 getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS") : "", getenv("OCL_ICD_VENDORS") ? ")" : "");
        return;
    }
    if (err != CL_SUCCESS) {
        list_status = clrun__cl_status(err);
        snprintf(list_err, sizeof list_err, "listing OpenCL platforms: clGetPlatformIDs failed with %s (%d)", clrun_cl_error_name(err),
                 (int)err);
        return;
    }
    plats = calloc(np, sizeof *plats);
    if (!plats || clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) {
        list_status = CLRUN_HOST_OUT_OF_MEMORY;
        snprintf(list_err, sizeof list_err, "listing OpenCL platforms: out of memory");
        goto done;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        struct entry *grown = realloc(list, (list_n + nd) * sizeof *list);
        if (!devs || !grown) {
            free(devs);
            if (grown) list = grown;
            list_status = CLRUN_HOST_OUT_OF_MEMORY;
            snprintf(list_err, sizeof list_err, "listing OpenCL devices: out of memory");
            goto done;
        }
        list = grown;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL) != CL_SUCCESS) nd = 0;
        char pname[128] = "", pver[128] = "", pvendor[128] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        clGetPlatformInfo(plats[p], CL_PLATFORM_VENDOR, sizeof pvendor - 1, pvendor, NULL);
        clGetPlatformInfo(plats[p], CL_PLATFORM_VERSION, sizeof pver - 1, pver, NULL);
        for (cl_uint d = 0; d < nd; d++) {
            struct entry *e = &list[list_n];
            memset(e, 0, sizeof *e);
            e->platform = plats[p];
            e->device = devs[d];
            e->info.index = list_n;
            e->info.platform_index = p;
            e->info.device_index = d;
            memcpy(e->info.platform_name, pname, sizeof pname);
            memcpy(e->info.platform_version, pver, sizeof pver);
            memcpy(e->info.platform_vendor, pvendor, sizeof pvendor);
            probe(e);
            list_n++;
        }
        free(devs);
    }
    if (list_n == 0) {
        list_status = CLRUN_NO_DEVICE;
        snprintf(list_err, sizeof list_err,
                 "%u OpenCL platform(s) found, but none has a device. Check the driver's installation "
                 "(`clinfo` lists what the loader sees).",
                 (unsigned)np);
    }
done:
    free(plats);
}

static clrun_status ensure_list(void)
{
    pthread_once(&list_once, build_list);
    if (list_status != CLRUN_OK) return clrun__fail(NULL, list_status, "%s", list_err);
    return CLRUN_OK;
}

clrun_status clrun_device_count(unsigned *count)
{
    if (!count) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_device_count: count is NULL");
    *count = 0;
    clrun_status st = ensure_list();
    if (st == CLRUN_OK) *count = list_n;
    return st;
}

clrun_status clrun_device_get(unsigned index, clrun_device_info *out)
{
    clrun_status st = ensure_list();
    if (st != CLRUN_OK) return st;
    if (!out) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_device_get: out is NULL");
    if (index >= list_n) return clrun__fail(NULL, CLRUN_NO_DEVICE, "device index %u is out of range (%u devices)", index, list_n);
    pthread_mutex_lock(&learn_lock);
    *out = list[index].info;
    pthread_mutex_unlock(&learn_lock);
    return CLRUN_OK;
}

int clrun__device_multiple_known(unsigned index)
{
    pthread_mutex_lock(&learn_lock);
    const int known = index < list_n && list[index].multiple_known;
    pthread_mutex_unlock(&learn_lock);
    return known;
}

void clrun__device_learn_multiple(unsigned index, size_t m)
{
    pthread_mutex_lock(&learn_lock);
    if (index < list_n) list[index].info.preferred_multiple = m, list[index].multiple_known = 1;
    pthread_mutex_unlock(&learn_lock);
}

clrun_status clrun__device_handles(unsigned index, cl_platform_id *platform, cl_device_id *device)
{
    clrun_status st = ensure_list();
    if (st != CLRUN_OK) return st;
    if (index >= list_n) return CLRUN_NO_DEVICE;
    *platform = list[index].platform;
    *device = list[index].device;
    return CLRUN_OK;
}

static const char *type_word(clrun_device_type t)
{
    switch (t) {
    case CLRUN_DEVICE_GPU: return "GPU";
    case CLRUN_DEVICE_ACCELERATOR: return "accelerator";
    case CLRUN_DEVICE_CPU: return "CPU";
    default: return "other";
    }
}

void clrun__device_list_text(char *buf, size_t size)
{
    size_t off = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < list_n && off < size; i++) {
        const clrun_device_info *in = &list[i].info;
        int n = snprintf(buf + off, size - off, "\n  %u:%u  %s (%s, %s)", in->platform_index, in->device_index, in->name,
                         type_word(in->type), in->platform_name);
        if (n < 0) break;
        off += (size_t)n;
    }
}

/* Better-ranked first: GPU, accelerator, CPU, other; more global memory; list order. */
static int ranks_before(const clrun_device_info *a, const clrun_device_info *b)
{
    if (a->type != b->type) return a->type < b->type;
    if (a->global_mem != b->global_mem) return a->global_mem > b->global_mem;
    return a->index < b->index;
}

static int icontains(const char *hay, const char *needle, size_t nlen)
{
    size_t hl = strlen(hay);
    if (nlen == 0) return 1;
    for (size_t i = 0; i + nlen <= hl; i++) {
        size_t j = 0;
        while (j < nlen && tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j])) j++;
        if (j == nlen) return 1;
    }
    return 0;
}

static int all_digits(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

static int ieq(const char *a, const char *b)
{
    while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b)) a++, b++;
    return *a == 0 && *b == 0;
}

/* The best-ranked device for which hit(i) holds; *ties counts them all. -1 when none. */
#define BEST_WHERE(hit, ties)                                                                  \
    do {                                                                                       \
        best = -1, *(ties) = 0;                                                                \
        for (unsigned i = 0; i < list_n; i++)                                                  \
            if (hit) {                                                                         \
                ++*(ties);                                                                     \
                if (best < 0 || ranks_before(&list[i].info, &list[best].info)) best = (long)i; \
            }                                                                                  \
    } while (0)

/* Match a spec against the list; returns the index or -1. *ties: how many devices matched it
 * (more than 1 only for type words and bare names, where the best-ranked is taken). */
static long match(const char *spec, unsigned *ties)
{
    long best = -1;
    size_t len = strlen(spec);
    *ties = 0;
    while (len > 0 && isspace((unsigned char)spec[len - 1])) len--;
    while (len > 0 && isspace((unsigned char)*spec)) spec++, len--;
    char word[32];
    if (len < sizeof word) {
        memcpy(word, spec, len);
        word[len] = 0;
        clrun_device_type want = 0;
        if (ieq(word, "gpu")) want = CLRUN_DEVICE_GPU;
        else if (ieq(word, "cpu")) want = CLRUN_DEVICE_CPU;
        else if (ieq(word, "accelerator")) want = CLRUN_DEVICE_ACCELERATOR;
        if (want) {
            BEST_WHERE(list[i].info.type == want, ties);
            return best;
        }
    }
    const char *colon = memchr(spec, ':', len);
    if (!colon) {
        if (all_digits(spec, len)) {
            unsigned long v = strtoul(spec, NULL, 10);
            return v < list_n ? (*ties = 1, (long)v) : -1;
        }
        /* a bare name: the devices' names first, then their platforms' and vendors' ("intel" finds
         * Intel's CPU runtime, whose device is named after the processor) */
        BEST_WHERE(icontains(list[i].info.name, spec, len), ties);
        if (best < 0)
            BEST_WHERE(icontains(list[i].info.platform_name, spec, len) || icontains(list[i].info.platform_vendor, spec, len) ||
                           icontains(list[i].info.vendor, spec, len),
                       ties);
        return best;
    }
    const char *pp = spec, *dp = colon + 1;
    size_t pl = (size_t)(colon - spec), dl = len - pl - 1;
    for (unsigned i = 0; i < list_n; i++) {
        const clrun_device_info *in = &list[i].info;
        int pok = pl == 0              ? in->platform_index == 0
                  : all_digits(pp, pl) ? in->platform_index == strtoul(pp, NULL, 10)
                                       : icontains(in->platform_name, pp, pl) || icontains(in->platform_vendor, pp, pl);
        if (!pok) continue;
        int dok = dl == 0              ? in->device_index == 0
                  : all_digits(dp, dl) ? in->device_index == strtoul(dp, NULL, 10)
                                       : icontains(in->name, dp, dl);
        if (dok) return *ties = 1, i;
    }
    return -1;
}
#undef BEST_WHERE

clrun_status clrun_device_select(const char *spec, unsigned *index, const char **why)
{
    clrun_status st = ensure_list();
    if (st != CLRUN_OK) return st;
    if (!index) return clrun__fail(NULL, CLRUN_INVALID_ARG, "clrun_device_select: index is NULL");
    const char *source = "selection string";
    if (!spec || !*spec) {
        spec = clrun__setting_text(CLRUN__SET_DEVICE);
        source = "$CLRUN_DEVICE";
    }
    if (!spec || !*spec) {
        unsigned best = 0;
        for (unsigned i = 1; i < list_n; i++)
            if (ranks_before(&list[i].info, &list[best].info)) best = i;
        *index = best;
        if (why) *why = "ranking";
        return CLRUN_OK;
    }
    unsigned ties = 0;
    long i = match(spec, &ties);
    if (i < 0) {
        char text[4096];
        clrun__device_list_text(text, sizeof text);
        return clrun__fail(NULL, CLRUN_NO_DEVICE,
                           "no OpenCL device matches '%s' (from %s). A selection is PLATFORM:DEVICE "
                           "(index or name substring each), an index or name substring, or gpu, "
                           "cpu, accelerator. Devices:%s",
                           spec, source, text);
    }
    *index = (unsigned)i;
    if (why)
        *why = ties < 2           ? source
               : source[0] == '$' ? "$CLRUN_DEVICE, which several devices match: the best-ranked taken"
                                  : "selection string, which several devices match: the best-ranked taken";
    if (ties > 1 && clrun__verbose())
        fprintf(stderr, "clrun: '%s' matches %u devices; taking the best-ranked, %s (%u:%u)\n", spec, ties, list[i].info.name,
                list[i].info.platform_index, list[i].info.device_index);
    return CLRUN_OK;
}
