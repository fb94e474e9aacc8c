/* translate.c — CUDA kernel text to OpenCL C 1.2, on libclang's parse (work in progress).
 *
 * The CUDA source is parsed by clang as CUDA device code (-x cuda --cuda-device-only -nocudainc
 * -nocudalib) with a prelude of declarations (the built-in variables, __syncthreads, the atomics and
 * math functions) included ahead of it, so the user's offsets and lines are the file's own. The AST
 * is walked and the source rewritten by edits at byte ranges the AST gives: never by scanning text.
 *
 *   extern "C" { … }                   the linkage removed (OpenCL C has none)
 *   __global__ void f(T *p)            __kernel void f(__global T *p)
 *   __device__ T g(U *p)               T g(__global U *p) (pointers of device functions: global memory)
 *   __shared__ T s[N] (in a function)  __local T s[N]
 *   __constant__ T c[N] (file scope)   __constant T c[N]
 *   threadIdx.x, blockIdx.y, …         ((unsigned)get_local_id(0)), ((unsigned)get_group_id(1)), …
 *   __syncthreads()                    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
 *   atomicAdd(float *, float)          clrun_atomic_add_f32(…) (compare-and-swap), by the pointee type
 *   sinf, __expf, rsqrtf, fmaf, …      OpenCL's built-ins, through macros in the emitted prelude
 *
 * Anything else clang accepts but this cannot express is refused with the file, line and construct:
 * templates, lambdas, references other than device functions' parameters, new/delete, classes with
 * member functions, kernel launches in device code, pointers to pointers (docs/CUDA_TEXT.md has the
 * whole table, README.md here how it works). */
#define _POSIX_C_SOURCE 200809L
#include <clang-c/Index.h>
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include.h"
#include "translate.h"
#if __has_include("cudatext_config.h")
#include "cudatext_config.h"
#endif

/* libclang, loaded with dlopen on first use (no link dependency, nothing loaded by programs that
 * never translate): the functions used here. Its C interface is stable, so any libclang from 14 on. */
#define LIBCLANG_FUNCTIONS(X)                        \
    X(clang_Cursor_getArgument)                      \
    X(clang_Cursor_getNumArguments)                  \
    X(clang_Cursor_getStorageClass)                  \
    X(clang_Cursor_isNull)                           \
    X(clang_getArgType)                              \
    X(clang_Cursor_getNumTemplateArguments)          \
    X(clang_Cursor_getTemplateArgumentKind)          \
    X(clang_Cursor_getTemplateArgumentType)          \
    X(clang_Cursor_getTemplateArgumentValue)         \
    X(clang_Cursor_getTemplateArgumentUnsignedValue) \
    X(clang_getSpecializedCursorTemplate)            \
    X(clang_getNumOverloadedDecls)                   \
    X(clang_getOverloadedDecl)                       \
    X(clang_getCursorSemanticParent)                 \
    X(clang_createIndex)                             \
    X(clang_disposeDiagnostic)                       \
    X(clang_disposeIndex)                            \
    X(clang_disposeString)                           \
    X(clang_disposeTokens)                           \
    X(clang_disposeTranslationUnit)                  \
    X(clang_equalCursors)                            \
    X(clang_getArrayElementType)                     \
    X(clang_getArraySize)                            \
    X(clang_Type_getSizeOf)                          \
    X(clang_getCString)                              \
    X(clang_getCanonicalType)                        \
    X(clang_getCursorDefinition)                     \
    X(clang_getCursorExtent)                         \
    X(clang_getCursorKind)                           \
    X(clang_getCursorLocation)                       \
    X(clang_getCursorReferenced)                     \
    X(clang_getCursorSpelling)                       \
    X(clang_getCursorType)                           \
    X(clang_getDiagnostic)                           \
    X(clang_getDiagnosticLocation)                   \
    X(clang_getDiagnosticSeverity)                   \
    X(clang_getDiagnosticSpelling)                   \
    X(clang_getExpansionLocation)                    \
    X(clang_getSpellingLocation)                     \
    X(clang_getFile)                                 \
    X(clang_getLocationForOffset)                    \
    X(clang_Cursor_getMangling)                      \
    X(clang_getIncludedFile)                         \
    X(clang_getFileName)                             \
    X(clang_getNullCursor)                           \
    X(clang_getNumDiagnostics)                       \
    X(clang_getPointeeType)                          \
    X(clang_getRange)                                \
    X(clang_getRangeEnd)                             \
    X(clang_getRangeStart)                           \
    X(clang_getResultType)                           \
    X(clang_getTokenExtent)                          \
    X(clang_getTokenKind)                            \
    X(clang_getTokenLocation)                        \
    X(clang_getTokenSpelling)                        \
    X(clang_getTranslationUnitCursor)                \
    X(clang_getTypeSpelling)                         \
    X(clang_isConstQualifiedType)                    \
    X(clang_isCursorDefinition)                      \
    X(clang_isExpression)                            \
    X(clang_parseTranslationUnit2)                   \
    X(clang_tokenize)                                \
    X(clang_visitChildren)

static struct {
#define FIELD(f) __typeof__(&f) f;
    LIBCLANG_FUNCTIONS(FIELD)
#undef FIELD
    int ok;
    char why[256];
} lc;
static pthread_once_t lc_once = PTHREAD_ONCE_INIT;

#ifndef CLRUN_LIBCLANG
#define CLRUN_LIBCLANG "libclang.so.1"
#endif

static void lc_load(void)
{
    /* the one whose headers this was built with first: libclang 16 visits no file-scope function's
     * children here (to be understood: README.md here) */
    static const char *const names[] = {CLRUN_LIBCLANG, "libclang-14.so.1", "libclang.so.1"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lc.why, sizeof lc.why, "libclang could not be loaded (%s; Debian: libclang1-14 or newer)", dlerror());
        return;
    }
#define SYM(f)                                                                                 \
    if (!(*(void **)&lc.f = dlsym(h, #f))) {                                                   \
        snprintf(lc.why, sizeof lc.why, "the libclang loaded has no %s (older than 14?)", #f); \
        return;                                                                                \
    }
    LIBCLANG_FUNCTIONS(SYM)
#undef SYM
    lc.ok = 1; /* loaded for the process */
}

static const char prelude_cuda[] =
    "#define __global__ __attribute__((global))\n"
    "#define __device__ __attribute__((device))\n"
    "#define __host__ __attribute__((host))\n"
    "#define __shared__ __attribute__((shared))\n"
    "#define __constant__ __attribute__((constant))\n"
    "#define __restrict__ __restrict\n"
    "#define __forceinline__ inline\n"
    "#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))\n"
    "#define __noinline__ __attribute__((noinline))\n"
    "#define INT_MAX 2147483647\n#define INT_MIN (-INT_MAX - 1)\n#define UINT_MAX 0xffffffffu\n#define CHAR_BIT 8\n"
    "#define SHRT_MAX 32767\n#define SHRT_MIN (-32768)\n#define USHRT_MAX 65535\n#define UCHAR_MAX 255\n#define SCHAR_MAX 127\n"
    "#define SCHAR_MIN (-128)\n#define LONG_MAX 0x7fffffffffffffffL\n#define LONG_MIN (-LONG_MAX - 1)\n"
    "#define ULONG_MAX 0xffffffffffffffffUL\n#define FLT_MAX 3.402823466e+38F\n#define FLT_MIN 1.175494351e-38F\n"
    "#define FLT_EPSILON 1.192092896e-07F\n#define DBL_MAX 1.7976931348623158e+308\n#define DBL_MIN 2.2250738585072014e-308\n"
    "#define DBL_EPSILON 2.2204460492503131e-16\n#define INFINITY __builtin_huge_valf()\n#define NAN __builtin_nanf(\"\")\n"
    "#define M_PI 3.14159265358979323846\n#define M_E 2.7182818284590452354\n#define M_SQRT2 1.41421356237309504880\n"
    "#define M_LN2 0.69314718055994530942\n#define M_PI_2 1.57079632679489661923\n#define M_PI_4 0.78539816339744830962\n"
    "#define M_1_PI 0.31830988618379067154\n#define M_2_PI 0.63661977236758134308\n#define M_LOG2E 1.4426950408889634074\n"
    "#define M_LOG10E 0.43429448190325182765\n#define M_LN10 2.30258509299404568402\n#define M_SQRT1_2 0.70710678118654752440\n"
    "#define M_2_SQRTPI 1.12837916709551257390\n"
    "#define CUDART_PI_F 3.141592654f\n#define CUDART_PI 3.1415926535897931e+0\n#define CUDART_INF_F __builtin_huge_valf()\n"
    "#define CUDART_NAN_F __builtin_nanf(\"\")\n"
    "#define assert(x) ((void)(x))\n"
    "struct uint3 { unsigned x, y, z; };\n"
    "struct dim3 { unsigned x, y, z; __host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };\n"
    "typedef struct CUstream_st *cudaStream_t; typedef int cudaError_t;\n"
    "extern \"C\" cudaError_t cudaConfigureCall(dim3, dim3, unsigned long = 0, cudaStream_t = 0);\n"
    "extern const __device__ uint3 threadIdx, blockIdx;\n"
    "extern const __device__ dim3 blockDim, gridDim;\n"
    "extern const __device__ int warpSize;\n"
    "__device__ void __syncthreads(void);\n"
    "__device__ int atomicAdd(int *, int); __device__ unsigned atomicAdd(unsigned *, unsigned);\n"
    "__device__ float atomicAdd(float *, float);\n"
    "__device__ int atomicSub(int *, int); __device__ unsigned atomicSub(unsigned *, unsigned);\n"
    "__device__ int atomicExch(int *, int); __device__ unsigned atomicExch(unsigned *, unsigned);\n"
    "__device__ float atomicExch(float *, float);\n"
    "__device__ int atomicMin(int *, int); __device__ unsigned atomicMin(unsigned *, unsigned);\n"
    "__device__ int atomicMax(int *, int); __device__ unsigned atomicMax(unsigned *, unsigned);\n"
    "__device__ unsigned atomicInc(unsigned *, unsigned); __device__ unsigned atomicDec(unsigned *, unsigned);\n"
    "__device__ int atomicCAS(int *, int, int); __device__ unsigned atomicCAS(unsigned *, unsigned, unsigned);\n"
    "__device__ int atomicAnd(int *, int); __device__ unsigned atomicAnd(unsigned *, unsigned);\n"
    "__device__ int atomicOr(int *, int); __device__ unsigned atomicOr(unsigned *, unsigned);\n"
    "__device__ int atomicXor(int *, int); __device__ unsigned atomicXor(unsigned *, unsigned);\n"
    "__device__ float sinf(float); __device__ float cosf(float); __device__ float tanf(float);\n"
    "__device__ float expf(float); __device__ float logf(float); __device__ float sqrtf(float);\n"
    "__device__ float rsqrtf(float); __device__ float fabsf(float); __device__ float powf(float, float);\n"
    "__device__ float fmaf(float, float, float); __device__ float fminf(float, float);\n"
    "__device__ float fmaxf(float, float); __device__ float floorf(float); __device__ float ceilf(float);\n"
    "__device__ float __expf(float); __device__ float __logf(float); __device__ float __sinf(float);\n"
    "__device__ float __cosf(float); __device__ float __fdividef(float, float); __device__ float tanhf(float);\n"
    "__device__ float exp2f(float); __device__ float log2f(float); __device__ float atan2f(float, float);\n"
    "__device__ int min(int, int); __device__ int max(int, int);\n"
    "typedef unsigned int uint; typedef unsigned char uchar; typedef unsigned short ushort; typedef unsigned long ulong;\n"
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long long int64_t;\n"
    "typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t; typedef unsigned long long uint64_t;\n"
    "typedef unsigned long size_t;\n"
    "#define CLRUN_SHFL(T)                                                                             \\\n"
    "    __device__ T __shfl_sync(unsigned, T, int, int = 32);                                         \\\n"
    "    __device__ T __shfl_up_sync(unsigned, T, unsigned, int = 32);                                 \\\n"
    "    __device__ T __shfl_down_sync(unsigned, T, unsigned, int = 32);                               \\\n"
    "    __device__ T __shfl_xor_sync(unsigned, T, int, int = 32);\n"
    "CLRUN_SHFL(int) CLRUN_SHFL(unsigned) CLRUN_SHFL(float) CLRUN_SHFL(long) CLRUN_SHFL(unsigned long)\n"
    "CLRUN_SHFL(long long) CLRUN_SHFL(unsigned long long) CLRUN_SHFL(double)\n"
    "#undef CLRUN_SHFL\n"
    "__device__ unsigned __ballot_sync(unsigned, int); __device__ int __any_sync(unsigned, int); __device__ int __all_sync(unsigned, "
    "int);\n"
    "__device__ unsigned __activemask(void); __device__ void __syncwarp(unsigned = 0xffffffff);\n"
    "typedef long clock_t; __device__ clock_t clock(void); __device__ long long clock64(void);\n"
    "__device__ void __threadfence(void); __device__ void __threadfence_block(void);\n"
    "typedef unsigned long long cudaTextureObject_t; typedef unsigned long long CUtexObject;\n"
    "typedef unsigned long long cudaSurfaceObject_t;\n"
    "template <class T> __device__ T tex1D(cudaTextureObject_t, float); template <class T> __device__ T tex1Dfetch(cudaTextureObject_t, "
    "int);\n"
    "template <class T> __device__ T tex2D(cudaTextureObject_t, float, float);\n"
    "template <class T> __device__ T tex3D(cudaTextureObject_t, float, float, float);\n"
    "__device__ int __mul24(int, int); __device__ unsigned __umul24(unsigned, unsigned);\n"
    "__device__ float __saturatef(float); __device__ float __fmul_rn(float, float); __device__ float __fadd_rn(float, float);\n"
    "extern \"C\" __host__ __device__ int printf(const char *, ...);\n"
    "struct __attribute__((aligned(8))) float2 { float x, y; }; struct __attribute__((aligned(16))) float4 { float x, y, z, w; };\n"
    "struct __attribute__((aligned(8))) int2 { int x, y; }; struct __attribute__((aligned(16))) int4 { int x, y, z, w; };\n"
    "struct __attribute__((aligned(8))) uint2 { unsigned x, y; }; struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };\n"
    "struct __attribute__((aligned(4))) uchar4 { unsigned char x, y, z, w; };\n"
    "__device__ float2 make_float2(float, float); __device__ float4 make_float4(float, float, float, float);\n"
    "__device__ int2 make_int2(int, int); __device__ int4 make_int4(int, int, int, int);\n"
    "__device__ uint2 make_uint2(unsigned, unsigned); __device__ uint4 make_uint4(unsigned, unsigned, unsigned, unsigned);\n"
    "__device__ uchar4 make_uchar4(unsigned char, unsigned char, unsigned char, unsigned char);\n"
    "__device__ float __ldg(const float *); __device__ int __ldg(const int *); __device__ unsigned __ldg(const unsigned *);\n"
    "__device__ float4 __ldg(const float4 *); __device__ float2 __ldg(const float2 *);\n"
    "__device__ float sinf(float); __device__ float cosf(float); __device__ float tanf(float); __device__ float asinf(float);\n"
    "__device__ float acosf(float); __device__ float atanf(float); __device__ float sinhf(float); __device__ float coshf(float);\n"
    "__device__ float asinhf(float); __device__ float acoshf(float); __device__ float atanhf(float); __device__ float log10f(float);\n"
    "__device__ float expm1f(float); __device__ float log1pf(float); __device__ float cbrtf(float); __device__ float rcbrtf(float);\n"
    "__device__ float truncf(float); __device__ float roundf(float); __device__ float rintf(float); __device__ float nearbyintf(float);\n"
    "__device__ float erff(float); __device__ float erfcf(float); __device__ float lgammaf(float); __device__ float tgammaf(float);\n"
    "__device__ float logbf(float); __device__ float sinpif(float); __device__ float cospif(float); __device__ float exp10f(float);\n"
    "__device__ float __tanf(float); __device__ float __log2f(float); __device__ float __log10f(float); __device__ float __exp10f(float);\n"
    "__device__ float __frcp_rn(float); __device__ float __fsqrt_rn(float); __device__ float __frsqrt_rn(float);\n"
    "__device__ float fmodf(float, float); __device__ float hypotf(float, float); __device__ float copysignf(float, float); __device__ "
    "float fdimf(float, float);\n"
    "__device__ float remainderf(float, float); __device__ float nextafterf(float, float); __device__ float __powf(float, float); "
    "__device__ float __fdiv_rn(float, float);\n"
    "__device__ float __fsub_rn(float, float); __device__ float __fmul_rz(float, float); __device__ float __fadd_rz(float, float);\n"
    "__device__ float __fmaf_rn(float, float, float); __device__ void sincosf(float, float *, float *); __device__ void __sincosf(float, "
    "float *, float *);\n"
    "__device__ double sin(double); __device__ float sin(float); __device__ double cos(double); __device__ float cos(float); __device__ "
    "double tan(double); __device__ float tan(float); __device__ double asin(double); __device__ float asin(float);\n"
    "__device__ double acos(double); __device__ float acos(float); __device__ double atan(double); __device__ float atan(float); "
    "__device__ double sinh(double); __device__ float sinh(float); __device__ double cosh(double); __device__ float cosh(float);\n"
    "__device__ double tanh(double); __device__ float tanh(float); __device__ double asinh(double); __device__ float asinh(float); "
    "__device__ double acosh(double); __device__ float acosh(float); __device__ double atanh(double); __device__ float atanh(float);\n"
    "__device__ double exp(double); __device__ float exp(float); __device__ double exp2(double); __device__ float exp2(float); __device__ "
    "double exp10(double); __device__ float exp10(float); __device__ double expm1(double); __device__ float expm1(float);\n"
    "__device__ double log(double); __device__ float log(float); __device__ double log2(double); __device__ float log2(float); __device__ "
    "double log10(double); __device__ float log10(float); __device__ double log1p(double); __device__ float log1p(float);\n"
    "__device__ double sqrt(double); __device__ float sqrt(float); __device__ double rsqrt(double); __device__ float rsqrt(float); "
    "__device__ double cbrt(double); __device__ float cbrt(float); __device__ double fabs(double); __device__ float fabs(float);\n"
    "__device__ double floor(double); __device__ float floor(float); __device__ double ceil(double); __device__ float ceil(float); "
    "__device__ double trunc(double); __device__ float trunc(float); __device__ double round(double); __device__ float round(float);\n"
    "__device__ double rint(double); __device__ float rint(float); __device__ double erf(double); __device__ float erf(float); __device__ "
    "double erfc(double); __device__ float erfc(float); __device__ double lgamma(double); __device__ float lgamma(float);\n"
    "__device__ double tgamma(double); __device__ float tgamma(float);\n"
    "__device__ double pow(double, double); __device__ float pow(float, float); __device__ double atan2(double, double); __device__ float "
    "atan2(float, float); __device__ double fmod(double, double); __device__ float fmod(float, float); __device__ double hypot(double, "
    "double); __device__ float hypot(float, float);\n"
    "__device__ double copysign(double, double); __device__ float copysign(float, float); __device__ double fdim(double, double); "
    "__device__ float fdim(float, float); __device__ double fmin(double, double); __device__ float fmin(float, float); __device__ double "
    "fmax(double, double); __device__ float fmax(float, float);\n"
    "__device__ double remainder(double, double); __device__ float remainder(float, float); __device__ double nextafter(double, double); "
    "__device__ float nextafter(float, float);\n"
    "__device__ double fma(double, double, double); __device__ float fma(float, float, float); __device__ int abs(int); __device__ long "
    "labs(long); __device__ long long llabs(long long); __device__ long abs(long); __device__ long long abs(long long); __device__ "
    "unsigned min(unsigned, unsigned); __device__ unsigned max(unsigned, unsigned);\n"
    "__device__ long long min(long long, long long); __device__ long long max(long long, long long); __device__ unsigned long long "
    "min(unsigned long long, unsigned long long); __device__ unsigned long long max(unsigned long long, unsigned long long); __device__ "
    "float min(float, float); __device__ float max(float, float);\n"
    "__device__ double min(double, double); __device__ double max(double, double); __device__ int __popc(unsigned); __device__ int "
    "__popcll(unsigned long long); __device__ int __clz(int); __device__ int __clzll(long long); __device__ int __ffs(int); __device__ "
    "unsigned __brev(unsigned); __device__ unsigned __umulhi(unsigned, unsigned); __device__ int __mulhi(int, int);\n"
    "__device__ int __float_as_int(float); __device__ float __int_as_float(int); __device__ unsigned __float_as_uint(float); __device__ "
    "float __uint_as_float(unsigned); __device__ int __float2int_rn(float); __device__ int __float2int_rz(float); __device__ int "
    "__float2int_rd(float); __device__ int __float2int_ru(float); __device__ unsigned __float2uint_rn(float); __device__ unsigned "
    "__float2uint_rz(float);\n"
    "__device__ float __int2float_rn(int); __device__ float __uint2float_rn(unsigned); __device__ unsigned long long atomicAdd(unsigned "
    "long long *, unsigned long long); __device__ unsigned long long atomicExch(unsigned long long *, unsigned long long); __device__ "
    "unsigned long long atomicCAS(unsigned long long *, unsigned long long, unsigned long long);\n"
    "__device__ unsigned long long atomicMin(unsigned long long *, unsigned long long); __device__ unsigned long long atomicMax(unsigned "
    "long long *, unsigned long long); __device__ unsigned long long atomicAnd(unsigned long long *, unsigned long long); __device__ "
    "unsigned long long atomicOr(unsigned long long *, unsigned long long);\n"
    "__device__ unsigned long long atomicXor(unsigned long long *, unsigned long long); __device__ long long atomicMin(long long *, long "
    "long); __device__ long long atomicMax(long long *, long long); __device__ double atomicAdd(double *, double); __device__ int "
    "__syncthreads_count(int); __device__ int __syncthreads_and(int); __device__ int __syncthreads_or(int);\n"
    "struct float3 { float x, y, z; }; struct int3 { int x, y, z; }; struct __attribute__((aligned(16))) double2 { double x, y; }; struct "
    "__attribute__((aligned(2))) uchar2 { unsigned char x, y; }; struct __attribute__((aligned(4))) char4 { signed char x, y, z, w; }; "
    "struct __attribute__((aligned(4))) short2 { short x, y; }; struct __attribute__((aligned(8))) short4 { short x, y, z, w; }; struct "
    "__attribute__((aligned(4))) ushort2 { unsigned short x, y; };\n"
    "struct __attribute__((aligned(16))) long2 { long x, y; }; struct __attribute__((aligned(16))) ulong2 { unsigned long x, y; }; "
    "__device__ float3 make_float3(float, float, float); __device__ int3 make_int3(int, int, int); __device__ uint3 make_uint3(unsigned, "
    "unsigned, unsigned); __device__ double2 make_double2(double, double); __device__ uchar2 make_uchar2(unsigned char, unsigned char);\n"
    "__device__ char4 make_char4(signed char, signed char, signed char, signed char); __device__ short2 make_short2(short, short); "
    "__device__ double __ldg(const double *); __device__ int2 __ldg(const int2 *); __device__ int4 __ldg(const int4 *); __device__ "
    "unsigned char __ldg(const unsigned char *); __device__ uint2 __ldg(const uint2 *); __device__ uint4 __ldg(const uint4 *);\n";

/* <cooperative_groups.h>: the block-level group is translated (sync, thread_rank, size, indices); the
 * rest is declared so that its use is refused by name. */
static const char cg_name[] = "/clrun-cuda/include/cooperative_groups.h";
static const char cg_header[] =
    "#pragma once\n"
    "namespace cooperative_groups {\n"
    "struct thread_block {\n"
    "    __device__ void sync() const; __device__ unsigned thread_rank() const; __device__ unsigned size() const;\n"
    "    __device__ unsigned num_threads() const; __device__ dim3 group_index() const; __device__ dim3 thread_index() const;\n"
    "    __device__ dim3 group_dim() const; __device__ dim3 dim_threads() const;\n"
    "};\n"
    "__device__ thread_block this_thread_block(); __device__ void sync(const thread_block &);\n"
    "struct grid_group { __device__ void sync() const; __device__ unsigned long long thread_rank() const; };\n"
    "__device__ grid_group this_grid(); __device__ void sync(const grid_group &);\n"
    "struct coalesced_group { __device__ void sync() const; __device__ unsigned thread_rank() const; __device__ unsigned size() const; };\n"
    "__device__ coalesced_group coalesced_threads();\n"
    "template <unsigned N, class P = void> struct thread_block_tile {\n"
    "    __device__ void sync() const; __device__ unsigned thread_rank() const; __device__ unsigned size() const;\n"
    "    __device__ unsigned meta_group_rank() const; __device__ unsigned meta_group_size() const;\n"
    "    template <class T> __device__ T shfl(T, int) const; template <class T> __device__ T shfl_down(T, unsigned) const;\n"
    "    template <class T> __device__ T shfl_up(T, unsigned) const; template <class T> __device__ T shfl_xor(T, unsigned) const;\n"
    "    __device__ int any(int) const; __device__ int all(int) const; __device__ unsigned ballot(int) const;\n"
    "};\n"
    "template <unsigned N, class P> __device__ thread_block_tile<N> tiled_partition(const P &);\n"
    "__device__ thread_block tiled_partition(const thread_block &, unsigned);\n"
    "template <class G> __device__ void sync(const G &);\n"
    "template <unsigned N> struct block_tile_memory { unsigned char clrun_space[N]; };\n"
    "template <unsigned N> __device__ thread_block this_thread_block(block_tile_memory<N> &);\n"
    "template <class T> struct plus { __device__ T operator()(T, T) const; };\n"
    "template <class T> struct less { __device__ T operator()(T, T) const; };\n"
    "template <class T> struct greater { __device__ T operator()(T, T) const; };\n"
    "template <class T> struct bit_and { __device__ T operator()(T, T) const; };\n"
    "template <class T> struct bit_or { __device__ T operator()(T, T) const; };\n"
    "template <class T> struct bit_xor { __device__ T operator()(T, T) const; };\n"
    "template <class G, class T, class Op> __device__ T reduce(const G &, T, Op);\n"
    "template <class G, class T, class Op> __device__ T inclusive_scan(const G &, T, Op);\n"
    "template <class G, class T, class Op> __device__ T exclusive_scan(const G &, T, Op);\n"
    "}\n";
/* <cooperative_groups/reduce.h>, <cooperative_groups/scan.h>: declared with the rest (cg_header) so
 * that a source's unused templates may call them; a use is refused by name. */
static const char cg_reduce_name[] = "/clrun-cuda/include/cooperative_groups/reduce.h",
                  cg_scan_name[] = "/clrun-cuda/include/cooperative_groups/scan.h", cg_more[] = "#include <cooperative_groups.h>\n";

/* The OpenCL C the translation starts with: the CUDA names OpenCL spells differently. */
static const char prelude_cl[] =
    "/* translated from CUDA by clrun */\n"
    "#define CLRUN_WCAT2(a, b) a##b\n#define CLRUN_WCAT(a, b) CLRUN_WCAT2(a, b)\n"
    "#define sinf sin\n#define cosf cos\n#define tanf tan\n#define expf exp\n#define logf log\n"
    "#define sqrtf sqrt\n#define rsqrtf rsqrt\n#define fabsf fabs\n#define powf pow\n#define fmaf fma\n"
    "#define fminf fmin\n#define fmaxf fmax\n#define floorf floor\n#define ceilf ceil\n#define tanhf tanh\n"
    "#define exp2f exp2\n#define log2f log2\n#define atan2f atan2\n"
    "#define __expf native_exp\n#define __logf native_log\n#define __sinf native_sin\n#define __cosf native_cos\n"
    "#define __fdividef native_divide\n#define __mul24(a, b) mul24((int)(a), (int)(b))\n#define __umul24(a, b) mul24((uint)(a), "
    "(uint)(b))\n#define __saturatef(x) clamp((x), 0.0f, 1.0f)\n"
    "#define __fmul_rn(a, b) ((a) * (b))\n#define __fadd_rn(a, b) ((a) + (b))\n"
    "#define CUDART_PI_F 3.141592654f\n#define CUDART_PI M_PI\n#define CUDART_INF_F INFINITY\n#define CUDART_NAN_F NAN\n"
    "#define assert(x) ((x) ? (void)0 : (void)printf(\"%s:%d: assertion '%s' failed\\n\", __FILE__, __LINE__, #x))\n"
    "#define asinf asin\n#define acosf acos\n#define atanf atan\n#define sinhf sinh\n#define coshf cosh\n"
    "#define asinhf asinh\n#define acoshf acosh\n#define atanhf atanh\n#define log10f log10\n"
    "#define expm1f expm1\n#define log1pf log1p\n#define cbrtf cbrt\n#define truncf trunc\n"
    "#define roundf round\n#define rintf rint\n#define nearbyintf rint\n#define erff erf\n"
    "#define erfcf erfc\n#define lgammaf lgamma\n#define tgammaf tgamma\n#define logbf logb\n"
    "#define sinpif sinpi\n#define cospif cospi\n#define exp10f exp10\n#define fmodf fmod\n"
    "#define hypotf hypot\n#define copysignf copysign\n#define fdimf fdim\n#define remainderf remainder\n"
    "#define nextafterf nextafter\n#define __tanf native_tan\n#define __log2f native_log2\n"
    "#define __log10f native_log10\n#define __exp10f native_exp10\n#define __powf pow\n"
    "#define __fsqrt_rn sqrt\n#define __frsqrt_rn rsqrt\n#define __fmaf_rn fma\n"
    "#define __float_as_int as_int\n#define __int_as_float as_float\n#define __float_as_uint as_uint\n"
    "#define __uint_as_float as_float\n#define __float2int_rn convert_int_rte\n"
    "#define __float2int_rz convert_int_rtz\n#define __float2int_rd convert_int_rtn\n"
    "#define __float2int_ru convert_int_rtp\n#define __float2uint_rn convert_uint_rte\n"
    "#define __float2uint_rz convert_uint_rtz\n#define __int2float_rn convert_float_rte\n"
    "#define __uint2float_rn convert_float_rte\n"
    "#define rcbrtf(x) (1.0f / cbrt(x))\n#define __frcp_rn(x) (1.0f / (x))\n#define __fdiv_rn(a, b) ((a) / (b))\n"
    "#define __fsub_rn(a, b) ((a) - (b))\n#define __fmul_rz(a, b) ((a) * (b))\n#define __fadd_rz(a, b) ((a) + (b))\n"
    "#define sincosf(x, s, c) (*(s) = sincos((x), (c)))\n#define __sincosf(x, s, c) (*(s) = native_sin(x), *(c) = native_cos(x))\n"
    "#define __popc(x) ((int)popcount((uint)(x)))\n#define __popcll(x) ((int)popcount((ulong)(x)))\n"
    "#define __clz(x) ((int)clz((int)(x)))\n#define __clzll(x) ((int)clz((long)(x)))\n"
    "#define __umulhi(a, b) mul_hi((uint)(a), (uint)(b))\n#define __mulhi(a, b) mul_hi((int)(a), (int)(b))\n"
    "#define labs(x) ((long)abs((long)(x)))\n#define llabs(x) ((long)abs((long)(x)))\n"
    "static int clrun_ffs(int x) { return x == 0 ? 0 : 32 - (int)clz(x & -x); }\n#define __ffs clrun_ffs\n"
    "static uint clrun_brev(uint x)\n"
    "{\n"
    "    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);\n"
    "    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);\n"
    "    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);\n"
    "    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);\n"
    "    return (x >> 16) | (x << 16);\n"
    "}\n#define __brev clrun_brev\n"
    "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n"
    "#ifdef cl_khr_int64_base_atomics\n#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n#endif\n"
    "#ifdef cl_khr_int64_extended_atomics\n#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n#endif\n"
    "#if defined(cl_khr_fp64) && defined(cl_khr_int64_base_atomics)\n"
    "static double clrun_atomic_add_f64(volatile __global double *p, double v)\n"
    "{\n"
    "    ulong old, next;\n"
    "    do {\n"
    "        old = as_ulong(*p);\n"
    "        next = as_ulong(as_double(old) + v);\n"
    "    } while (atom_cmpxchg((volatile __global ulong *)p, old, next) != old);\n"
    "    return as_double(old);\n"
    "}\n"
    "static double clrun_atomic_add_f64_l(volatile __local double *p, double v)\n"
    "{\n"
    "    ulong old, next;\n"
    "    do {\n"
    "        old = as_ulong(*p);\n"
    "        next = as_ulong(as_double(old) + v);\n"
    "    } while (atom_cmpxchg((volatile __local ulong *)p, old, next) != old);\n"
    "    return as_double(old);\n"
    "}\n"
    "#endif\n"
    "typedef char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long int64_t;\n"
    "typedef uchar uint8_t;\ntypedef ushort uint16_t;\ntypedef uint uint32_t;\ntypedef ulong uint64_t;\n#define __restrict__ "
    "restrict\n#define __forceinline__ inline\n"
    "#define __launch_bounds__(...)\n#define __noinline__ __attribute__((noinline))\n"
    "static float clrun_atomic_add_f32(volatile __global float *p, float v)\n"
    "{\n"
    "    union { unsigned u; float f; } old, next;\n"
    "    do {\n"
    "        old.f = *p;\n"
    "        next.f = old.f + v;\n"
    "    } while (atomic_cmpxchg((volatile __global unsigned *)p, old.u, next.u) != old.u);\n"
    "    return old.f;\n"
    "}\n"
    "static float clrun_atomic_xchg_f32(volatile __global float *p, float v) { return atomic_xchg(p, v); }\n"
    "static float clrun_atomic_add_f32_l(volatile __local float *p, float v)\n"
    "{\n"
    "    union { unsigned u; float f; } old, next;\n"
    "    do {\n"
    "        old.f = *p;\n"
    "        next.f = old.f + v;\n"
    "    } while (atomic_cmpxchg((volatile __local unsigned *)p, old.u, next.u) != old.u);\n"
    "    return old.f;\n"
    "}\n"
    "static float clrun_atomic_xchg_f32_l(volatile __local float *p, float v) { return atomic_xchg(p, v); }\n"
    "#define CLRUN_WRAP(name, space, step)                                                  \\\n"
    "    static unsigned name(volatile space unsigned *p, unsigned bound)                   \\\n"
    "    {                                                                                  \\\n"
    "        unsigned old;                                                                  \\\n"
    "        do old = *p;                                                                   \\\n"
    "        while (atomic_cmpxchg(p, old, step) != old);                                   \\\n"
    "        return old;                                                                    \\\n"
    "    }\n"
    "CLRUN_WRAP(clrun_atomic_inc_u32, __global, old >= bound ? 0u : old + 1u)\n"
    "CLRUN_WRAP(clrun_atomic_inc_u32_l, __local, old >= bound ? 0u : old + 1u)\n"
    "CLRUN_WRAP(clrun_atomic_dec_u32, __global, (old == 0u || old > bound) ? bound : old - 1u)\n"
    "CLRUN_WRAP(clrun_atomic_dec_u32_l, __local, (old == 0u || old > bound) ? bound : old - 1u)\n";

struct edit {
    unsigned start, end; /* the byte range replaced */
    char *text;
};

struct tr {
    CXTranslationUnit tu;
    CXFile file;
    const char *src;
    size_t len;
    const char *name;
    struct edit *e;
    size_t n, cap;
    char *err;
    size_t errn;
    int failed;
    int collect; /* 1: the first passes, spaces gathered and nothing edited */
    struct var {
        CXCursor decl;
        int space; /* SP_* bits: where a pointer (or array) variable points */
    } * vars;
    size_t nvars, capvars;
    struct fparam {
        CXCursor fn; /* a device function (its definition) */
        unsigned index;
        int seen;    /* SP_* bits of the arguments passed at its calls (this pass) */
        int decided; /* … the last pass's: what the parameter is declared with */
    } * fparams;
    size_t nfparams, capfparams;
    int changed;
    struct hoist {
        CXCursor decl;
        int scalar;
        char name[64], param[160], what[96]; /* "__local float *s", "dynamic __shared__ float" */
    } hoists[32];
    int nhoists;
    CXCursor cur_fn;
    int in_kernel;
    unsigned body_open; /* the current function's body: just after its '{' */
    CXCursor top[256];  /* … its outermost statements */
    int ntop;
    struct clone { /* a device function called with pointers into several address spaces: a copy per combination */
        CXCursor fn;
        int ncombos;
        int combo[8][16];               /* per parameter: its space (pointer and reference parameters), else 0 */
        unsigned first_line, last_line; /* of its definition in the user's file */
    } clones[16];
    int nclones;
    struct tmpl { /* a function template: a copy per instantiation its calls use */
        CXCursor tpl;
        int nparams, ninst;
        char pname[8][64], ptype[8][64];     /* its parameters; ptype "" for a type parameter */
        char arg[8][8][96];                  /* per instantiation, per parameter: the text it stands for */
        char cname[8][160], mangled[8][160]; /* per instantiation: `k<float, 256>`, `_Z1kIfLj256EEvPT_` */
        int kernel;                          /* a __global__ template */
        char takes[512];                     /* a kernel's extra arguments (function: its note) */
        int warp;                            /* warp intrinsics used (warp_use): the first one's line and name */
        unsigned warp_line;
        char warp_what[32];
        unsigned first_line, last_line;
    } tmpls[16];
    int ntmpls;
    struct fshared { /* __shared__ in a device function: declared by each kernel that calls it, passed as a parameter */
        CXCursor fn, decl;
        char name[64], before[128], after[128]; /* "float ", "As", "[16][16]": the declaration around its name */
    } fsh[32];
    int nfsh;
    unsigned kused; /* the hoisted variables the current kernel reads: bits */
    char ring[4][256];
    unsigned ringi;
    char note[4096];      /* per kernel, its extra arguments (a comment ahead of the code) */
    char boolfix[8][200]; /* a kernel's bool * parameters: their declarations at the top of its body (kernel_param_types) */
    int nboolfix;
    struct ireq { /* an explicit instantiation (`template __global__ void k<float>(float *);`): removed, parsed again at the end */
        unsigned start, end, line;
        int decl_only; /* `extern template …;` */
    } ireq[32];
    int nireq;
    struct tsite { /* a template's call to a template: the callee's copy chosen per copy of the caller (resolve_sites) */
        int caller, callee, nargs;
        char arg[8][96]; /* the callee's arguments in the caller's terms (`T`, `blockSize`, `32`) */
        int target[8];   /* per copy of the caller: the callee's copy */
    } sites[32];
    int nsites;
    struct deferred { /* a template whose body could not be translated: refused where it is instantiated */
        CXCursor tpl;
        char why[480];
    } deferred[16];
    int ndeferred;
    CXCursor accessors[8]; /* classes (templates) that hand out the dynamic shared memory (SharedMemory<T>) */
    int naccessors;
    int warp;           /* warp intrinsics used: the output carries their forms (warp_prelude) */
    unsigned warp_line; /* … the first one's line, and its name */
    char warp_what[32];
    int wreduce; /* cooperative_groups::reduce on a warp tile used: the forms clrun_wreduce_* too */
    struct gparam {
        CXCursor fn;     /* a function (template) whose parameter `index` a warp tile or the thread block is passed to: it leaves */
        int index, tile; /* tile: a warp tile's (else the block's) */
    } gparams[32];
    int ngparams;
};

/* The spelling of a cursor or type, copied (the libclang string disposed) into one of four buffers
 * of the translation that live until it ends: for messages. */
static const char *spell_copy(struct tr *t, CXString cs)
{
    char *b = t->ring[t->ringi++ & 3];
    snprintf(b, sizeof t->ring[0], "%s", lc.clang_getCString(cs));
    lc.clang_disposeString(cs);
    return b;
}

static const char *cspell(struct tr *t, CXCursor c) { return spell_copy(t, lc.clang_getCursorSpelling(c)); }

static const char *tspell(struct tr *t, CXType ty) { return spell_copy(t, lc.clang_getTypeSpelling(ty)); }

enum { SP_PRIVATE = 1, SP_GLOBAL = 2, SP_LOCAL = 4, SP_CONSTANT = 8 };

static const char *space_word(int sp)
{
    return sp == SP_GLOBAL ? "__global " : sp == SP_LOCAL ? "__local " : sp == SP_CONSTANT ? "__constant " : "";
}

static struct var *var_of(struct tr *t, CXCursor d)
{
    for (size_t i = 0; i < t->nvars; i++)
        if (lc.clang_equalCursors(t->vars[i].decl, d)) return &t->vars[i];
    return NULL;
}

static void set_var(struct tr *t, CXCursor d, int space)
{
    struct var *v = var_of(t, d);
    if (v) {
        if ((v->space | space) != v->space) t->changed = 1;
        v->space |= space;
        return;
    }
    if (t->nvars == t->capvars) {
        size_t cap = t->capvars ? 2 * t->capvars : 64;
        struct var *nv = realloc(t->vars, cap * sizeof *nv);
        if (!nv) return;
        t->vars = nv, t->capvars = cap;
    }
    t->vars[t->nvars++] = (struct var){d, space};
    t->changed = 1;
}

static struct fparam *fparam_of(struct tr *t, CXCursor fn, unsigned index, int make)
{
    for (size_t i = 0; i < t->nfparams; i++)
        if (t->fparams[i].index == index && lc.clang_equalCursors(t->fparams[i].fn, fn)) return &t->fparams[i];
    if (!make) return NULL;
    if (t->nfparams == t->capfparams) {
        size_t cap = t->capfparams ? 2 * t->capfparams : 32;
        struct fparam *np = realloc(t->fparams, cap * sizeof *np);
        if (!np) return NULL;
        t->fparams = np, t->capfparams = cap;
    }
    t->fparams[t->nfparams] = (struct fparam){fn, index, 0, 0};
    return &t->fparams[t->nfparams++];
}

/* Whether device function f (its definition) is called with pointers into several address spaces
 * in one parameter (the last pass's decision). */
static int multi_space(struct tr *t, CXCursor f)
{
    for (size_t i = 0; i < t->nfparams; i++)
        if (lc.clang_equalCursors(t->fparams[i].fn, f) && (t->fparams[i].decided & (t->fparams[i].decided - 1))) return 1;
    return 0;
}

/* The user's lines (from 1) of the bytes at fs and at fe. */
static void def_lines(const struct tr *t, unsigned fs, unsigned fe, unsigned *first, unsigned *last)
{
    *first = *last = 1;
    for (unsigned i = 0; i < fe && i < t->len; i++)
        if (t->src[i] == '\n') *first += i < fs, ++*last;
}

static struct clone *clone_of(struct tr *t, CXCursor f, int make)
{
    for (int i = 0; i < t->nclones; i++)
        if (lc.clang_equalCursors(t->clones[i].fn, f)) return &t->clones[i];
    if (!make || t->nclones == 16) return NULL;
    struct clone *c = &t->clones[t->nclones++];
    memset(c, 0, sizeof *c);
    c->fn = f;
    return c;
}

/* A function's parameters, a function template's too (libclang counts those of FunctionDecls only). */
struct parms {
    CXCursor c[32];
    int n;
};

static enum CXChildVisitResult collect_parms(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct parms *k = d;
    if (lc.clang_getCursorKind(c) == CXCursor_ParmDecl && k->n < 32) k->c[k->n++] = c;
    return CXChildVisit_Continue;
}

static int fn_nargs(CXCursor f)
{
    const int n = lc.clang_Cursor_getNumArguments(f);
    if (n >= 0 || lc.clang_getCursorKind(f) != CXCursor_FunctionTemplate) return n;
    struct parms k = {.n = 0};
    lc.clang_visitChildren(f, collect_parms, &k);
    return k.n;
}

static CXCursor fn_arg(CXCursor f, unsigned i)
{
    if (lc.clang_getCursorKind(f) != CXCursor_FunctionTemplate) return lc.clang_Cursor_getArgument(f, i);
    struct parms k = {.n = 0};
    lc.clang_visitChildren(f, collect_parms, &k);
    return (int)i < k.n ? k.c[i] : lc.clang_getNullCursor();
}

static struct tmpl *tmpl_of(struct tr *t, CXCursor f, int make)
{
    for (int i = 0; i < t->ntmpls; i++)
        if (lc.clang_equalCursors(t->tmpls[i].tpl, f)) return &t->tmpls[i];
    if (!make || t->ntmpls == 16) return NULL;
    struct tmpl *m = &t->tmpls[t->ntmpls++];
    memset(m, 0, sizeof *m);
    m->tpl = f;
    return m;
}

struct kids {
    CXCursor c[8];
    int n;
};

static enum CXChildVisitResult collect_kids(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct kids *k = d;
    if (k->n < 8) k->c[k->n++] = c;
    return CXChildVisit_Continue;
}

static int first_token_is(struct tr *t, CXCursor c, const char *word)
{
    CXToken *tok = NULL;
    unsigned nt = 0;
    lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(c), &tok, &nt);
    int yes = 0;
    if (nt) {
        CXString w = lc.clang_getTokenSpelling(t->tu, tok[0]);
        yes = !strcmp(lc.clang_getCString(w), word);
        lc.clang_disposeString(w);
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
    return yes;
}

static int is_pointer(CXType ty)
{
    ty = lc.clang_getCanonicalType(ty);
    return ty.kind == CXType_Pointer;
}

/* Where the pointer value of expression c points (SP_* bits; 0 unknown). */
static int space_of(struct tr *t, CXCursor c)
{
    struct kids k = {.n = 0};
    const enum CXCursorKind kind = lc.clang_getCursorKind(c);
    switch (kind) {
    case CXCursor_DeclRefExpr: {
        CXCursor d = lc.clang_getCursorReferenced(c);
        struct var *v = var_of(t, d);
        return v ? v->space : 0;
    }
    case CXCursor_UnaryOperator:
        lc.clang_visitChildren(c, collect_kids, &k);
        if (k.n == 1 && first_token_is(t, c, "&")) {
            CXCursor o = k.c[0];
            while (lc.clang_getCursorKind(o) == CXCursor_ParenExpr || lc.clang_getCursorKind(o) == CXCursor_UnexposedExpr) {
                struct kids k2 = {.n = 0};
                lc.clang_visitChildren(o, collect_kids, &k2);
                if (k2.n != 1) break;
                o = k2.c[0];
            }
            if (lc.clang_getCursorKind(o) == CXCursor_ArraySubscriptExpr) {
                struct kids k3 = {.n = 0};
                lc.clang_visitChildren(o, collect_kids, &k3);
                return k3.n ? space_of(t, k3.c[0]) : 0;
            }
            if (lc.clang_getCursorKind(o) == CXCursor_DeclRefExpr) {
                struct var *v = var_of(t, lc.clang_getCursorReferenced(o));
                return v && !is_pointer(lc.clang_getCursorType(lc.clang_getCursorReferenced(o))) ? v->space : SP_PRIVATE;
            }
            return SP_PRIVATE;
        }
        return k.n == 1 ? space_of(t, k.c[0]) : 0; /* ++p, p++ */
    case CXCursor_BinaryOperator:
    case CXCursor_CompoundAssignOperator:
        lc.clang_visitChildren(c, collect_kids, &k);
        for (int i = 0; i < k.n; i++)
            if (is_pointer(lc.clang_getCursorType(k.c[i]))) return space_of(t, k.c[i]);
        return 0;
    case CXCursor_ConditionalOperator:
        lc.clang_visitChildren(c, collect_kids, &k);
        return k.n == 3 ? space_of(t, k.c[1]) | space_of(t, k.c[2]) : 0;
    case CXCursor_ParenExpr:
    case CXCursor_UnexposedExpr:
    case CXCursor_CStyleCastExpr:
        lc.clang_visitChildren(c, collect_kids, &k);
        for (int i = k.n - 1; i >= 0; i--) {
            const enum CXCursorKind ck = lc.clang_getCursorKind(k.c[i]);
            if (lc.clang_isExpression(ck)) return space_of(t, k.c[i]);
        }
        return 0;
    default: return 0;
    }
}

/* The one space of bits sp, or 0 where there are several (SP_* bits) and none (global). */
static int one_space(int sp)
{
    if (!sp) return SP_GLOBAL;
    return (sp & (sp - 1)) ? 0 : sp;
}

static void edit(struct tr *t, unsigned start, unsigned end, const char *text);
static int is_main(CXFile f);
static int cg_type(CXType ty);
static int cg_block_type(CXType ty);
static int tile32_type(CXType ty);
static int group_param(const struct tr *t, CXCursor fn, CXCursor p);
static void remove_list_item(struct tr *t, unsigned s, unsigned e);

/* A CUDA vector type (float4, uint2, …): OpenCL C cannot take the address of its components. */
static int is_vector_type(CXType ty)
{
    CXString sp = lc.clang_getTypeSpelling(lc.clang_getCanonicalType(ty));
    const char *n = lc.clang_getCString(sp);
    if (!strncmp(n, "const ", 6)) n += 6;
    if (!strncmp(n, "struct ", 7)) n += 7;
    static const char *const bases[] = {"float", "double", "int", "uint", "char", "uchar", "short", "ushort", "long", "ulong"};
    int yes = 0;
    const size_t len = strlen(n);
    for (size_t i = 0; i < sizeof bases / sizeof *bases && !yes; i++)
        yes = len == strlen(bases[i]) + 1 && !strncmp(n, bases[i], len - 1) && n[len - 1] >= '2' && n[len - 1] <= '4';
    lc.clang_disposeString(sp);
    return yes;
}

/* Where the object lvalue expression o lives (SP_* bits; 0 unknown): the space a pointer to it
 * points into. *component is set where o is a vector's component (v.x). */
static int lvalue_space(struct tr *t, CXCursor o, int *component)
{
    struct kids k = {.n = 0};
    while (lc.clang_getCursorKind(o) == CXCursor_ParenExpr || lc.clang_getCursorKind(o) == CXCursor_UnexposedExpr) {
        struct kids k2 = {.n = 0};
        lc.clang_visitChildren(o, collect_kids, &k2);
        if (k2.n != 1) break;
        o = k2.c[0];
    }
    switch (lc.clang_getCursorKind(o)) {
    case CXCursor_ArraySubscriptExpr: lc.clang_visitChildren(o, collect_kids, &k); return k.n ? space_of(t, k.c[0]) : 0;
    case CXCursor_DeclRefExpr: {
        CXCursor d = lc.clang_getCursorReferenced(o);
        struct var *v = var_of(t, d);
        if (lc.clang_getCanonicalType(lc.clang_getCursorType(d)).kind == CXType_LValueReference) return v ? v->space : 0;
        return v && !is_pointer(lc.clang_getCursorType(d)) ? v->space : SP_PRIVATE;
    }
    case CXCursor_MemberRefExpr:
        lc.clang_visitChildren(o, collect_kids, &k);
        if (!k.n) return 0;
        if (is_pointer(lc.clang_getCursorType(k.c[0]))) return space_of(t, k.c[0]); /* p->x */
        if (is_vector_type(lc.clang_getCursorType(k.c[0]))) *component = 1;
        return lvalue_space(t, k.c[0], component); /* s.x */
    case CXCursor_UnaryOperator:
        lc.clang_visitChildren(o, collect_kids, &k);
        return k.n == 1 && first_token_is(t, o, "*") ? space_of(t, k.c[0]) : 0;
    default: return 0;
    }
}

/* A device function's parameter `T &x` (T not const): passed as a pointer. */
static int ref_param(CXCursor d)
{
    if (lc.clang_getCursorKind(d) != CXCursor_ParmDecl) return 0;
    CXType ty = lc.clang_getCanonicalType(lc.clang_getCursorType(d));
    return ty.kind == CXType_LValueReference && !lc.clang_isConstQualifiedType(lc.clang_getPointeeType(ty));
}

/* The token text of c's first token spelled word, replaced by text (the `&` of a parameter). */
static void replace_token(struct tr *t, CXCursor c, const char *word, const char *text)
{
    CXToken *tok = NULL;
    unsigned nt = 0;
    lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(c), &tok, &nt);
    for (unsigned i = 0; i < nt; i++) {
        CXString w = lc.clang_getTokenSpelling(t->tu, tok[i]);
        const int hit = !strcmp(lc.clang_getCString(w), word);
        lc.clang_disposeString(w);
        if (!hit) continue;
        unsigned s, e;
        CXFile f1, f2;
        CXSourceRange r = lc.clang_getTokenExtent(t->tu, tok[i]);
        lc.clang_getExpansionLocation(lc.clang_getRangeStart(r), &f1, NULL, NULL, &s);
        lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r), &f2, NULL, NULL, &e);
        if (is_main(f1) && is_main(f2)) edit(t, s, e, text);
        break;
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
}

static void refuse(struct tr *t, CXCursor c, const char *fmt, ...)
{
    if (t->failed) return;
    t->failed = 1;
    unsigned line = 0, col = 0;
    lc.clang_getExpansionLocation(lc.clang_getCursorLocation(c), NULL, &line, &col, NULL);
    int k = snprintf(t->err, t->errn, "%s:%u:%u: ", t->name, line, col);
    if (k < 0 || (size_t)k >= t->errn) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err + k, t->errn - (size_t)k, fmt, ap);
    va_end(ap);
}

static void edit(struct tr *t, unsigned start, unsigned end, const char *text)
{
    if (t->collect) return;
    for (size_t i = 0; i < t->n; i++) /* the same edit reached twice */
        if (t->e[i].start == start && t->e[i].end == end && !strcmp(t->e[i].text, text)) return;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct edit *e = realloc(t->e, cap * sizeof *e);
        if (!e) {
            t->failed = 1;
            snprintf(t->err, t->errn, "%s: out of memory", t->name);
            return;
        }
        t->e = e, t->cap = cap;
    }
    t->e[t->n++] = (struct edit){start, end, strdup(text)};
}

static const char main_name[] = "/clrun-cuda/kernel.cu", pre_name[] = "/clrun-cuda/prelude.h", std_dir[] = "/clrun-cuda/include/";

/* Whether f is the user's file (a macro's use counts where it is expanded). */
static int is_main(CXFile f)
{
    if (!f) return 0;
    CXString n = lc.clang_getFileName(f);
    const int yes = !strcmp(lc.clang_getCString(n), main_name);
    lc.clang_disposeString(n);
    return yes;
}

/* The byte range of c in the main file; 0 when it is not (all) there. */
static int range(struct tr *t, CXCursor c, unsigned *start, unsigned *end)
{
    CXSourceRange r = lc.clang_getCursorExtent(c);
    CXFile f1, f2;
    /* where the text is spelled, when that is the user's file: code, and macro arguments there
     * (IMUL(blockIdx.x, W)); else where it is expanded: the prelude's macros (__global__) */
    lc.clang_getSpellingLocation(lc.clang_getRangeStart(r), &f1, NULL, NULL, start);
    lc.clang_getSpellingLocation(lc.clang_getRangeEnd(r), &f2, NULL, NULL, end);
    if (is_main(f1) && is_main(f2) && *start <= *end && *end <= t->len) return 1;
    lc.clang_getExpansionLocation(lc.clang_getRangeStart(r), &f1, NULL, NULL, start);
    lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r), &f2, NULL, NULL, end);
    return is_main(f1) && is_main(f2) && *start <= *end && *end <= t->len;
}

static int in_main(struct tr *t, CXCursor c)
{
    (void)t;
    CXFile f;
    lc.clang_getExpansionLocation(lc.clang_getCursorLocation(c), &f, NULL, NULL, NULL);
    return is_main(f);
}

static int has_child_kind(CXCursor c, enum CXCursorKind kind);

struct find {
    enum CXCursorKind kind;
    int found;
};

static enum CXChildVisitResult find_kind(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct find *f = d;
    if (lc.clang_getCursorKind(c) == f->kind) {
        f->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static int has_child_kind(CXCursor c, enum CXCursorKind kind)
{
    struct find f = {kind, 0};
    lc.clang_visitChildren(c, find_kind, &f);
    return f.found;
}

/* Attribute cursors of a declaration replaced: global → __kernel, device/host removed, shared →
 * __local, constant → __constant. */
static enum CXChildVisitResult attrs(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct tr *t = d;
    unsigned s, e;
    const enum CXCursorKind k = lc.clang_getCursorKind(c);
    const char *to = k == CXCursor_CUDAGlobalAttr     ? "__kernel"
                     : k == CXCursor_CUDADeviceAttr   ? ""
                     : k == CXCursor_CUDAHostAttr     ? ""
                     : k == CXCursor_CUDASharedAttr   ? "__local"
                     : k == CXCursor_CUDAConstantAttr ? "__constant"
                                                      : NULL;
    if (to && range(t, c, &s, &e)) { edit(t, s, e, to); }
    return CXChildVisit_Continue;
}

/* A pointer parameter of a kernel or device function: __global before its type. */
/* OpenCL C refuses kernel parameters of type bool, size_t, ptrdiff_t, intptr_t, uintptr_t (and
 * pointers to them): spelled in CUDA's sizes instead (bool 1 byte, the rest 8 on a 64-bit host). A
 * by-value or pointed-to three-component vector is 12 bytes in CUDA and 16 in OpenCL: refused. */
static void kernel_param_types(struct tr *t, CXCursor p)
{
    CXType ty = lc.clang_getCanonicalType(lc.clang_getCursorType(p));
    CXType el = ty.kind == CXType_Pointer ? lc.clang_getCanonicalType(lc.clang_getPointeeType(ty)) : ty;
    CXString es = lc.clang_getTypeSpelling(el);
    const char *e = lc.clang_getCString(es);
    const char *bare = !strncmp(e, "const ", 6) ? e + 6 : e;
    if (!strncmp(bare, "struct ", 7)) bare += 7;
    static const char *const three[] = {"float3", "int3", "uint3", "char3", "uchar3", "short3", "ushort3", "double3", "long3", "ulong3"};
    for (size_t i = 0; i < sizeof three / sizeof *three; i++)
        if (!strcmp(bare, three[i])) {
            CXString n = lc.clang_getCursorSpelling(p);
            refuse(t, p,
                   "kernel parameter '%s' of %s: OpenCL lays a three-component vector out as four, CUDA does not; pass "
                   "its components or a four-component type",
                   lc.clang_getCString(n), bare);
            lc.clang_disposeString(n);
            break;
        }
    lc.clang_disposeString(es);
    CXToken *tok = NULL;
    unsigned nt = 0;
    lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(p), &tok, &nt);
    for (unsigned i = 0; i < nt; i++) {
        CXString w = lc.clang_getTokenSpelling(t->tu, tok[i]);
        const char *ws = lc.clang_getCString(w);
        const char *to = !strcmp(ws, "bool")                                                             ? "uchar"
                         : !strcmp(ws, "size_t") || !strcmp(ws, "uintptr_t")                             ? "ulong"
                         : !strcmp(ws, "ptrdiff_t") || !strcmp(ws, "intptr_t") || !strcmp(ws, "ssize_t") ? "long"
                                                                                                         : NULL;
        lc.clang_disposeString(w);
        unsigned s, e2;
        CXFile f1, f2;
        CXSourceRange r = lc.clang_getTokenExtent(t->tu, tok[i]);
        lc.clang_getExpansionLocation(lc.clang_getRangeStart(r), &f1, NULL, NULL, &s);
        lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r), &f2, NULL, NULL, &e2);
        if (to && is_main(f1) && is_main(f2)) edit(t, s, e2, to);
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
    /* bool *p: a uchar * argument (OpenCL refuses bool in a kernel's parameters), and a bool *
     * under the parameter's name at the top of the body, so that stores through it still store
     * 0 or 1 and the pointers the body makes from it keep their type */
    if (ty.kind == CXType_Pointer && el.kind == CXType_Bool && t->nboolfix < (int)(sizeof t->boolfix / sizeof *t->boolfix)) {
        CXString n = lc.clang_getCursorSpelling(p);
        const char *name = lc.clang_getCString(n);
        unsigned at;
        CXFile f;
        lc.clang_getSpellingLocation(lc.clang_getCursorLocation(p), &f, NULL, NULL, &at);
        if (*name && is_main(f) && at + strlen(name) <= t->len && !strncmp(t->src + at, name, strlen(name))) {
            char to[96];
            snprintf(to, sizeof to, "%s_clrun_bool", name);
            edit(t, at, at + (unsigned)strlen(name), to);
            snprintf(t->boolfix[t->nboolfix++], sizeof t->boolfix[0], " __global %sbool *%s = (__global %sbool *)%s_clrun_bool;",
                     lc.clang_isConstQualifiedType(lc.clang_getPointeeType(ty)) ? "const " : "", name,
                     lc.clang_isConstQualifiedType(lc.clang_getPointeeType(ty)) ? "const " : "", name);
        }
        lc.clang_disposeString(n);
    }
}

static void param(struct tr *t, CXCursor f, unsigned index, CXCursor p, int kernel)
{
    CXType ty = lc.clang_getCanonicalType(lc.clang_getCursorType(p));
    if (!kernel && (cg_block_type(lc.clang_getCursorType(p)) || tile32_type(lc.clang_getCursorType(p)) || group_param(t, f, p))) {
        /* a group's handle holds nothing: the parameter leaves (its calls' arguments too, group_argument) */
        unsigned s0, e0;
        if (!t->collect && range(t, p, &s0, &e0)) remove_list_item(t, s0, e0);
        return;
    }
    if (cg_type(lc.clang_getCursorType(p)) ||
        ((ty.kind == CXType_LValueReference || ty.kind == CXType_Pointer) && cg_type(lc.clang_getPointeeType(ty)))) {
        refuse(t, p, "a cooperative group other than the thread block and warp tiles as parameter '%s': not translated", cspell(t, p));
        return;
    }
    if (ty.kind == CXType_RValueReference || (kernel && ty.kind == CXType_LValueReference)) {
        refuse(t, p, "reference parameter '%s' of a %s: OpenCL C has no references", cspell(t, p), kernel ? "kernel" : "function (&&)");
        return;
    }
    if (ty.kind == CXType_LValueReference && lc.clang_isConstQualifiedType(lc.clang_getPointeeType(ty))) {
        if (!t->collect) replace_token(t, p, "&", ""); /* const T &x: by value, as it reads the same */
        set_var(t, p, SP_PRIVATE);
        return;
    }
    if (ty.kind == CXType_LValueReference) { /* T &x: a pointer, its uses *x, its arguments &arg */
        if (!t->collect) replace_token(t, p, "&", "*");
    } else if (kernel && !t->collect) kernel_param_types(t, p);
    if (ty.kind != CXType_Pointer && ty.kind != CXType_LValueReference) {
        set_var(t, p, SP_PRIVATE);
        return;
    }
    CXType pointee = lc.clang_getCanonicalType(lc.clang_getPointeeType(ty));
    if (pointee.kind == CXType_Pointer) {
        refuse(t, p, "parameter '%s' is a pointer to a pointer, which OpenCL C cannot pass to a %s", cspell(t, p),
               kernel ? "kernel" : "function");
        return;
    }
    int sp = SP_GLOBAL;
    if (!kernel) {
        struct fparam *fp = fparam_of(t, f, index, 1);
        sp = one_space(fp ? fp->decided : 0);
        if (!sp && !t->collect && clone_of(t, f, 0)) { /* a copy per combination: the space filled in by expand_clones */
            unsigned s0, e0;
            char mark[32];
            snprintf(mark, sizeof mark, "/*@CLRUN_SP%u@*/", index);
            if (range(t, p, &s0, &e0)) edit(t, s0, s0, mark);
            return;
        }
        if (!sp && !t->collect) {
            refuse(t, p, "device function '%s' is called with parameter '%s' in several address spaces (%s%s%s%s): not translated yet",
                   cspell(t, f), cspell(t, p), fp->decided & SP_GLOBAL ? "global " : "", fp->decided & SP_LOCAL ? "shared " : "",
                   fp->decided & SP_CONSTANT ? "constant " : "", fp->decided & SP_PRIVATE ? "private" : "");
            return;
        }
    }
    if (t->collect) {
        struct var *v = var_of(t, p);
        if (v && v->space != sp) v->space = sp, t->changed = 1;
        else if (!v) set_var(t, p, sp);
        return;
    }
    unsigned s, e;
    if (sp != SP_PRIVATE && range(t, p, &s, &e)) edit(t, s, s, space_word(sp));
}

static const char *builtin_fn(const char *var)
{
    if (!strcmp(var, "threadIdx")) return "get_local_id";
    if (!strcmp(var, "blockIdx")) return "get_group_id";
    if (!strcmp(var, "blockDim")) return "get_local_size";
    if (!strcmp(var, "gridDim")) return "get_num_groups";
    return NULL;
}

/* The atomics by CUDA name and pointee type: the OpenCL 1.2 function. */
static const char *atomic_fn(const char *name, enum CXTypeKind pointee)
{
    static const struct {
        const char *cuda, *cl;
    } ints[] = {{"atomicAdd", "atomic_add"}, {"atomicSub", "atomic_sub"}, {"atomicExch", "atomic_xchg"},
                {"atomicMin", "atomic_min"}, {"atomicMax", "atomic_max"}, {"atomicCAS", "atomic_cmpxchg"},
                {"atomicAnd", "atomic_and"}, {"atomicOr", "atomic_or"},   {"atomicXor", "atomic_xor"}};
    if (pointee == CXType_Float) {
        if (!strcmp(name, "atomicAdd")) return "clrun_atomic_add_f32";
        if (!strcmp(name, "atomicExch")) return "clrun_atomic_xchg_f32";
        return NULL;
    }
    if (pointee == CXType_Double) return !strcmp(name, "atomicAdd") ? "clrun_atomic_add_f64" : NULL;
    if (pointee == CXType_LongLong || pointee == CXType_ULongLong || pointee == CXType_Long || pointee == CXType_ULong) {
        /* 64-bit: the cl_khr_int64_base/extended_atomics functions (a device without them rejects the build) */
        static const struct {
            const char *cuda, *cl;
        } longs[] = {{"atomicAdd", "atom_add"}, {"atomicExch", "atom_xchg"}, {"atomicCAS", "atom_cmpxchg"}, {"atomicMin", "atom_min"},
                     {"atomicMax", "atom_max"}, {"atomicAnd", "atom_and"},   {"atomicOr", "atom_or"},       {"atomicXor", "atom_xor"}};
        for (size_t i = 0; i < sizeof longs / sizeof *longs; i++)
            if (!strcmp(name, longs[i].cuda)) return longs[i].cl;
        return NULL;
    }
    if (pointee != CXType_Int && pointee != CXType_UInt) return NULL;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (!strcmp(name, ints[i].cuda)) return ints[i].cl;
    return NULL;
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData d);

/* The call's callee name (its first token) replaced by text. */
static void rename_callee(struct tr *t, CXCursor call, const char *text)
{
    CXToken *tok = NULL;
    unsigned nt = 0, s, e;
    lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(call), &tok, &nt);
    if (nt) {
        CXSourceRange r = lc.clang_getTokenExtent(t->tu, tok[0]);
        CXFile f1, f2;
        lc.clang_getExpansionLocation(lc.clang_getRangeStart(r), &f1, NULL, NULL, &s);
        lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r), &f2, NULL, NULL, &e);
        if (is_main(f1) && is_main(f2)) edit(t, s, e, text);
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
}

/* The warp intrinsics' forms, ahead of a translation that uses them (at most WARP_PRELUDE_MAX bytes):
 * on NVIDIA (CLRUN_NV_PTX, defined by clrun_prog_cuda there) inline PTX, the same instructions nvcc
 * emits; where the compiler has sub-groups with shuffles, ballots and non-uniform votes and sizes
 * them on request (cl_intel_required_subgroup_size), sub-groups of 32 standing for warps, every
 * kernel of the file asking for that size; elsewhere an #error naming the first use. */
#define WARP_PRELUDE_MAX 65536

/* cooperative_groups::reduce over a warp tile: a butterfly of shfl_xor, every lane left with the
 * result, as CUDA's; the operators as cg::plus, less, greater, bit_and, bit_or, bit_xor compute. */
static size_t wreduce_forms(char *out, size_t n)
{
    static const struct {
        const char *op, *expr;
        int ints;
    } rops[] = {{"add", "v + u", 0}, {"min", "(u < v ? u : v)", 0}, {"max", "(v < u ? u : v)", 0}, {"and", "v & u", 1}, {"or", "v | u", 1},
                {"xor", "v ^ u", 1}};
    static const struct {
        const char *sfx, *type;
        int fp;
    } types[] = {{"i", "int", 0}, {"u", "uint", 0}, {"f", "float", 1}, {"l", "long", 0}, {"ul", "ulong", 0}, {"d", "double", 2}};
    size_t w = 0;
    for (size_t o = 0; o < sizeof rops / sizeof *rops; o++)
        for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
            if (rops[o].ints && types[k].fp) continue;
            const int r = snprintf(out + w, w < n ? n - w : 0,
                                   "%sstatic %s clrun_wreduce_%s_%s(%s v)\n{\n    for (int o = 16; o > 0; o >>= 1) {\n        const %s u = "
                                   "clrun_shfl_xor_%s(0xffffffffu, v, o, 32);\n        v = %s;\n    }\n    return v;\n}\n%s",
                                   types[k].fp == 2 ? "#ifdef cl_khr_fp64\n" : "", types[k].type, rops[o].op, types[k].sfx, types[k].type,
                                   types[k].type, types[k].sfx, rops[o].expr, types[k].fp == 2 ? "#endif\n" : "");
            if (r > 0) w += (size_t)r;
        }
    return w;
}

static size_t warp_prelude(char *out, const struct tr *t)
{
    static const struct {
        const char *name, *mode, *clamp, *btype, *index; /* the sub-groups' source lane: l this lane, b the operand, w the width */
    } ops[] = {
        {"shfl", "idx", "31u", "int", "(l & ~((uint)w - 1u)) + ((uint)b & ((uint)w - 1u))"},
        {"shfl_up", "up", "0u", "uint", "(l & ((uint)w - 1u)) >= (uint)b ? l - (uint)b : l"},
        {"shfl_down", "down", "31u", "uint", "(l & ((uint)w - 1u)) + (uint)b < (uint)w ? l + (uint)b : l"},
        {"shfl_xor", "bfly", "31u", "int", "(l ^ (uint)b) < (l & ~((uint)w - 1u)) + (uint)w ? l ^ (uint)b : l"},
    };
    static const struct {
        const char *sfx, *type, *to_bits, *from_bits;
        int wide;
    } types[] = {
        {"i", "int", "(uint)(v)", "(int)(r)", 0},    {"u", "uint", "(v)", "(r)", 0},   {"f", "float", "as_uint(v)", "as_float(r)", 0},
        {"l", "long", "(ulong)(v)", "(long)(r)", 1}, {"ul", "ulong", "(v)", "(r)", 1}, {"d", "double", "as_ulong(v)", "as_double(r)", 1},
    };
    char *w = out, *const end = out + WARP_PRELUDE_MAX;
#define PUT(...) (w += snprintf(w, (size_t)(end - w), __VA_ARGS__), w = w < end ? w : end - 1)
    PUT("#if defined(CLRUN_NV_PTX)\n"
        "#define CLRUN_PTX_SHFL(mode)                                                                        \\\n"
        "    static uint clrun_ptx_##mode(uint v, uint b, uint c, uint m)                                    \\\n"
        "    {                                                                                               \\\n"
        "        uint r;                                                                                     \\\n"
        "        __asm__ __volatile__(\"shfl.sync.\" #mode \".b32 %%0, %%1, %%2, %%3, %%4;\" : \"=r\"(r) : \"r\"(v), \"r\"(b), \"r\"(c), "
        "\"r\"(m)); \\\n"
        "        return r;                                                                                   \\\n"
        "    }\n"
        "CLRUN_PTX_SHFL(idx)\nCLRUN_PTX_SHFL(up)\nCLRUN_PTX_SHFL(down)\nCLRUN_PTX_SHFL(bfly)\n");
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
            const int dbl = types[k].sfx[0] == 'd';
            PUT("%sstatic %s clrun_%s_%s(uint m, %s v, %s b, int w)\n{\n    const uint c = ((32u - (uint)w) << 8) | %s;\n",
                dbl ? "#ifdef cl_khr_fp64\n" : "", types[k].type, ops[o].name, types[k].sfx, types[k].type, ops[o].btype, ops[o].clamp);
            if (types[k].wide)
                PUT("    const ulong x = %s;\n    const ulong r = (ulong)clrun_ptx_%s((uint)x, (uint)b, c, m) | "
                    "(ulong)clrun_ptx_%s((uint)(x >> 32), "
                    "(uint)b, c, m) << 32;\n",
                    types[k].to_bits, ops[o].mode, ops[o].mode);
            else PUT("    const uint r = clrun_ptx_%s(%s, (uint)b, c, m);\n", ops[o].mode, types[k].to_bits);
            PUT("    return %s;\n}\n%s", types[k].from_bits, dbl ? "#endif\n" : "");
        }
    PUT("static uint clrun_ballot(uint m, int p)\n{\n    uint r;\n"
        "    __asm__ __volatile__(\"{ .reg .pred q; setp.ne.s32 q, %%1, 0; vote.sync.ballot.b32 %%0, q, %%2; }\" : \"=r\"(r) : \"r\"(p), "
        "\"r\"(m));\n"
        "    return r;\n}\n"
        "static int clrun_any(uint m, int p)\n{\n    int r;\n"
        "    __asm__ __volatile__(\"{ .reg .pred q; setp.ne.s32 q, %%1, 0; vote.sync.any.pred q, q, %%2; selp.s32 %%0, 1, 0, q; }\" : "
        "\"=r\"(r) : "
        "\"r\"(p), \"r\"(m));\n"
        "    return r;\n}\n"
        "static int clrun_all(uint m, int p)\n{\n    int r;\n"
        "    __asm__ __volatile__(\"{ .reg .pred q; setp.ne.s32 q, %%1, 0; vote.sync.all.pred q, q, %%2; selp.s32 %%0, 1, 0, q; }\" : "
        "\"=r\"(r) : "
        "\"r\"(p), \"r\"(m));\n"
        "    return r;\n}\n"
        "static uint clrun_activemask(void)\n{\n    uint r;\n    __asm__ __volatile__(\"activemask.b32 %%0;\" : \"=r\"(r));\n    return "
        "r;\n}\n"
        "static void clrun_syncwarp(void) { __asm__ __volatile__(\"bar.warp.sync -1;\" ::: \"memory\"); }\n");
    if (t->wreduce) w += wreduce_forms(w, (size_t)(end - w)), w = w < end ? w : end - 1;
    PUT("#elif defined(cl_khr_subgroup_shuffle) && defined(cl_khr_subgroup_ballot) && defined(cl_khr_subgroup_non_uniform_vote) && "
        "defined(cl_intel_required_subgroup_size)\n"
        "#define __kernel __kernel __attribute__((intel_reqd_sub_group_size(32)))\n");
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
            const int dbl = types[k].sfx[0] == 'd';
            PUT("%sstatic %s clrun_%s_%s(uint m, %s v, %s b, int w)\n{\n    (void)m;\n    const uint l = get_sub_group_local_id(), i = "
                "%s;\n"
                "    return sub_group_shuffle(v, i);\n}\n%s",
                dbl ? "#ifdef cl_khr_fp64\n" : "", types[k].type, ops[o].name, types[k].sfx, types[k].type, ops[o].btype, ops[o].index,
                dbl ? "#endif\n" : "");
        }
    PUT("static uint clrun_ballot(uint m, int p) { return sub_group_ballot(p != 0).x & m; }\n"
        "static int clrun_any(uint m, int p) { return (void)m, sub_group_non_uniform_any(p != 0) ? 1 : 0; }\n"
        "static int clrun_all(uint m, int p) { return (void)m, sub_group_non_uniform_all(p != 0) ? 1 : 0; }\n"
        "static uint clrun_activemask(void) { return sub_group_ballot(1).x; }\n"
        "#if defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)\n"
        "static void clrun_syncwarp(void) { sub_group_barrier(CLK_LOCAL_MEM_FENCE); }\n"
        "#else\n"
        "static void clrun_syncwarp(void) { mem_fence(CLK_LOCAL_MEM_FENCE); }\n"
        "#endif\n");
    if (t->wreduce) w += wreduce_forms(w, (size_t)(end - w)), w = w < end ? w : end - 1;
    PUT("#else\n#line %u \"", t->warp_line);
    for (const char *q = t->name; *q && w < end - 2; q++) {
        if (*q == '"' || *q == '\\') *w++ = '\\';
        *w++ = *q;
    }
    PUT("\"\n#error \"%s: warp intrinsics need NVIDIA's inline PTX or sub-groups of 32 work-items (cl_khr_subgroup_shuffle, "
        "cl_khr_subgroup_ballot, cl_khr_subgroup_non_uniform_vote and cl_intel_required_subgroup_size), which this device's compiler "
        "lacks\"\n#endif\n",
        t->warp_what);
#undef PUT
    return (size_t)(w - out);
}

/* The name of the overload set a call whose arguments depend on a template's parameters names (its
 * callee is an OverloadedDeclRef under the callee's expression), or "". */
static enum CXChildVisitResult find_overload(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (lc.clang_getCursorKind(c) == CXCursor_OverloadedDeclRef) {
        CXString n = lc.clang_getCursorSpelling(c);
        snprintf(d, 64, "%s", lc.clang_getCString(n));
        lc.clang_disposeString(n);
        return CXChildVisit_Break;
    }
    return lc.clang_getCursorKind(c) == CXCursor_DeclRefExpr || lc.clang_getCursorKind(c) == CXCursor_UnexposedExpr ? CXChildVisit_Recurse
                                                                                                                    : CXChildVisit_Continue;
}

/* A warp intrinsic: the call renamed to its clrun_ form (warp_prelude), by the type of its value
 * for the shuffles (clrun_shfl_down_f), with CUDA's default width of 32 written out. */
static void warp_use(struct tr *t, CXCursor c, const char *what);
static int warp_suffix(struct tr *t, CXType ty, char *sfx, size_t n);

static void warp_call(struct tr *t, CXCursor c, const char *name)
{
    static const struct {
        const char *cuda, *cl;
    } fns[] = {{"__shfl_sync", "clrun_shfl"},         {"__shfl_up_sync", "clrun_shfl_up"},  {"__shfl_down_sync", "clrun_shfl_down"},
               {"__shfl_xor_sync", "clrun_shfl_xor"}, {"__ballot_sync", "clrun_ballot"},    {"__any_sync", "clrun_any"},
               {"__all_sync", "clrun_all"},           {"__activemask", "clrun_activemask"}, {"__syncwarp", "clrun_syncwarp"}};
    size_t f = 0;
    while (f < sizeof fns / sizeof *fns && strcmp(fns[f].cuda, name)) f++;
    if (f == sizeof fns / sizeof *fns) {
        refuse(t, c,
               "warp intrinsic %s is not translated (the shuffles, __ballot_sync, __any_sync, __all_sync, __activemask and "
               "__syncwarp are)",
               name);
        return;
    }
    warp_use(t, c, name);
    if (t->collect) return;
    unsigned s, e;
    if (!strcmp(name, "__syncwarp")) { /* its mask changes nothing where lanes run converged */
        if (range(t, c, &s, &e)) edit(t, s, e, "clrun_syncwarp()");
        return;
    }
    char to[160];
    snprintf(to, sizeof to, "%s", fns[f].cl);
    if (f < 4) { /* a shuffle: the overload clang chose names the type; on a template's type, each copy's suffix */
        CXCursor decl = lc.clang_getCursorReferenced(c);
        struct kids k = {.n = 0};
        lc.clang_visitChildren(c, collect_kids, &k);
        char sfx[80];
        const int dependent = lc.clang_Cursor_isNull(decl);
        if (dependent ? k.n < 3 || !warp_suffix(t, lc.clang_getCursorType(k.c[2]), sfx, sizeof sfx)
                      : !warp_suffix(t, lc.clang_getArgType(lc.clang_getCursorType(decl), 1), sfx, sizeof sfx)) {
            refuse(t, c,
                   "%s on a value whose type is not int, unsigned, float, long long, unsigned long long, double or a template's "
                   "type parameter",
                   name);
            return;
        }
        if (!strncmp(sfx, "CLRUN_SFX_", 10)) snprintf(to, sizeof to, "CLRUN_WCAT(%s, %s)", fns[f].cl, sfx);
        else strcat(to, sfx);
        /* the width left to its default: clang lists the default argument, spelled nowhere (a
         * dependent call lists the arguments written only) */
        unsigned ws, we;
        const int nargs = dependent ? k.n - 1 : lc.clang_Cursor_getNumArguments(c);
        const int width_given =
            nargs == 4 && range(t, dependent ? k.c[4 < k.n ? 4 : 0] : lc.clang_Cursor_getArgument(c, 3), &ws, &we) && we > ws;
        if (nargs >= 3 && !width_given && range(t, c, &s, &e) && e > s && t->src[e - 1] == ')') edit(t, e - 1, e - 1, ", 32");
    }
    rename_callee(t, c, to);
}

/* A cooperative group's work-item rank and the group's size, for the thread block (cg_call) and its tiles (tile_call). */
static const char block_rank[] =
    "((unsigned)(get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2))))";
static const char block_size[] = "((unsigned)(get_local_size(0) * get_local_size(1) * get_local_size(2)))";

/* The canonical spelling of type ty, by value or reference, without const: into buf. */
static const char *group_type_name(CXType ty, char *buf, size_t n)
{
    ty = lc.clang_getCanonicalType(ty);
    if (ty.kind == CXType_LValueReference) ty = lc.clang_getCanonicalType(lc.clang_getPointeeType(ty));
    CXString sp = lc.clang_getTypeSpelling(ty);
    const char *s = lc.clang_getCString(sp);
    snprintf(buf, n, "%s", strncmp(s, "const ", 6) ? s : s + 6);
    lc.clang_disposeString(sp);
    return buf;
}

/* Whether type ty is cooperative_groups::thread_block_tile<32> (by value or reference): a warp. */
static int tile32_type(CXType ty)
{
    char n[160];
    static const char tile[] = "cooperative_groups::thread_block_tile<32";
    group_type_name(ty, n, sizeof n);
    return !strncmp(n, tile, sizeof tile - 1) && (n[sizeof tile - 1] == ',' || n[sizeof tile - 1] == '>');
}

/* The output carries the warp forms (warp_prelude); the first use named where a device has none. */
static void warp_use(struct tr *t, CXCursor c, const char *what)
{
    /* in a template, counted only where it is instantiated (note_instances) */
    const int in_tmpl = lc.clang_getCursorKind(t->cur_fn) == CXCursor_FunctionTemplate;
    struct tmpl *m = in_tmpl ? tmpl_of(t, t->cur_fn, 0) : NULL;
    if (in_tmpl && !m) return; /* the first passes: the template is not yet known */
    int *warp = m ? &m->warp : &t->warp;
    unsigned *line = m ? &m->warp_line : &t->warp_line;
    char *w = m ? m->warp_what : t->warp_what;
    if (*warp) return;
    *warp = 1;
    lc.clang_getExpansionLocation(lc.clang_getCursorLocation(c), NULL, line, NULL, NULL);
    snprintf(w, sizeof t->warp_what, "%s", what);
}

/* The suffix of the warp forms for a value of type ty (clrun_shfl_down_f): "_f", or, for a template's
 * type parameter P, the macro its copies define (CLRUN_SFX_P, expand_clones) into sfx; 0 if neither. */
static int warp_suffix(struct tr *t, CXType ty, char *sfx, size_t n)
{
    const enum CXTypeKind k = lc.clang_getCanonicalType(ty).kind;
    const char *s = k == CXType_Int                              ? "_i"
                    : k == CXType_UInt                           ? "_u"
                    : k == CXType_Float                          ? "_f"
                    : k == CXType_Long || k == CXType_LongLong   ? "_l"
                    : k == CXType_ULong || k == CXType_ULongLong ? "_ul"
                    : k == CXType_Double                         ? "_d"
                                                                 : NULL;
    if (s) {
        snprintf(sfx, n, "%s", s);
        return 1;
    }
    const struct tmpl *m = lc.clang_getCursorKind(t->cur_fn) == CXCursor_FunctionTemplate ? tmpl_of(t, t->cur_fn, 0) : NULL;
    CXString ts = lc.clang_getTypeSpelling(ty);
    const char *tn = lc.clang_getCString(ts);
    if (!strncmp(tn, "const ", 6)) tn += 6;
    int found = 0;
    for (int i = 0; m && i < m->nparams && !found; i++)
        if (!m->ptype[i][0] && !strcmp(m->pname[i], tn)) found = 1, snprintf(sfx, n, "CLRUN_SFX_%s", tn);
    lc.clang_disposeString(ts);
    return found;
}

/* Whether parameter p (a ParmDecl) of function fn is one a warp tile (2) or the thread block (1) is
 * passed to (noted at the calls, t->gparams), else 0: it leaves the function, as the group's handle
 * holds nothing. */
static int group_param(const struct tr *t, CXCursor fn, CXCursor p)
{
    const int n = lc.clang_Cursor_getNumArguments(fn);
    for (int i = 0; i < t->ngparams; i++)
        if (lc.clang_equalCursors(t->gparams[i].fn, fn) && t->gparams[i].index < n &&
            lc.clang_equalCursors(lc.clang_Cursor_getArgument(fn, (unsigned)t->gparams[i].index), p))
            return 1 + t->gparams[i].tile;
    if (lc.clang_getCursorKind(fn) == CXCursor_FunctionTemplate) { /* a template's parameters are not listed as its arguments */
        struct kids k = {.n = 0};
        lc.clang_visitChildren(fn, collect_kids, &k);
        for (int i = 0, a = 0; i < k.n; i++)
            if (lc.clang_getCursorKind(k.c[i]) == CXCursor_ParmDecl) {
                for (int g = 0; g < t->ngparams; g++)
                    if (lc.clang_equalCursors(t->gparams[g].fn, fn) && t->gparams[g].index == a && lc.clang_equalCursors(k.c[i], p))
                        return 1 + t->gparams[g].tile;
                a++;
            }
    }
    return 0;
}

/* A call's argument a passes a warp tile or the thread block to parameter index of fn: noted (the
 * parameter leaves, group_param) and, in the edit pass, the argument removed. 1 when it is one. */
static int group_argument(struct tr *t, CXCursor fn, int index, CXCursor a)
{
    const CXType ty = lc.clang_getCursorType(a);
    const int tile = tile32_type(ty);
    if (!tile && !cg_block_type(ty)) return 0;
    int known = 0;
    for (int i = 0; i < t->ngparams && !known; i++)
        if (lc.clang_equalCursors(t->gparams[i].fn, fn) && t->gparams[i].index == index) {
            known = 1;
            if (t->gparams[i].tile != tile) {
                refuse(t, a, "a parameter passed a warp tile at one call and the thread block at another is not translated");
                return 1;
            }
        }
    if (!known && t->ngparams < (int)(sizeof t->gparams / sizeof *t->gparams)) t->gparams[t->ngparams++] = (struct gparam){fn, index, tile};
    unsigned s0, e0;
    if (!t->collect && range(t, a, &s0, &e0)) remove_list_item(t, s0, e0);
    return 1;
}

/* `cg::reduce(tile, v, cg::plus<T>())` on a warp tile (a thread_block_tile<32>, or a parameter a tile
 * is passed to): clrun_wreduce_add_f(v), every lane given the result as in CUDA; the operator one of
 * cg::plus, less, greater, bit_and, bit_or, bit_xor. c's children: the callee, then the arguments. */
static void cg_reduce_call(struct tr *t, CXCursor c)
{
    struct kids k = {.n = 0};
    lc.clang_visitChildren(c, collect_kids, &k);
    if (k.n != 4) {
        refuse(t, c, "cooperative_groups::reduce with other than (group, value, operator) is not translated");
        return;
    }
    const CXCursor g = k.c[1], v = k.c[2], op = k.c[3];
    const CXType gt = lc.clang_getCursorType(g);
    if (cg_block_type(gt) || (cg_type(gt) && !tile32_type(gt))) {
        char n[160];
        refuse(t, c, "cooperative_groups::reduce over %s: only warp tiles (thread_block_tile<32>) are translated",
               group_type_name(gt, n, sizeof n));
        return;
    }
    char sfx[64];
    if (t->collect) { /* a template's parameters are known in the edit pass only */
        warp_use(t, c, "cooperative_groups::reduce");
        t->wreduce = 1;
        if (visit(v, c, t) == CXChildVisit_Recurse) lc.clang_visitChildren(v, visit, t);
        return;
    }
    if (!warp_suffix(t, lc.clang_getCursorType(v), sfx, sizeof sfx)) {
        refuse(t, c, "cooperative_groups::reduce on a value of type '%s': int, unsigned, float, 64-bit integers and double are translated",
               tspell(t, lc.clang_getCursorType(v)));
        return;
    }
    static const char *const ops[][2] = {{"plus<", "add"},    {"less<", "min"},  {"greater<", "max"},
                                         {"bit_and<", "and"}, {"bit_or<", "or"}, {"bit_xor<", "xor"}};
    const char *ots = tspell(t, lc.clang_getCursorType(op)), *name = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof *ops && !name; i++) {
        const char *at = strstr(ots, ops[i][0]);
        if (at && (at == ots || at[-1] == ':')) name = ops[i][1];
    }
    if (!name) {
        refuse(t, c, "cooperative_groups::reduce with operator '%s': cg::plus, less, greater, bit_and, bit_or and bit_xor are translated",
               ots);
        return;
    }
    const int fp = !strcmp(sfx, "_f") || !strcmp(sfx, "_d"), bitwise = !strcmp(name, "and") || !strcmp(name, "or") || !strcmp(name, "xor");
    if (fp && bitwise) {
        refuse(t, c, "cooperative_groups::reduce with a bitwise operator on a floating-point value");
        return;
    }
    warp_use(t, c, "cooperative_groups::reduce");
    t->wreduce = 1;
    unsigned s0, e0, vs, ve;
    if (!t->collect) {
        if (!range(t, c, &s0, &e0) || !range(t, v, &vs, &ve)) {
            refuse(t, c, "cooperative_groups::reduce written through a macro is not translated");
            return;
        }
        char head[160];
        if (sfx[0] == '_') snprintf(head, sizeof head, "clrun_wreduce_%s%s(", name, sfx);
        else snprintf(head, sizeof head, "CLRUN_WCAT(clrun_wreduce_%s, %s)(", name, sfx); /* CLRUN_SFX_T: each copy's suffix */
        edit(t, s0, vs, head);
        edit(t, ve, e0, ")");
    }
    /* the value's own expression translated as any other; the group and the operator are gone */
    if (visit(v, c, t) == CXChildVisit_Recurse) lc.clang_visitChildren(v, visit, t);
}

/* A call on a warp tile (`tile.shfl_down(v, 1)`, `tile.thread_rank()`, … on a
 * cg::thread_block_tile<32>): written as the warp intrinsics' forms. 1 when c is one. */
static int tile_call(struct tr *t, CXCursor c)
{
    struct kids k = {.n = 0}, m = {.n = 0};
    lc.clang_visitChildren(c, collect_kids, &k);
    if (!k.n || lc.clang_getCursorKind(k.c[0]) != CXCursor_MemberRefExpr) return 0;
    lc.clang_visitChildren(k.c[0], collect_kids, &m);
    if (!m.n) return 0;
    if (!tile32_type(lc.clang_getCursorType(m.c[0])) && /* or a template's parameter a tile is passed to */
        !(lc.clang_getCursorKind(m.c[0]) == CXCursor_DeclRefExpr && group_param(t, t->cur_fn, lc.clang_getCursorReferenced(m.c[0])) == 2))
        return 0;
    char member[64];
    snprintf(member, sizeof member, "%s", cspell(t, k.c[0]));
    if (!*member && lc.clang_getCursorKind(m.c[m.n - 1]) == CXCursor_OverloadedDeclRef)
        snprintf(member, sizeof member, "%s", cspell(t, m.c[m.n - 1]));
    warp_use(t, c, "thread_block_tile<32>");
    if (t->collect) return 1;
    char to[320];
    unsigned s0, e0, cs, ce;
    if (!range(t, c, &s0, &e0) || !range(t, k.c[0], &cs, &ce)) {
        refuse(t, c, "thread_block_tile<32>::%s written through a macro is not translated", member);
        return 1;
    }
    if (!strcmp(member, "size") || !strcmp(member, "num_threads")) snprintf(to, sizeof to, "32u");
    else if (!strcmp(member, "thread_rank")) snprintf(to, sizeof to, "(%s & 31u)", block_rank);
    else if (!strcmp(member, "meta_group_rank")) snprintf(to, sizeof to, "(%s >> 5)", block_rank);
    else if (!strcmp(member, "meta_group_size")) snprintf(to, sizeof to, "((%s + 31u) >> 5)", block_size);
    else if (!strcmp(member, "sync")) snprintf(to, sizeof to, "clrun_syncwarp()");
    else {
        static const char *const fns[][2] = {{"shfl", "clrun_shfl"},       {"shfl_down", "clrun_shfl_down"},
                                             {"shfl_up", "clrun_shfl_up"}, {"shfl_xor", "clrun_shfl_xor"},
                                             {"any", "clrun_any"},         {"all", "clrun_all"},
                                             {"ballot", "clrun_ballot"}};
        size_t f = 0;
        while (f < sizeof fns / sizeof *fns && strcmp(fns[f][0], member)) f++;
        if (f == sizeof fns / sizeof *fns) {
            refuse(t, c, "thread_block_tile<32>::%s is not translated", member);
            return 1;
        }
        unsigned p = ce;
        while (p < t->len && isspace((unsigned char)t->src[p])) p++;
        if (p >= t->len || t->src[p] != '(' || e0 == 0 || t->src[e0 - 1] != ')') {
            refuse(t, c, "thread_block_tile<32>::%s written through a macro is not translated", member);
            return 1;
        }
        if (f < 4) {
            char sfx[80];
            if (k.n < 2 || !warp_suffix(t, lc.clang_getCursorType(k.c[1]), sfx, sizeof sfx)) {
                refuse(t, c, "thread_block_tile<32>::%s of a value not int, unsigned, float, long long, unsigned long long or double",
                       member);
                return 1;
            }
            if (!strncmp(sfx, "CLRUN_SFX_", 10)) snprintf(to, sizeof to, "CLRUN_WCAT(%s, %s)", fns[f][1], sfx);
            else snprintf(to, sizeof to, "%s%s", fns[f][1], sfx);
            edit(t, e0 - 1, e0 - 1, ", 32");
        } else snprintf(to, sizeof to, "%s", fns[f][1]);
        edit(t, cs, ce, to);
        edit(t, p + 1, p + 1, "0xffffffffu, ");
        return 1;
    }
    edit(t, s0, e0, to);
    return 1;
}

static enum CXChildVisitResult collect_top(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct tr *t = d;
    if (t->ntop < 256) t->top[t->ntop++] = c;
    return CXChildVisit_Continue;
}

/* Names OpenCL C's built-in functions take: a function of the user's so named is renamed clrun_NAME
 * (a kernel "step" is then clrun_step, which the comment ahead of the code says). */
static int cl_builtin(const char *n)
{
    static const char *const names[] = {
        "abs",      "acos",    "all",   "any",           "asin",        "atan",           "atan2",   "barrier",   "bitselect",
        "ceil",     "clamp",   "clz",   "copysign",      "cos",         "cross",          "degrees", "distance",  "dot",
        "exp",      "exp2",    "fabs",  "fast_distance", "fast_length", "fast_normalize", "floor",   "fma",       "fmax",
        "fmin",     "fmod",    "fract", "hadd",          "hypot",       "isinf",          "isnan",   "length",    "log",
        "log2",     "mad",     "max",   "min",           "mix",         "mul24",          "nan",     "normalize", "popcount",
        "pow",      "radians", "rhadd", "rint",          "rotate",      "round",          "rsqrt",   "select",    "shuffle",
        "shuffle2", "sign",    "sin",   "smoothstep",    "sqrt",        "step",           "tan",     "tanh",      "trunc",
        "upsample", "prefetch"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(n, names[i])) return 1;
    return 0;
}

/* Words OpenCL C reserves that CUDA leaves free (a kernel named "kernel", a variable "local"). */
static int cl_reserved(const char *n)
{
    static const char *const names[] = {"kernel", "global",    "local",   "constant",  "private",   "read_only", "write_only", "read_write",
                                        "half",   "sampler_t", "event_t", "image1d_t", "image2d_t", "image3d_t", "restrict"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(n, names[i])) return 1;
    return 0;
}

/* The declaration's name at its location renamed clrun_NAME where OpenCL C reserves it. */
static void rename_decl(struct tr *t, CXCursor d)
{
    CXString ns = lc.clang_getCursorSpelling(d);
    const char *n = lc.clang_getCString(ns);
    if (*n && cl_reserved(n)) {
        unsigned at;
        CXFile ff;
        lc.clang_getExpansionLocation(lc.clang_getCursorLocation(d), &ff, NULL, NULL, &at);
        char to[80];
        snprintf(to, sizeof to, "clrun_%s", n);
        if (is_main(ff) && at + strlen(n) <= t->len && !strncmp(t->src + at, n, strlen(n))) edit(t, at, at + (unsigned)strlen(n), to);
    }
    lc.clang_disposeString(ns);
}

/* Sets *(int *)d where a function body declares a pointer or reference variable. */
static enum CXChildVisitResult find_pointer_var(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (lc.clang_getCursorKind(c) == CXCursor_VarDecl) {
        const enum CXTypeKind k = lc.clang_getCanonicalType(lc.clang_getCursorType(c)).kind;
        if (k == CXType_Pointer || k == CXType_LValueReference) {
            *(int *)d = 1;
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Recurse;
}

static void function(struct tr *t, CXCursor f)
{
    {
        CXString fs = lc.clang_getCursorSpelling(f);
        const char *fname = lc.clang_getCString(fs);
        if ((cl_builtin(fname) || cl_reserved(fname)) && !t->collect) {
            unsigned at;
            CXFile ff;
            lc.clang_getExpansionLocation(lc.clang_getCursorLocation(f), &ff, NULL, NULL, &at);
            char to[80];
            snprintf(to, sizeof to, "clrun_%s", fname);
            if (is_main(ff) && at + strlen(fname) <= t->len && !strncmp(t->src + at, fname, strlen(fname))) {
                edit(t, at, at + (unsigned)strlen(fname), to);
                if (has_child_kind(f, CXCursor_CUDAGlobalAttr) && lc.clang_isCursorDefinition(f)) {
                    const size_t nl = strlen(t->note);
                    snprintf(t->note + nl, sizeof t->note - nl, "// clrun: kernel %s is %s (OpenCL C reserves the name %s)\n", fname, to,
                             fname);
                }
            }
        }
        lc.clang_disposeString(fs);
    }
    const int kernel = has_child_kind(f, CXCursor_CUDAGlobalAttr);
    if (kernel && lc.clang_getCanonicalType(lc.clang_getResultType(lc.clang_getCursorType(f))).kind != CXType_Void)
        refuse(t, f, "kernel '%s' must return void", cspell(t, f));
    if (kernel && lc.clang_Cursor_getStorageClass(f) == CX_SC_Static) { /* OpenCL C: a kernel cannot be static */
        unsigned fs, fe, at;
        CXFile ff;
        lc.clang_getExpansionLocation(lc.clang_getCursorLocation(f), &ff, NULL, NULL, &at);
        if (is_main(ff) && range(t, f, &fs, &fe))
            for (unsigned i = fs; i + 6 <= at; i++)
                if (!strncmp(t->src + i, "static", 6) && (i == 0 || !(isalnum((unsigned char)t->src[i - 1]) || t->src[i - 1] == '_')) &&
                    !(isalnum((unsigned char)t->src[i + 6]) || t->src[i + 6] == '_')) {
                    edit(t, i, i + 6, "");
                    break;
                }
    }
    if (!kernel && !t->collect && lc.clang_isCursorDefinition(f) && multi_space(t, f)) {
        /* copies per combination of its pointers' spaces (expand_clones): marked here, named at the calls */
        int ptr_var = 0;
        lc.clang_visitChildren(f, find_pointer_var, &ptr_var);
        struct clone *cl = clone_of(t, f, 1);
        unsigned fs, fe, at;
        CXFile ff;
        lc.clang_getExpansionLocation(lc.clang_getCursorLocation(f), &ff, NULL, NULL, &at);
        CXString fsp = lc.clang_getCursorSpelling(f);
        const size_t nl = strlen(lc.clang_getCString(fsp));
        lc.clang_disposeString(fsp);
        if (ptr_var)
            refuse(t, f,
                   "device function '%s' is called with pointers into several address spaces and declares pointer variables: not "
                   "translated yet",
                   cspell(t, f));
        else if (!cl) refuse(t, f, "more than 16 device functions called with pointers into several address spaces");
        else if (is_main(ff) && range(t, f, &fs, &fe)) {
            def_lines(t, fs, fe, &cl->first_line, &cl->last_line);
            char mark[48];
            snprintf(mark, sizeof mark, "/*@CLRUN_FN%d{@*/", (int)(cl - t->clones));
            edit(t, fs, fs, mark);
            snprintf(mark, sizeof mark, "/*@}CLRUN_FN%d@*/", (int)(cl - t->clones));
            edit(t, fe, fe, mark);
            edit(t, at + (unsigned)nl, at + (unsigned)nl, "/*@CLRUN_NAME@*/");
        }
    }
    lc.clang_visitChildren(f, attrs, t);
    const int n = fn_nargs(f);
    for (int i = 0; i < n; i++) {
        param(t, f, (unsigned)i, fn_arg(f, (unsigned)i), kernel);
        rename_decl(t, fn_arg(f, (unsigned)i));
    }
    t->cur_fn = f, t->in_kernel = kernel, t->kused = 0, t->ntop = 0, t->body_open = 0;
    struct kids fk = {.n = 0};
    lc.clang_visitChildren(f, collect_kids, &fk);
    for (int i = 0; i < fk.n; i++)
        if (lc.clang_getCursorKind(fk.c[i]) == CXCursor_CompoundStmt) {
            unsigned bs, be;
            if (range(t, fk.c[i], &bs, &be)) t->body_open = bs + 1;
            lc.clang_visitChildren(fk.c[i], collect_top, t);
        }
    for (int i = 0; i < t->nboolfix; i++)
        if (t->body_open) edit(t, t->body_open, t->body_open, t->boolfix[i]);
    t->nboolfix = 0;
    lc.clang_visitChildren(f, visit, t);
    t->in_kernel = 0;
    if (!kernel || !t->kused || t->collect || !lc.clang_isCursorDefinition(f)) return;
    /* the variables it reads, as its last arguments: after its last parameter, or inside its ( ) */
    char extra[1024] = "", takes[512] = "";
    for (int h = 0; h < t->nhoists; h++)
        if (t->kused & (1u << h)) {
            const size_t used = strlen(extra);
            snprintf(extra + used, sizeof extra - used, "%s%s", used || n ? ", " : "", t->hoists[h].param);
            const size_t tl = strlen(takes);
            snprintf(takes + tl, sizeof takes - tl, " %s (%s)", t->hoists[h].name, t->hoists[h].what);
        }
    struct tmpl *tm = lc.clang_getCursorKind(f) == CXCursor_FunctionTemplate ? tmpl_of(t, f, 0) : NULL;
    if (tm) snprintf(tm->takes, sizeof tm->takes, "%s", takes); /* noted per instantiation (note_instances) */
    else {
        CXString fs = lc.clang_getCursorSpelling(f);
        const size_t nl = strlen(t->note);
        snprintf(t->note + nl, sizeof t->note - nl, "// clrun: kernel %s takes after its own arguments:%s\n", lc.clang_getCString(fs),
                 takes);
        lc.clang_disposeString(fs);
    }
    unsigned s0 = 0, e0 = 0;
    if (n > 0) {
        if (range(t, fn_arg(f, (unsigned)n - 1), &s0, &e0)) edit(t, e0, e0, extra);
        return;
    }
    CXToken *tok = NULL;
    unsigned nt = 0;
    /* from the name on: the extent may start inside a macro (__global__), which tokenizes to nothing */
    lc.clang_tokenize(t->tu, lc.clang_getRange(lc.clang_getCursorLocation(f), lc.clang_getRangeEnd(lc.clang_getCursorExtent(f))), &tok,
                      &nt);
    for (unsigned i = 0; i + 1 < nt; i++) {
        CXString w = lc.clang_getTokenSpelling(t->tu, tok[i]);
        const int open = !strcmp(lc.clang_getCString(w), "(");
        lc.clang_disposeString(w);
        if (open) {
            CXFile ff;
            lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[i])), &ff, NULL, NULL, &e0);
            CXString w2 = lc.clang_getTokenSpelling(t->tu, tok[i + 1]);
            if (!strcmp(lc.clang_getCString(w2), "void")) { /* f(void) */
                unsigned vs, ve;
                lc.clang_getExpansionLocation(lc.clang_getRangeStart(lc.clang_getTokenExtent(t->tu, tok[i + 1])), NULL, NULL, NULL, &vs);
                lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[i + 1])), NULL, NULL, NULL, &ve);
                if (is_main(ff)) edit(t, vs, ve, extra);
            } else if (is_main(ff)) edit(t, e0, e0, extra);
            lc.clang_disposeString(w2);
            break;
        }
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
}

/* What a refused header brings, or NULL. */
static const char *refused_header(CXCursor inc)
{
    static const struct {
        const char *prefix, *what;
    } list[] = {{"cooperative_groups/memcpy_async", "cooperative groups' asynchronous copies"},
                {"cuda_fp16", "half-precision types (__half)"},
                {"cuda_bf16", "bfloat16 types"},
                {"mma.h", "tensor-core fragments (wmma)"},
                {"helper_", "the CUDA samples' helpers"},
                {"curand", "cuRAND's device API"},
                {"cub/", "CUB"},
                {"thrust/", "Thrust"}};
    CXString n = lc.clang_getCursorSpelling(inc);
    const char *name = lc.clang_getCString(n), *what = NULL;
    for (size_t i = 0; i < sizeof list / sizeof *list && !what; i++)
        if (!strncmp(name, list[i].prefix, strlen(list[i].prefix))) what = list[i].what;
    lc.clang_disposeString(n);
    return what;
}

/* A refused header among the file's #include lines: its refusal goes before clang's errors about
 * what the header would have declared. */
static enum CXChildVisitResult find_refused_include(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct tr *t = d;
    if (lc.clang_getCursorKind(c) == CXCursor_InclusionDirective && in_main(t, c)) {
        const char *why = refused_header(c);
        if (why) {
            CXString n = lc.clang_getCursorSpelling(c);
            refuse(t, c, "#include <%s>: %s are not translated", lc.clang_getCString(n), why);
            lc.clang_disposeString(n);
            return CXChildVisit_Break;
        }
        if (!lc.clang_getIncludedFile(c)) { /* include.c pastes in what it finds: this one it did not */
            CXString n = lc.clang_getCursorSpelling(c);
            unsigned s = 0, e = 0;
            int angled = 0;
            if (range(t, c, &s, &e))
                for (unsigned i = s; i < e && i < t->len && !angled && t->src[i] != '"'; i++) angled = t->src[i] == '<';
            refuse(t, c, "#include %c%s%c: not found %sin the -I directories of the options", angled ? '<' : '"', lc.clang_getCString(n),
                   angled ? '>' : '"', angled ? "" : "beside the file or ");
            lc.clang_disposeString(n);
            return CXChildVisit_Break;
        }
    }
    return CXChildVisit_Continue;
}

/* The cooperative-groups type or function cursor d belongs to: "thread_block", "cooperative_groups"
 * (a free function), another group's name, or NULL where it is none of theirs. Into buf. */
static const char *cg_owner(CXCursor d, char *buf, size_t n)
{
    if (lc.clang_Cursor_isNull(d)) return NULL;
    CXCursor p = lc.clang_getCursorSemanticParent(d);
    for (int depth = 0; depth < 3 && !lc.clang_Cursor_isNull(p); depth++, p = lc.clang_getCursorSemanticParent(p)) {
        const enum CXCursorKind k = lc.clang_getCursorKind(p);
        if (k == CXCursor_TranslationUnit) break;
        CXString ps = lc.clang_getCursorSpelling(p);
        snprintf(buf, n, "%s", lc.clang_getCString(ps));
        lc.clang_disposeString(ps);
        if (k == CXCursor_Namespace && !strcmp(buf, "cooperative_groups")) {
            if (depth == 0) return buf; /* a free function */
            CXString ds = lc.clang_getCursorSpelling(lc.clang_getCursorSemanticParent(d));
            snprintf(buf, n, "%s", lc.clang_getCString(ds));
            lc.clang_disposeString(ds);
            return buf;
        }
    }
    return NULL;
}

/* Whether type ty is cooperative_groups::thread_block (by value or const reference). */
static int cg_block_type(CXType ty)
{
    char n[160];
    return !strcmp(group_type_name(ty, n, sizeof n), "cooperative_groups::thread_block");
}

/* The list item at [s, e) (a parameter, an argument) removed with its comma. */
static void remove_list_item(struct tr *t, unsigned s, unsigned e)
{
    unsigned b = s;
    while (b > 0 && isspace((unsigned char)t->src[b - 1])) b--;
    if (b > 0 && t->src[b - 1] == ',') {
        edit(t, b - 1, e, "");
        return;
    }
    unsigned q = e;
    while (q < t->len && isspace((unsigned char)t->src[q])) q++;
    if (q < t->len && t->src[q] == ',') {
        q++;
        while (q < t->len && isspace((unsigned char)t->src[q])) q++;
        edit(t, s, q, "");
    } else edit(t, s, e, "");
}

/* Whether type ty is one of cooperative_groups' group types. */
static int cg_type(CXType ty)
{
    CXString sp = lc.clang_getTypeSpelling(lc.clang_getCanonicalType(ty));
    const char *n = lc.clang_getCString(sp);
    if (!strncmp(n, "const ", 6)) n += 6;
    const int yes = !strncmp(n, "cooperative_groups::", 20);
    lc.clang_disposeString(sp);
    return yes;
}

/* A call into cooperative_groups: the block-level group's members written in OpenCL C (1), refused by
 * name (1, t->failed set), or not one of theirs (0). */
static int cg_call(struct tr *t, CXCursor c)
{
    char owner[64];
    CXCursor d = lc.clang_getCursorReferenced(c);
    if (!cg_owner(d, owner, sizeof owner)) return 0;
    CXString ns = lc.clang_getCursorSpelling(d);
    const char *name = lc.clang_getCString(ns);
    const int block = !strcmp(owner, "thread_block"), free_fn = !strcmp(owner, "cooperative_groups");
    const char *to = NULL;
    if ((block && !strcmp(name, "sync")) || (free_fn && !strcmp(name, "sync") && lc.clang_Cursor_getNumArguments(c) == 1 &&
                                             cg_block_type(lc.clang_getCursorType(lc.clang_Cursor_getArgument(c, 0)))))
        to = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)";
    else if (block && !strcmp(name, "thread_rank")) to = block_rank;
    else if (block && (!strcmp(name, "size") || !strcmp(name, "num_threads"))) to = block_size;
    else if (block && !strcmp(name, "group_index")) to = "((uint3)((uint)get_group_id(0), (uint)get_group_id(1), (uint)get_group_id(2)))";
    else if (block && !strcmp(name, "thread_index")) to = "((uint3)((uint)get_local_id(0), (uint)get_local_id(1), (uint)get_local_id(2)))";
    else if (block && (!strcmp(name, "group_dim") || !strcmp(name, "dim_threads")))
        to = "((uint3)((uint)get_local_size(0), (uint)get_local_size(1), (uint)get_local_size(2)))";
    else if (block && !strcmp(name, "thread_block")) {
        /* its copy, where the handle is passed on: the argument leaves */
    } else if (free_fn && !strcmp(name, "this_thread_block")) {
        /* as an argument it leaves with its parameter; elsewhere the compiler names the line */
    } else if (free_fn && !strcmp(name, "reduce")) {
        cg_reduce_call(t, c);
    } else if (free_fn) refuse(t, c, "cooperative_groups::%s (grids, tiles, coalesced groups) is not translated", name);
    else if (!strcmp(owner, "plus") || !strcmp(owner, "less") || !strcmp(owner, "greater") || !strncmp(owner, "bit_", 4)) {
        const char *ty = tspell(t, lc.clang_getCursorType(c)), *at = strstr(ty, owner);
        refuse(t, c, "cooperative_groups::%s other than as cg::reduce's operator is not translated", at ? at : owner);
    } else refuse(t, c, "cooperative_groups::%s::%s (warp-level and grid groups) is not translated", owner, name);
    unsigned s0, e0;
    if (to && range(t, c, &s0, &e0)) edit(t, s0, e0, to);
    lc.clang_disposeString(ns);
    return 1;
}

/* `__shared__ T name[N]…` in device function f: one block-wide variable, as in CUDA, declared by
 * every kernel that calls f (shared_args) and passed to f as a last parameter `__local T (*name)…`. */
static void shared_in_function(struct tr *t, CXCursor c, CXCursor parent)
{
    CXCursor f = t->cur_fn;
    int i = 0;
    while (i < t->nfsh && !lc.clang_equalCursors(t->fsh[i].decl, c)) i++;
    unsigned ds, de, at;
    CXFile ff;
    lc.clang_getExpansionLocation(lc.clang_getCursorLocation(c), &ff, NULL, NULL, &at);
    CXString ns = lc.clang_getCursorSpelling(c);
    const char *name = lc.clang_getCString(ns);
    if (lc.clang_getCursorKind(parent) != CXCursor_DeclStmt || !range(t, parent, &ds, &de) || !is_main(ff) || at < ds || at >= de) {
        refuse(t, c, "__shared__ '%s' in a device function, declared through a macro or with others: not translated", name);
        lc.clang_disposeString(ns);
        return;
    }
    if (i == t->nfsh) {
        if (i == 32) {
            refuse(t, c, "more than 32 __shared__ variables in device functions");
            lc.clang_disposeString(ns);
            return;
        }
        struct fshared *v = &t->fsh[t->nfsh++];
        v->fn = f, v->decl = c;
        snprintf(v->name, sizeof v->name, "%s", name);
        /* the text between __shared__ and the name, and after the name up to the ';' */
        const char *src = t->src;
        unsigned b = ds;
        const char *kw = strstr(src + ds, "__shared__");
        if (kw && (unsigned)(kw - src) < at) b = (unsigned)(kw - src) + 10;
        const unsigned ne = at + (unsigned)strlen(name);
        unsigned e = ne;
        while (e < de && src[e] != ';') e++;
        snprintf(v->before, sizeof v->before, "%.*s", (int)(at - b), src + b);
        snprintf(v->after, sizeof v->after, "%.*s", (int)(e - ne), src + ne);
    }
    const struct fshared *v = &t->fsh[i];
    set_var(t, c, SP_LOCAL);
    lc.clang_disposeString(ns);
    if (t->collect) return;
    edit(t, ds, de, ""); /* the declaration leaves the function */
    /* the parameter: the array's first dimension becomes the pointer */
    const char *a = v->after;
    while (*a == ' ') a++;
    const char *rest = a;
    if (*a == '[') {
        int depth = 0;
        for (rest = a; *rest; rest++) {
            depth += (*rest == '[') - (*rest == ']');
            if (!depth) {
                rest++;
                break;
            }
        }
    }
    char param[400];
    const int n = fn_nargs(f);
    if (*a == '[') snprintf(param, sizeof param, ", __local %s(*%s)%s", v->before, v->name, rest);
    else snprintf(param, sizeof param, ", __local %s*%s", v->before, v->name); /* a scalar: its uses are (*name) */
    unsigned s0, e0;
    if (n > 0 && range(t, fn_arg(f, (unsigned)n - 1), &s0, &e0)) edit(t, e0, e0, param);
    else if (n == 0) { /* f() or f(void): from the name on, in the text */ unsigned fat;
        CXFile f2;
        lc.clang_getExpansionLocation(lc.clang_getCursorLocation(f), &f2, NULL, NULL, &fat);
        CXString fs = lc.clang_getCursorSpelling(f);
        unsigned q = fat + (unsigned)strlen(lc.clang_getCString(fs));
        lc.clang_disposeString(fs);
        while (q < t->len && isspace((unsigned char)t->src[q])) q++;
        if (!is_main(f2) || q >= t->len || t->src[q] != '(') {
            refuse(t, c, "the parameter list of the function holding __shared__ '%s' was not found", v->name);
            return;
        }
        unsigned r = q + 1;
        while (r < t->len && isspace((unsigned char)t->src[r])) r++;
        if (r + 4 <= t->len && !strncmp(t->src + r, "void", 4)) edit(t, r, r + 4, "");
        edit(t, q + 1, q + 1, param + 2); /* without its ", " */
    }
}

/* A call to function callee (spec: the specialization called, its instance j when a template): its
 * functions' __shared__ variables passed on, each declared at the top of the calling kernel. */
static void shared_args(struct tr *t, CXCursor call, CXCursor callee, int inst)
{
    int any = 0;
    for (int i = 0; i < t->nfsh; i++) any |= lc.clang_equalCursors(t->fsh[i].fn, callee);
    if (!any || t->collect) return;
    CXString cs = lc.clang_getCursorSpelling(callee);
    const char *fname = lc.clang_getCString(cs);
    if (!t->in_kernel) {
        refuse(t, call, "'%s', which has __shared__ variables, is called from a device function: only calls from kernels are translated",
               fname);
        lc.clang_disposeString(cs);
        return;
    }
    unsigned s0, e0;
    if (!range(t, call, &s0, &e0) || e0 == 0 || t->src[e0 - 1] != ')') {
        refuse(t, call, "a call to '%s' written through a macro: its __shared__ variables cannot be passed", fname);
        lc.clang_disposeString(cs);
        return;
    }
    const int nargs = lc.clang_Cursor_getNumArguments(call);
    char args[600] = "";
    const struct tmpl *m = inst >= 0 ? tmpl_of(t, callee, 0) : NULL;
    for (int i = 0; i < t->nfsh; i++) {
        const struct fshared *v = &t->fsh[i];
        if (!lc.clang_equalCursors(v->fn, callee)) continue;
        char var[128];
        if (inst >= 0) snprintf(var, sizeof var, "%s_clrun_%s_t%d", v->name, fname, inst);
        else snprintf(var, sizeof var, "%s_clrun_%s", v->name, fname);
        const size_t al = strlen(args);
        const char *va = v->after;
        while (*va == ' ') va++;
        snprintf(args + al, sizeof args - al, "%s%s%s", nargs > 0 || al ? ", " : "", *va == '[' ? "" : "&", var);
        /* the kernel's declaration: a template's parameters in its dimensions written as this instance's arguments */
        char decl[800], after[400] = "";
        const char *q = v->after;
        size_t w = 0;
        while (*q && w + 100 < sizeof after) {
            if (m && (isalpha((unsigned char)*q) || *q == '_')) {
                const char *b = q;
                while (isalnum((unsigned char)*q) || *q == '_') q++;
                int p = 0;
                while (p < m->nparams && ((size_t)(q - b) != strlen(m->pname[p]) || strncmp(b, m->pname[p], (size_t)(q - b)))) p++;
                w += (size_t)snprintf(after + w, sizeof after - w, "%.*s", p < m->nparams ? (int)strlen(m->arg[inst][p]) : (int)(q - b),
                                      p < m->nparams ? m->arg[inst][p] : b);
            } else after[w++] = *q++, after[w] = 0;
        }
        char before[200];
        snprintf(before, sizeof before, "%s", v->before);
        if (m) { /* a type parameter in the element type */
            for (int p = 0; p < m->nparams; p++)
                if (!m->ptype[p][0]) {
                    char *hit = strstr(before, m->pname[p]);
                    const size_t pl = strlen(m->pname[p]);
                    if (hit && (hit == before || !(isalnum((unsigned char)hit[-1]) || hit[-1] == '_')) &&
                        !(isalnum((unsigned char)hit[pl]) || hit[pl] == '_')) {
                        char tmp[200];
                        snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(hit - before), before, m->arg[inst][p], hit + pl);
                        snprintf(before, sizeof before, "%s", tmp);
                    }
                }
        }
        snprintf(decl, sizeof decl, "\n    __local %s%s%s;", before, var, after);
        if (t->body_open) edit(t, t->body_open, t->body_open, decl);
    }
    edit(t, e0 - 1, e0 - 1, args);
    lc.clang_disposeString(cs);
}

/* Whether call c (in a template's body) names a function template: `f<T>(x)`, or a dependent `f(x)`
 * with a template among its candidates; its name into the struct's buffer. */
struct tref {
    int yes;
    char name[64];
    CXCursor tpl; /* the (first) template named */
};

static void check_template_decl(CXCursor d, struct tref *r)
{
    if (lc.clang_getCursorKind(d) == CXCursor_OverloadedDeclRef) {
        for (unsigned i = 0; i < lc.clang_getNumOverloadedDecls(d); i++) check_template_decl(lc.clang_getOverloadedDecl(d, i), r);
        return;
    }
    if (lc.clang_getCursorKind(d) == CXCursor_FunctionTemplate && !r->yes) {
        r->tpl = d;
        CXString n = lc.clang_getCursorSpelling(d);
        snprintf(r->name, sizeof r->name, "%s", lc.clang_getCString(n));
        lc.clang_disposeString(n);
        r->yes = 1;
    }
}

static enum CXChildVisitResult find_template_ref(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    const enum CXCursorKind k = lc.clang_getCursorKind(c);
    if (k == CXCursor_OverloadedDeclRef) check_template_decl(c, d);
    else if (k == CXCursor_DeclRefExpr || k == CXCursor_TemplateRef) check_template_decl(lc.clang_getCursorReferenced(c), d);
    return lc.clang_isExpression(k) || k == CXCursor_OverloadedDeclRef ? CXChildVisit_Recurse : CXChildVisit_Continue;
}

static int calls_template(CXCursor call, struct tref *r)
{
    check_template_decl(lc.clang_getCursorReferenced(call), r);
    struct kids k = {.n = 0};
    lc.clang_visitChildren(call, collect_kids, &k);
    if (k.n) {
        find_template_ref(k.c[0], call, r);
        lc.clang_visitChildren(k.c[0], find_template_ref, r);
    }
    return r->yes;
}

/* The text of tokens [a, b) of the user's file, into buf. */
static void token_text(struct tr *t, CXToken *tok, unsigned a, unsigned b, char *buf, size_t n)
{
    unsigned s0 = 0, e0 = 0;
    buf[0] = 0;
    if (a >= b) return;
    lc.clang_getExpansionLocation(lc.clang_getTokenLocation(t->tu, tok[a]), NULL, NULL, NULL, &s0);
    lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[b - 1])), NULL, NULL, NULL, &e0);
    if (e0 > s0 && e0 <= t->len) snprintf(buf, n, "%.*s", (int)(e0 - s0), t->src + s0);
}

/* A call in a template's body to template tr->tpl (`warpReduceSum<T>(mask, v)`, `f(x)` deduced from
 * arguments of its type parameters' types): the callee written CLRUN_TCk, a macro each copy of the
 * caller defines as the callee's copy for its arguments (resolve_sites). */
static void template_site(struct tr *t, CXCursor c, const struct tref *tr)
{
    if (in_main(t, tr->tpl)) { /* a warp tile or the thread block passed: the argument and its parameter leave */
        struct kids g = {.n = 0};
        lc.clang_visitChildren(c, collect_kids, &g);
        for (int a = 0; a + 1 < g.n && !t->failed; a++) group_argument(t, tr->tpl, a, g.c[a + 1]);
    }
    if (t->collect) return;
    struct tmpl *caller = tmpl_of(t, t->cur_fn, 0), *callee = tmpl_of(t, tr->tpl, 0);
    char owner[64];
    if (!in_main(t, tr->tpl) && cg_owner(tr->tpl, owner, sizeof owner)) {
        refuse(t, c, "cooperative_groups::%s%s%s (collectives, multi-warp tiles) is not translated",
               strcmp(owner, "cooperative_groups") ? owner : "", strcmp(owner, "cooperative_groups") ? "::" : "", tr->name);
        return;
    }
    if (!caller || !callee || !in_main(t, tr->tpl)) {
        refuse(t, c, "template '%s' calls '%s', which is not a template defined ahead of it in this file", cspell(t, t->cur_fn), tr->name);
        return;
    }
    for (int i = 0; i < t->nfsh; i++)
        if (lc.clang_equalCursors(t->fsh[i].fn, tr->tpl)) {
            refuse(t, c, "template '%s' calls template '%s', which has __shared__ variables: not translated", cspell(t, t->cur_fn),
                   tr->name);
            return;
        }
    if (t->nsites == 32) {
        refuse(t, c, "more than 32 calls of templates in templates");
        return;
    }
    struct tsite *st = &t->sites[t->nsites];
    memset(st, 0, sizeof *st);
    st->caller = (int)(caller - t->tmpls), st->callee = (int)(callee - t->tmpls);
    struct kids k = {.n = 0};
    lc.clang_visitChildren(c, collect_kids, &k);
    unsigned cs, ce;
    if (!k.n || !range(t, k.c[0], &cs, &ce)) {
        refuse(t, c, "a call of template '%s' written through a macro is not translated", tr->name);
        return;
    }
    /* the arguments written: `name < a, b >` */
    CXToken *tok = NULL;
    unsigned nt = 0;
    lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(k.c[0]), &tok, &nt);
    unsigned open = 0;
    while (open < nt) {
        CXString w = lc.clang_getTokenSpelling(t->tu, tok[open]);
        const int lt = !strcmp(lc.clang_getCString(w), "<");
        lc.clang_disposeString(w);
        if (lt) break;
        open++;
    }
    if (open < nt) {
        int depth = 0;
        unsigned from = open + 1;
        for (unsigned i = open; i < nt && st->nargs <= 8; i++) {
            CXString w = lc.clang_getTokenSpelling(t->tu, tok[i]);
            const char *ws = lc.clang_getCString(w);
            const int d0 = depth;
            depth += !strcmp(ws, "<") + !strcmp(ws, "(") - !strcmp(ws, ">") - !strcmp(ws, ")") - 2 * !strcmp(ws, ">>");
            if ((d0 == 1 && !strcmp(ws, ",")) || depth <= 0) {
                if (st->nargs < 8) token_text(t, tok, from, i, st->arg[st->nargs], sizeof st->arg[0]);
                st->nargs++, from = i + 1;
            }
            lc.clang_disposeString(w);
            if (depth <= 0) break;
        }
    }
    lc.clang_disposeTokens(t->tu, tok, nt);
    /* the rest deduced: a function parameter of type P, P * or P & gives P the argument's type */
    for (int p = st->nargs; p < callee->nparams && p < 8; p++) {
        const int np = fn_nargs(tr->tpl);
        for (int a = 0; a < np && a + 1 < k.n && !st->arg[p][0]; a++) {
            char pt[96];
            snprintf(pt, sizeof pt, "%s", tspell(t, lc.clang_getCursorType(fn_arg(tr->tpl, (unsigned)a))));
            char *q = pt;
            if (!strncmp(q, "const ", 6)) q += 6;
            size_t ql = strlen(q);
            while (ql && (q[ql - 1] == '&' || q[ql - 1] == '*' || q[ql - 1] == ' ')) q[--ql] = 0;
            if (strcmp(q, callee->pname[p]) || callee->ptype[p][0]) continue;
            char at[96];
            snprintf(at, sizeof at, "%s", tspell(t, lc.clang_getCursorType(k.c[a + 1])));
            char *r = at;
            if (!strncmp(r, "const ", 6)) r += 6;
            snprintf(st->arg[p], sizeof st->arg[p], "%s", r);
        }
        if (!st->arg[p][0]) {
            refuse(t, c, "template '%s' calls template '%s' with its parameter '%s' neither written nor deduced from an argument",
                   cspell(t, t->cur_fn), tr->name, callee->pname[p]);
            return;
        }
        st->nargs = p + 1;
    }
    if (st->nargs != callee->nparams) {
        refuse(t, c, "template '%s' calls template '%s' with %d arguments for %d parameters (defaults are not translated)",
               cspell(t, t->cur_fn), tr->name, st->nargs, callee->nparams);
        return;
    }
    char to[32];
    snprintf(to, sizeof to, "CLRUN_TC%d", t->nsites++);
    edit(t, cs, ce, to);
}

/* Each template's call of a template: for every copy of the caller, the callee's copy for the
 * arguments written (the caller's parameters replaced by that copy's arguments), added as needed,
 * until no copy is added. */
static void resolve_sites(struct tr *t)
{
    for (int round = 0, added = 1; added && round < 16 && !t->failed; round++) {
        added = 0;
        for (int i = 0; i < t->nsites && !t->failed; i++) {
            struct tsite *st = &t->sites[i];
            struct tmpl *a = &t->tmpls[st->caller], *b = &t->tmpls[st->callee];
            for (int d = 0; d < t->ndeferred && a->ninst; d++)
                if (lc.clang_equalCursors(t->deferred[d].tpl, b->tpl)) {
                    snprintf(t->err, t->errn, "%s (template '%s', called by template '%s')", t->deferred[d].why, cspell(t, b->tpl),
                             cspell(t, a->tpl));
                    t->failed = 1;
                    return;
                }
            for (int j = 0; j < a->ninst; j++) {
                char args[8][96];
                memset(args, 0, sizeof args);
                for (int p = 0; p < st->nargs; p++) {
                    const char *q = st->arg[p];
                    char *w = args[p], *end = args[p] + sizeof args[p] - 1;
                    while (*q && w < end) {
                        if (isalpha((unsigned char)*q) || *q == '_') {
                            const char *id = q;
                            while (isalnum((unsigned char)*q) || *q == '_') q++;
                            int m = 0;
                            while (m < a->nparams &&
                                   ((size_t)(q - id) != strlen(a->pname[m]) || strncmp(id, a->pname[m], (size_t)(q - id))))
                                m++;
                            w += snprintf(w, (size_t)(end - w), "%.*s", m < a->nparams ? (int)strlen(a->arg[j][m]) : (int)(q - id),
                                          m < a->nparams ? a->arg[j][m] : id);
                        } else *w++ = *q++;
                    }
                    *w = 0;
                    if (b->ptype[p][0]) { /* an integer: written as instance_of writes it */
                        char *e2;
                        const long long v = strtoll(args[p], &e2, 0);
                        if (*e2 == 0 && args[p][0]) {
                            const int uns = strstr(b->ptype[p], "unsigned") || strstr(b->ptype[p], "size_t");
                            if (uns) snprintf(args[p], sizeof args[p], "((%s)%lluu)", b->ptype[p], (unsigned long long)v);
                            else snprintf(args[p], sizeof args[p], "((%s)%lld)", b->ptype[p], v);
                        }
                    }
                }
                int k = 0;
                while (k < b->ninst && memcmp(b->arg[k], args, sizeof args)) k++;
                if (k == b->ninst) {
                    if (k == 8) {
                        snprintf(t->err, t->errn, "%s: template '%s' is instantiated with more than 8 argument lists", t->name,
                                 cspell(t, b->tpl));
                        t->failed = 1;
                        return;
                    }
                    memcpy(b->arg[b->ninst++], args, sizeof args);
                    added = 1;
                }
                st->target[j] = k;
            }
        }
    }
}

/* A call to a specialization of function template tp: the copy for its arguments (found or added),
 * the callee (`f<4, float>`, `f`) written as that copy's name. */
static int instance_of(struct tr *t, CXCursor call, CXCursor spec, CXCursor tp, const char *name, unsigned line)
{
    for (int i = 0; i < t->ndeferred; i++)
        if (lc.clang_equalCursors(t->deferred[i].tpl, tp) && !t->failed) {
            if (!line) lc.clang_getExpansionLocation(lc.clang_getCursorLocation(call), NULL, &line, NULL, NULL);
            snprintf(t->err, t->errn, "%s (template '%s', instantiated at %s:%u)", t->deferred[i].why, name, t->name, line);
            t->failed = 1;
            return -1;
        }
    struct tmpl *m = tmpl_of(t, tp, 0);
    if (!m) {
        refuse(t, call, "template '%s' is not instantiated here (more than 16 templates, or one defined after its use)", name);
        return -1;
    }
    const int na = lc.clang_Cursor_getNumTemplateArguments(spec);
    if (na != m->nparams || na > 8) {
        refuse(t, call, "template '%s' with %d arguments for %d parameters: not instantiated", name, na, m->nparams);
        return -1;
    }
    char args[8][96];
    memset(args, 0, sizeof args); /* compared whole with the copies made */
    for (int i = 0; i < na; i++) {
        const enum CXTemplateArgumentKind k = lc.clang_Cursor_getTemplateArgumentKind(spec, (unsigned)i);
        if (k == CXTemplateArgumentKind_Type) {
            CXString ts = lc.clang_getTypeSpelling(lc.clang_getCanonicalType(lc.clang_Cursor_getTemplateArgumentType(spec, (unsigned)i)));
            const char *ty = lc.clang_getCString(ts);
            char *w = args[i];
            for (const char *q = ty; *q && w < args[i] + sizeof args[i] - 1;) /* long long → long (OpenCL's 64 bits) */
                if (!strncmp(q, "long long", 9)) {
                    w += snprintf(w, (size_t)(args[i] + sizeof args[i] - w), "long");
                    q += 9;
                } else *w++ = *q++;
            *w = 0;
            lc.clang_disposeString(ts);
        } else if (k == CXTemplateArgumentKind_Integral) {
            const char *pt = m->ptype[i];
            if (strstr(pt, "unsigned") || strstr(pt, "size_t"))
                snprintf(args[i], sizeof args[i], "((%s)%lluu)", pt, lc.clang_Cursor_getTemplateArgumentUnsignedValue(spec, (unsigned)i));
            else snprintf(args[i], sizeof args[i], "((%s)%lld)", pt, lc.clang_Cursor_getTemplateArgumentValue(spec, (unsigned)i));
        } else {
            refuse(t, call, "template '%s': argument %d is neither a type nor an integer", name, i + 1);
            return -1;
        }
    }
    int j = 0;
    while (j < m->ninst && memcmp(m->arg[j], args, sizeof args)) j++;
    if (j == m->ninst) {
        if (j == 8) {
            refuse(t, call, "template '%s' is instantiated with more than 8 argument lists", name);
            return -1;
        }
        memcpy(m->arg[m->ninst++], args, sizeof args);
        /* its name as C++ writes it (`reduce<float, 256>`) and as it is mangled: for the kernels' notes */
        char *w = m->cname[j], *end = m->cname[j] + sizeof m->cname[j];
        w += snprintf(w, (size_t)(end - w), "%s<", name);
        for (int i = 0; i < na && w < end; i++) {
            const char *a = args[i];
            char num[32];
            if (lc.clang_Cursor_getTemplateArgumentKind(spec, (unsigned)i) == CXTemplateArgumentKind_Integral) {
                if (!strcmp(m->ptype[i], "bool")) a = lc.clang_Cursor_getTemplateArgumentValue(spec, (unsigned)i) ? "true" : "false";
                else {
                    if (strstr(m->ptype[i], "unsigned") || strstr(m->ptype[i], "size_t"))
                        snprintf(num, sizeof num, "%llu", lc.clang_Cursor_getTemplateArgumentUnsignedValue(spec, (unsigned)i));
                    else snprintf(num, sizeof num, "%lld", lc.clang_Cursor_getTemplateArgumentValue(spec, (unsigned)i));
                    a = num;
                }
            }
            w += snprintf(w, (size_t)(end - w), "%s%s", i ? ", " : "", a);
        }
        if (w < end) snprintf(w, (size_t)(end - w), ">");
        CXString mg = lc.clang_Cursor_getMangling(spec);
        snprintf(m->mangled[j], sizeof m->mangled[j], "%s", lc.clang_getCString(mg) ? lc.clang_getCString(mg) : "");
        lc.clang_disposeString(mg);
    }
    return j;
}

static int instantiate(struct tr *t, CXCursor call, CXCursor spec, CXCursor tp, const char *name)
{
    const int j = instance_of(t, call, spec, tp, name, 0);
    if (j < 0) return j;
    struct kids k = {.n = 0};
    lc.clang_visitChildren(call, collect_kids, &k);
    unsigned s0, e0;
    char to[96];
    snprintf(to, sizeof to, "%s_clrun_t%d", name, j);
    if (k.n && range(t, k.c[0], &s0, &e0)) edit(t, s0, e0, to);
    return j;
}

/* A function template's definition: marked for expand_clones, its `template <…>` removed, its
 * parameters named; then translated as a function (its body once, for every copy). */
static void template_body(struct tr *t, CXCursor f);

/* A function template's definition (template_body); one that cannot be translated is left out, its
 * reason kept for where it is instantiated (a source's unused templates may use anything). */
static void template_def(struct tr *t, CXCursor f)
{
    if (t->failed) return;
    template_body(t, f);
    if (!t->failed) return;
    int i = 0;
    while (i < t->ndeferred && !lc.clang_equalCursors(t->deferred[i].tpl, f)) i++;
    if (i == 16) return; /* the refusal stands */
    if (i == t->ndeferred) t->ndeferred++;
    t->deferred[i].tpl = f;
    snprintf(t->deferred[i].why, sizeof t->deferred[i].why, "%s", t->err);
    t->failed = 0, t->err[0] = 0;
    unsigned fs, fe;
    if (range(t, f, &fs, &fe)) edit(t, fs, fe, "");
}

static void template_body(struct tr *t, CXCursor f)
{
    unsigned fs, fe, at;
    CXFile ff;
    if (!t->collect) {
        struct tmpl *m = tmpl_of(t, f, 1);
        if (!m) {
            refuse(t, f, "more than 16 function templates");
            return;
        }
        m->nparams = 0;
        struct kids k = {.n = 0};
        lc.clang_visitChildren(f, collect_kids, &k);
        for (int i = 0; i < k.n; i++) {
            const enum CXCursorKind ck = lc.clang_getCursorKind(k.c[i]);
            if (ck == CXCursor_TemplateTemplateParameter) {
                refuse(t, k.c[i], "a template template parameter is not instantiated");
                return;
            }
            if (ck != CXCursor_TemplateTypeParameter && ck != CXCursor_NonTypeTemplateParameter) continue;
            if (m->nparams == 8) {
                refuse(t, f, "more than 8 template parameters");
                return;
            }
            CXString ns = lc.clang_getCursorSpelling(k.c[i]);
            snprintf(m->pname[m->nparams], sizeof m->pname[0], "%s", lc.clang_getCString(ns));
            lc.clang_disposeString(ns);
            m->ptype[m->nparams][0] = 0;
            if (ck == CXCursor_NonTypeTemplateParameter) {
                CXString ts = lc.clang_getTypeSpelling(lc.clang_getCursorType(k.c[i]));
                snprintf(m->ptype[m->nparams], sizeof m->ptype[0], "%s", lc.clang_getCString(ts));
                lc.clang_disposeString(ts);
            }
            m->nparams++;
        }
        lc.clang_getExpansionLocation(lc.clang_getCursorLocation(f), &ff, NULL, NULL, &at);
        if (!is_main(ff) || !range(t, f, &fs, &fe)) {
            refuse(t, f, "a template written through macros is not instantiated");
            return;
        }
        def_lines(t, fs, fe, &m->first_line, &m->last_line);
        /* `template <…>`: to the '>' that closes it */
        CXToken *tok = NULL;
        unsigned nt = 0, hdr_end = 0;
        lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(f), &tok, &nt);
        int depth = 0;
        for (unsigned i = 1; i < nt && !hdr_end; i++) {
            CXString w = lc.clang_getTokenSpelling(t->tu, tok[i]);
            const char *ws = lc.clang_getCString(w);
            depth += !strcmp(ws, "<") - !strcmp(ws, ">") - 2 * !strcmp(ws, ">>");
            if (depth <= 0 && (!strcmp(ws, ">") || !strcmp(ws, ">>"))) {
                CXFile f2;
                lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[i])), &f2, NULL, NULL, &hdr_end);
            }
            lc.clang_disposeString(w);
        }
        lc.clang_disposeTokens(t->tu, tok, nt);
        if (!hdr_end) {
            refuse(t, f, "the template's parameter list was not found");
            return;
        }
        char mark[48];
        const int n = (int)(m - t->tmpls);
        snprintf(mark, sizeof mark, "/*@CLRUN_TP%d{@*/", n);
        edit(t, fs, fs, mark);
        edit(t, fs, hdr_end, "");
        snprintf(mark, sizeof mark, "/*@}CLRUN_TP%d@*/", n);
        edit(t, fe, fe, mark);
        CXString fsp = lc.clang_getCursorSpelling(f);
        const unsigned nl = (unsigned)strlen(lc.clang_getCString(fsp));
        lc.clang_disposeString(fsp);
        edit(t, at + nl, at + nl, "/*@CLRUN_TNAME@*/");
    }
    function(t, f);
}

/* An asm statement (inline PTX): kept for NVIDIA's compiler, which takes PTX in GCC's asm form
 * (`__asm__`: OpenCL C has no `asm` keyword), under `#if defined(CLRUN_NV_PTX)`; elsewhere an
 * `#error` at its line. `#line`s keep the user's lines around the directives. */
static void asm_stmt(struct tr *t, CXCursor c)
{
    unsigned s0, e0, l1, l2;
    if (!range(t, c, &s0, &e0) || e0 <= s0) {
        refuse(t, c, "an asm statement written through a macro is not translated");
        return;
    }
    if (t->collect) return;
    def_lines(t, s0, e0, &l1, &l2);
    char q[600];
    size_t n = 0;
    for (const char *p = t->name; *p && n + 3 < sizeof q; p++) {
        if (*p == '"' || *p == '\\') q[n++] = '\\';
        q[n++] = *p;
    }
    q[n] = 0;
    char head[800], tail[1400];
    snprintf(head, sizeof head, "\n#if defined(CLRUN_NV_PTX)\n#line %u \"%s\"\n", l1, q);
    snprintf(tail, sizeof tail,
             "\n#else\n#line %u \"%s\"\n#error \"an asm statement (inline PTX) runs on NVIDIA's OpenCL only (clrun defines "
             "CLRUN_NV_PTX there)\"\n#endif\n#line %u \"%s\"\n",
             l1, q, l2, q);
    edit(t, s0, s0, head);
    if (!strncmp(t->src + s0, "asm", 3) && !(isalnum((unsigned char)t->src[s0 + 3]) || t->src[s0 + 3] == '_'))
        edit(t, s0, s0 + 3, "__asm__");
    edit(t, e0, e0, tail);
}

/* Whether function (template) f is host code only: neither __global__ nor __device__. */
static int host_only(CXCursor f) { return !has_child_kind(f, CXCursor_CUDAGlobalAttr) && !has_child_kind(f, CXCursor_CUDADeviceAttr); }

/* Declaration c removed from the output, with the ';' that ends it. */
static void remove_decl(struct tr *t, CXCursor c)
{
    unsigned s0, e0;
    if (!range(t, c, &s0, &e0)) return;
    unsigned q = e0;
    while (q < t->len && isspace((unsigned char)t->src[q])) q++;
    edit(t, s0, q < t->len && t->src[q] == ';' ? q + 1 : e0, "");
}

static enum CXChildVisitResult find_extern_shared(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    if (lc.clang_getCursorKind(c) == CXCursor_VarDecl && lc.clang_Cursor_getStorageClass(c) == CX_SC_Extern &&
        has_child_kind(c, CXCursor_CUDASharedAttr)) {
        *(int *)d = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

struct members {
    int conv, other;
};

static enum CXChildVisitResult count_members(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct members *m = d;
    const enum CXCursorKind k = lc.clang_getCursorKind(c);
    if (k == CXCursor_ConversionFunction) {
        int ext = 0;
        lc.clang_visitChildren(c, find_extern_shared, &ext);
        if (ext) m->conv++;
        else m->other++;
    } else if (k == CXCursor_FieldDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor || k == CXCursor_Destructor ||
               k == CXCursor_VarDecl || k == CXCursor_FunctionTemplate || k == CXCursor_CXXBaseSpecifier)
        m->other++;
    return CXChildVisit_Continue;
}

/* Whether class (template) c only hands out the dynamic shared memory: no members but conversion
 * operators that return an extern __shared__ array (NVIDIA's samples' SharedMemory<T>). */
static int shared_accessor(CXCursor c)
{
    struct members m = {0, 0};
    lc.clang_visitChildren(c, count_members, &m);
    return m.conv > 0 && !m.other;
}

static int is_accessor(struct tr *t, CXCursor d)
{
    CXCursor tp = lc.clang_getSpecializedCursorTemplate(d);
    for (int i = 0; i < t->naccessors; i++)
        if (lc.clang_equalCursors(t->accessors[i], d) || (!lc.clang_Cursor_isNull(tp) && lc.clang_equalCursors(t->accessors[i], tp)))
            return 1;
    return 0;
}

static void add_accessor(struct tr *t, CXCursor c)
{
    if (!is_accessor(t, c) && t->naccessors < 8) t->accessors[t->naccessors++] = c;
    remove_decl(t, c);
}

struct accuse {
    struct tr *t;
    int found;
};

static enum CXChildVisitResult find_accessor_use(CXCursor c, CXCursor parent, CXClientData d)
{
    (void)parent;
    struct accuse *u = d;
    const enum CXCursorKind k = lc.clang_getCursorKind(c);
    if ((k == CXCursor_TemplateRef || k == CXCursor_TypeRef) && is_accessor(u->t, lc.clang_getCursorReferenced(c))) {
        u->found = 1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* `T *s = SharedMemory<T>();`: the pointer variable c set to the kernel's dynamic shared memory,
 * which the kernel takes as its last argument. 1 when c is such a variable. */
static int accessor_var(struct tr *t, CXCursor c)
{
    if (!t->naccessors || !is_pointer(lc.clang_getCursorType(c))) return 0;
    struct kids k = {.n = 0};
    lc.clang_visitChildren(c, collect_kids, &k);
    CXCursor init = lc.clang_getNullCursor();
    for (int i = k.n - 1; i >= 0 && lc.clang_Cursor_isNull(init); i--)
        if (lc.clang_isExpression(lc.clang_getCursorKind(k.c[i]))) init = k.c[i];
    if (lc.clang_Cursor_isNull(init)) return 0;
    struct accuse u = {t, 0};
    find_accessor_use(init, c, &u);
    if (!u.found) lc.clang_visitChildren(init, find_accessor_use, &u);
    if (!u.found) return 0;
    set_var(t, c, SP_LOCAL);
    if (!t->in_kernel) {
        refuse(t, c, "the dynamic shared memory taken in a device function: only kernels take it yet (pass it as a parameter)");
        return 1;
    }
    int h = 0;
    while (h < t->nhoists && strcmp(t->hoists[h].name, "clrun_smem")) h++;
    if (h == t->nhoists) {
        if (h == 32) {
            refuse(t, c, "more than 32 __constant__ and extern __shared__ variables");
            return 1;
        }
        struct hoist *x = &t->hoists[t->nhoists++];
        x->decl = t->accessors[0], x->scalar = 0;
        snprintf(x->name, sizeof x->name, "clrun_smem");
        /* aligned as CUDA aligns it, to 16 bytes; NVIDIA's OpenCL faults on a __local uchar * argument read
         * through a wider type (the launch ends CL_UNKNOWN_ERROR), and takes this one */
        snprintf(x->param, sizeof x->param, "__local float4 *clrun_smem");
        snprintf(x->what, sizeof x->what, "dynamic __shared__ memory, 0 bytes");
    }
    t->kused |= 1u << h;
    unsigned s0, e0, is, ie;
    if (!t->collect && range(t, c, &s0, &e0) && range(t, init, &is, &ie)) {
        char cast[200];
        snprintf(cast, sizeof cast, "((__local %s *)clrun_smem)", tspell(t, lc.clang_getPointeeType(lc.clang_getCursorType(c))));
        edit(t, s0, s0, "__local ");
        edit(t, is, ie, cast);
    }
    return 1;
}

/* An instantiation the source or the caller asks for (`static auto __clrun_inst_N = &k<float>;`,
 * appended after the user's text): its copy of the template, noted for the kernels' names. */
static void requested_instance(struct tr *t, CXCursor v)
{
    CXCursor ref = lc.clang_getNullCursor();
    struct kids k = {.n = 0};
    lc.clang_visitChildren(v, collect_kids, &k);
    for (int depth = 0; depth < 8 && k.n; depth++) { /* &k<float> → its DeclRefExpr */
        CXCursor c = k.c[k.n - 1];
        if (lc.clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
            ref = lc.clang_getCursorReferenced(c);
            break;
        }
        k.n = 0;
        lc.clang_visitChildren(c, collect_kids, &k);
    }
    if (lc.clang_Cursor_isNull(ref)) return;
    CXCursor tp = lc.clang_getSpecializedCursorTemplate(ref);
    if (lc.clang_Cursor_isNull(tp) || lc.clang_getCursorKind(tp) != CXCursor_FunctionTemplate || !tmpl_of(t, tp, 0)) return; /* host */
    CXString n = lc.clang_getCursorSpelling(tp);
    char name[64];
    snprintf(name, sizeof name, "%s", lc.clang_getCString(n));
    lc.clang_disposeString(n);
    const int r = atoi(cspell(t, v) + 13); /* __clrun_inst_N: the source's Nth explicit instantiation */
    instance_of(t, v, ref, tp, name, r >= 0 && r < t->nireq ? t->ireq[r].line : 0);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData d)
{
    struct tr *t = d;
    if (t->failed) return CXChildVisit_Break;
    if (!in_main(t, c)) return CXChildVisit_Continue;
    const enum CXCursorKind k = lc.clang_getCursorKind(c);
    unsigned s, e;
    switch (k) {
    case CXCursor_LinkageSpec:
    case CXCursor_UnexposedDecl: { /* extern "C" [{] … [}] (libclang 14 exposes it as neither): removed */
        CXSourceRange r = lc.clang_getCursorExtent(c);
        CXToken *tok = NULL;
        unsigned nt = 0;
        lc.clang_tokenize(t->tu, r, &tok, &nt);
        int linkage = 0;
        if (nt >= 2 && range(t, c, &s, &e)) {
            CXString w0 = lc.clang_getTokenSpelling(t->tu, tok[0]);
            linkage = !strcmp(lc.clang_getCString(w0), "extern") && lc.clang_getTokenKind(tok[1]) == CXToken_Literal;
            lc.clang_disposeString(w0);
        }
        if (linkage) {
            unsigned a, b;
            lc.clang_getExpansionLocation(lc.clang_getTokenLocation(t->tu, tok[0]), NULL, NULL, NULL, &a);
            CXSourceRange r1 = lc.clang_getTokenExtent(t->tu, tok[1]);
            lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r1), NULL, NULL, NULL, &b);
            if (nt >= 3 && lc.clang_getTokenKind(tok[2]) == CXToken_Punctuation) {
                CXString sp = lc.clang_getTokenSpelling(t->tu, tok[2]);
                if (!strcmp(lc.clang_getCString(sp), "{")) {
                    CXSourceRange r2 = lc.clang_getTokenExtent(t->tu, tok[2]);
                    lc.clang_getExpansionLocation(lc.clang_getRangeEnd(r2), NULL, NULL, NULL, &b);
                    unsigned ce, cs;
                    CXSourceRange rl = lc.clang_getTokenExtent(t->tu, tok[nt - 1]);
                    lc.clang_getExpansionLocation(lc.clang_getRangeStart(rl), NULL, NULL, NULL, &cs);
                    lc.clang_getExpansionLocation(lc.clang_getRangeEnd(rl), NULL, NULL, NULL, &ce);
                    edit(t, cs, ce, "");
                }
                lc.clang_disposeString(sp);
            }
            edit(t, a, b, "");
        }
        lc.clang_disposeTokens(t->tu, tok, nt);
        return CXChildVisit_Recurse;
    }
    case CXCursor_InclusionDirective: { /* a standard header: the line removed; a file of the user's: refused */
        CXFile inc = lc.clang_getIncludedFile(c);
        int ours = 0;
        if (inc) {
            CXString n = lc.clang_getFileName(inc);
            ours = !strncmp(lc.clang_getCString(n), std_dir, sizeof std_dir - 1);
            lc.clang_disposeString(n);
        }
        const char *why = refused_header(c);
        if (why) {
            CXString n = lc.clang_getCursorSpelling(c);
            refuse(t, c, "#include <%s>: %s are not translated", lc.clang_getCString(n), why);
            lc.clang_disposeString(n);
        } else if (!ours) {
            CXString n = lc.clang_getCursorSpelling(c);
            refuse(t, c, "#include \"%s\": not found beside the file or in the -I directories of the options", lc.clang_getCString(n));
            lc.clang_disposeString(n);
        } else if (range(t, c, &s, &e)) edit(t, s, e, "");
        return CXChildVisit_Continue;
    }
    case CXCursor_FunctionDecl: {
        /* at file scope only: clang adds implicit declarations where some functions are called */
        const enum CXCursorKind pk = lc.clang_getCursorKind(parent);
        if (pk != CXCursor_TranslationUnit && pk != CXCursor_LinkageSpec && pk != CXCursor_UnexposedDecl) return CXChildVisit_Continue;
        if (host_only(c)) { /* host code (launches, wrappers): left out */
            remove_decl(t, c);
            return CXChildVisit_Continue;
        }
        if (lc.clang_Cursor_getNumTemplateArguments(c) > 0) {
            refuse(t, c, "explicit specialization of template '%s': not translated", cspell(t, c));
            return CXChildVisit_Break;
        }
        function(t, c);
        return CXChildVisit_Continue;
    }
    case CXCursor_VarDecl: {
        if (!strncmp(cspell(t, c), "__clrun_inst_", 13)) {
            if (!t->collect) requested_instance(t, c);
            return CXChildVisit_Continue;
        }
        if (accessor_var(t, c)) {
            rename_decl(t, c);
            return t->failed ? CXChildVisit_Break : CXChildVisit_Continue;
        }
        if (cg_type(lc.clang_getCursorType(c))) { /* cg::thread_block b = cg::this_thread_block(); leaves: its uses are rewritten */
            CXString ts = lc.clang_getTypeSpelling(lc.clang_getCanonicalType(lc.clang_getCursorType(c)));
            const int block = (strstr(lc.clang_getCString(ts), "thread_block") && !strstr(lc.clang_getCString(ts), "tile")) ||
                              tile32_type(lc.clang_getCursorType(c));
            unsigned s0, e0;
            if (tile32_type(lc.clang_getCursorType(c))) warp_use(t, c, "thread_block_tile<32>");
            if (!block)
                refuse(t, c, "a variable of type %s (grid groups, coalesced groups, tiles other than of 32 threads) is not translated",
                       lc.clang_getCString(ts));
            else if (lc.clang_getCursorKind(parent) == CXCursor_DeclStmt && range(t, parent, &s0, &e0)) edit(t, s0, e0, "");
            else refuse(t, c, "a cooperative group declared with other variables or at file scope is not translated");
            lc.clang_disposeString(ts);
            return t->failed ? CXChildVisit_Break : CXChildVisit_Continue;
        }
        rename_decl(t, c);
        const int shared = has_child_kind(c, CXCursor_CUDASharedAttr), constant = has_child_kind(c, CXCursor_CUDAConstantAttr);
        const int file_scope = lc.clang_getCursorKind(parent) == CXCursor_TranslationUnit ||
                               lc.clang_getCursorKind(parent) == CXCursor_LinkageSpec ||
                               lc.clang_getCursorKind(parent) == CXCursor_UnexposedDecl;
        CXType ty = lc.clang_getCanonicalType(lc.clang_getCursorType(c));
        struct kids init = {.n = 0};
        lc.clang_visitChildren(c, collect_kids, &init);
        int has_init = 0;
        for (int i = 0; i < init.n; i++)
            has_init |=
                lc.clang_isExpression(lc.clang_getCursorKind(init.c[i])) && lc.clang_getCursorKind(init.c[i]) != CXCursor_IntegerLiteral;
        if (constant && file_scope && ty.kind == CXType_ConstantArray) { /* coef[4]: the size is a literal child, no initialiser */
            has_init = 0;
            for (int i = 0; i < init.n; i++) has_init |= lc.clang_getCursorKind(init.c[i]) == CXCursor_InitListExpr;
        }
        if ((shared && lc.clang_Cursor_getStorageClass(c) == CX_SC_Extern) || (constant && file_scope && !has_init)) {
            /* set by the launch: a kernel argument of each kernel that reads it */
            int h = 0;
            while (h < t->nhoists && !lc.clang_equalCursors(t->hoists[h].decl, c)) h++;
            if (h == t->nhoists) {
                if (h == 32) {
                    refuse(t, c, "more than 32 __constant__ and extern __shared__ variables");
                    return CXChildVisit_Break;
                }
                struct hoist *x = &t->hoists[t->nhoists++];
                x->decl = c;
                const int array = ty.kind == CXType_ConstantArray || ty.kind == CXType_IncompleteArray;
                CXType el = array ? lc.clang_getArrayElementType(ty) : ty;
                CXString es = lc.clang_getTypeSpelling(el), ns = lc.clang_getCursorSpelling(c);
                x->scalar = !array;
                snprintf(x->name, sizeof x->name, "%s", lc.clang_getCString(ns));
                snprintf(x->param, sizeof x->param, "%s %s *%s", shared ? "__local" : "__constant", lc.clang_getCString(es),
                         lc.clang_getCString(ns));
                const long long bytes = shared ? 0 : lc.clang_Type_getSizeOf(ty);
                char dims[32] = "";
                if (ty.kind == CXType_ConstantArray) snprintf(dims, sizeof dims, "[%lld]", lc.clang_getArraySize(ty));
                else if (array) snprintf(dims, sizeof dims, "[]");
                snprintf(x->what, sizeof x->what, "%s %s%s, %lld bytes", shared ? "dynamic __shared__" : "__constant__",
                         lc.clang_getCString(es), dims, bytes < 0 ? 0 : bytes);
                lc.clang_disposeString(es), lc.clang_disposeString(ns);
            }
            set_var(t, c, shared ? SP_LOCAL : SP_CONSTANT);
            unsigned s0, e0;
            if (lc.clang_getCursorKind(parent) == CXCursor_DeclStmt && range(t, parent, &s0, &e0)) edit(t, s0, e0, "");
            else if (range(t, c, &s0, &e0)) edit(t, s0, e0, "/* a kernel argument */");
            return CXChildVisit_Continue;
        }
        if (shared && !file_scope) { /* OpenCL C 1.2: __local only at a kernel's outermost scope */
            if (!t->in_kernel) {
                shared_in_function(t, c, parent);
                return CXChildVisit_Continue;
            }
            int top = 0;
            for (int i = 0; i < t->ntop && !top; i++) top = lc.clang_equalCursors(t->top[i], parent);
            unsigned ds, de, as = 0, ae = 0;
            struct kids ak = {.n = 0};
            lc.clang_visitChildren(c, collect_kids, &ak);
            for (int i = 0; i < ak.n; i++)
                if (lc.clang_getCursorKind(ak.c[i]) == CXCursor_CUDASharedAttr) range(t, ak.c[i], &as, &ae);
            if (!top && t->body_open && lc.clang_getCursorKind(parent) == CXCursor_DeclStmt && range(t, parent, &ds, &de) && ds <= as &&
                ae <= de && ae > as) { /* hoisted: moved to the top of the kernel's body */
                const size_t n = (size_t)(as - ds) + 7 + (size_t)(de - ae) + 8;
                char *moved = malloc(n + 1);
                if (moved) {
                    snprintf(moved, n + 1, "\n    %.*s__local%.*s", (int)(as - ds), t->src + ds, (int)(de - ae), t->src + ae);
                    edit(t, ds, de, "");
                    edit(t, t->body_open, t->body_open, moved);
                    free(moved);
                }
                set_var(t, c, SP_LOCAL);
                return CXChildVisit_Continue;
            }
        }
        lc.clang_visitChildren(c, attrs, t);
        if (file_scope && !constant && !shared) {
            CXType el = ty;
            while (el.kind == CXType_ConstantArray) el = lc.clang_getArrayElementType(el);
            const int device = has_child_kind(c, CXCursor_CUDADeviceAttr);
            unsigned s0, e0;
            int inited = 0; /* an array's size is a literal child too: its initialiser is a list */
            for (int i = 0; i < init.n; i++)
                inited |= ty.kind == CXType_ConstantArray ? lc.clang_getCursorKind(init.c[i]) == CXCursor_InitListExpr
                                                          : lc.clang_isExpression(lc.clang_getCursorKind(init.c[i]));
            const int is_const = lc.clang_isConstQualifiedType(el) || lc.clang_isConstQualifiedType(ty) ||
                                 lc.clang_isConstQualifiedType(lc.clang_getCursorType(c)); /* the array's or its elements' */
            if (!device && is_const && inited && range(t, c, &s0, &e0)) {
                /* `const int TILE_DIM = 32;` at file scope: CUDA lets device code read it; in OpenCL C a
                 * program-scope constant is __constant (one insertion for `const int a = 1, b = 2;`) */
                edit(t, s0, s0, "__constant ");
                set_var(t, c, SP_CONSTANT);
                return CXChildVisit_Continue;
            }
            CXString n = lc.clang_getCursorSpelling(c);
            if (device)
                refuse(t, c,
                       "global variable '%s' in device memory (__device__): OpenCL C 1.2 has program-scope variables only in __constant",
                       lc.clang_getCString(n));
            else
                refuse(t, c,
                       "host variable '%s' (neither const nor __device__ or __constant__): device code cannot read it; leave host "
                       "code out of kernel source",
                       lc.clang_getCString(n));
            lc.clang_disposeString(n);
            return CXChildVisit_Break;
        }
        if (shared || constant) {
            set_var(t, c, shared ? SP_LOCAL : SP_CONSTANT);
        } else if (ty.kind == CXType_Pointer) {
            struct kids k = {.n = 0};
            lc.clang_visitChildren(c, collect_kids, &k);
            int sp = 0;
            for (int i = k.n - 1; i >= 0 && !sp; i--)
                if (lc.clang_isExpression(lc.clang_getCursorKind(k.c[i]))) sp = space_of(t, k.c[i]);
            if (sp) set_var(t, c, sp);
            else if (!var_of(t, c)) set_var(t, c, 0);
            if (!t->collect) {
                const struct var *v = var_of(t, c);
                const int one = one_space(v ? v->space : 0);
                unsigned s0, e0;
                if (!one) refuse(t, c, "pointer '%s' points to several address spaces: not translated", cspell(t, c));
                else if (one != SP_PRIVATE && range(t, c, &s0, &e0)) edit(t, s0, s0, space_word(one));
            }
        } else set_var(t, c, SP_PRIVATE); /* arrays and scalars of the function: private */
        return CXChildVisit_Recurse;
    }
    case CXCursor_BinaryOperator: { /* p = expr: p points where expr does */
        struct kids k = {.n = 0};
        lc.clang_visitChildren(c, collect_kids, &k);
        if (k.n == 2 && lc.clang_getCursorKind(k.c[0]) == CXCursor_DeclRefExpr && is_pointer(lc.clang_getCursorType(k.c[0]))) {
            CXCursor d = lc.clang_getCursorReferenced(k.c[0]);
            const int sp = space_of(t, k.c[1]);
            if (sp && lc.clang_getCursorKind(d) == CXCursor_VarDecl) set_var(t, d, sp);
        }
        return CXChildVisit_Recurse;
    }
    case CXCursor_CStyleCastExpr:
        if (is_pointer(lc.clang_getCursorType(c)) && !t->collect) {
            const int one = one_space(space_of(t, c));
            unsigned s0, e0;
            if (!one) refuse(t, c, "a cast of a pointer into several address spaces: not translated");
            else if (one != SP_PRIVATE && range(t, c, &s0, &e0)) edit(t, s0 + 1, s0 + 1, space_word(one));
        }
        return CXChildVisit_Recurse;
    case CXCursor_MemberRefExpr: { /* threadIdx.x → ((unsigned)get_local_id(0)) */
        CXCursor base = lc.clang_getNullCursor();
        struct find f = {CXCursor_DeclRefExpr, 0};
        (void)f;
        CXCursor ref = lc.clang_getCursorReferenced(c);
        CXString field = lc.clang_getCursorSpelling(ref);
        const char *fn = NULL;
        /* the object: the member expression's first token */
        CXToken *tok = NULL;
        unsigned nt = 0;
        lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(c), &tok, &nt);
        if (nt == 3) {
            CXString obj = lc.clang_getTokenSpelling(t->tu, tok[0]);
            fn = builtin_fn(lc.clang_getCString(obj));
            lc.clang_disposeString(obj);
        }
        lc.clang_disposeTokens(t->tu, tok, nt);
        (void)base;
        const char *fl = lc.clang_getCString(field);
        if (fn && range(t, c, &s, &e)) {
            const int dim = !strcmp(fl, "x") ? 0 : !strcmp(fl, "y") ? 1 : !strcmp(fl, "z") ? 2 : -1;
            char buf[64];
            snprintf(buf, sizeof buf, "((unsigned)%s(%d))", fn, dim);
            if (dim >= 0) edit(t, s, e, buf);
            lc.clang_disposeString(field);
            return CXChildVisit_Continue;
        }
        lc.clang_disposeString(field);
        return CXChildVisit_Recurse;
    }
    case CXCursor_DeclRefExpr: {
        CXString sp = lc.clang_getCursorSpelling(c);
        const char *name = lc.clang_getCString(sp);
        if (builtin_fn(name)) refuse(t, c, "'%s' is used whole; only its .x, .y and .z are translated", name);
        CXCursor d = lc.clang_getCursorReferenced(c);
        if (!strcmp(name, "warpSize") && !in_main(t, d)) { /* CUDA's constant 32 (what lanes mean to CUDA code) */
            unsigned s0, e0;
            if (range(t, c, &s0, &e0)) edit(t, s0, e0, "32");
        }
        for (int i = 0; i < t->nfsh && !t->collect; i++) /* a scalar __shared__ of a device function: now a pointer */
            if (lc.clang_equalCursors(t->fsh[i].decl, d)) {
                const char *va = t->fsh[i].after;
                while (*va == ' ') va++;
                unsigned s0, e0;
                char deref[80];
                snprintf(deref, sizeof deref, "(*%s)", name);
                if (*va != '[' && range(t, c, &s0, &e0)) edit(t, s0, e0, deref);
            }
        if (ref_param(d) && !cl_reserved(name)) {
            unsigned s0, e0;
            char deref[80];
            snprintf(deref, sizeof deref, "(*%s)", name);
            if (range(t, c, &s0, &e0)) edit(t, s0, e0, deref);
        }
        if (cl_reserved(name) && in_main(t, d)) {
            unsigned s0, e0;
            char to[80];
            snprintf(to, sizeof to, "clrun_%s", name);
            if (range(t, c, &s0, &e0)) edit(t, s0, e0, to);
        }
        for (int h = 0; h < t->nhoists; h++)
            if (lc.clang_equalCursors(t->hoists[h].decl, d)) {
                if (!t->in_kernel)
                    refuse(t, c, "'%s' (%s) is read in a device function: only kernels take it yet (pass it as a parameter)", name,
                           t->hoists[h].what);
                t->kused |= 1u << h;
                unsigned s0, e0;
                char deref[80];
                snprintf(deref, sizeof deref, "(*%s)", name);
                if (t->hoists[h].scalar && range(t, c, &s0, &e0)) edit(t, s0, e0, deref);
            }
        lc.clang_disposeString(sp);
        return CXChildVisit_Continue;
    }
    case CXCursor_CallExpr: {
        if (tile_call(t, c)) return t->failed ? CXChildVisit_Break : CXChildVisit_Recurse;
        if (cg_call(t, c)) return t->failed ? CXChildVisit_Break : CXChildVisit_Continue;
        CXString sp = lc.clang_getCursorSpelling(c);
        const char *name = lc.clang_getCString(sp);
        CXCursor callee = lc.clang_getCursorDefinition(lc.clang_getCursorReferenced(c));
        struct tref tr = {.yes = 0};
        if (!lc.clang_Cursor_isNull(t->cur_fn) && lc.clang_getCursorKind(t->cur_fn) == CXCursor_FunctionTemplate &&
            calls_template(c, &tr)) {
            char owner[64];
            if (!in_main(t, tr.tpl) && cg_owner(tr.tpl, owner, sizeof owner) && !strcmp(owner, "cooperative_groups") &&
                !strcmp(tr.name, "reduce")) { /* on a template's values: the form for its type parameter's suffix */
                cg_reduce_call(t, c);
                lc.clang_disposeString(sp);
                return t->failed ? CXChildVisit_Break : CXChildVisit_Continue;
            }
            template_site(t, c, &tr);
            lc.clang_disposeString(sp);
            return t->failed ? CXChildVisit_Break : CXChildVisit_Recurse;
        }
        if (!*name) { /* a call on a template's parameters: the warp forms are chosen by a type known here only */
            char ov[64] = "";
            lc.clang_visitChildren(c, find_overload, ov);
            if (!strncmp(ov, "__shfl", 6) || !strncmp(ov, "__ballot", 8) || !strncmp(ov, "__any", 5) || !strncmp(ov, "__all", 5) ||
                !strcmp(ov, "__syncwarp")) {
                warp_call(t, c, ov);
                lc.clang_disposeString(sp);
                return t->failed ? CXChildVisit_Break : CXChildVisit_Recurse;
            }
        }
        const CXCursor spec = callee;
        int inst = -1;
        if (!lc.clang_Cursor_isNull(callee) && lc.clang_getCursorKind(callee) == CXCursor_FunctionDecl) {
            CXCursor tp = lc.clang_getSpecializedCursorTemplate(callee);
            if (!lc.clang_Cursor_isNull(tp) && lc.clang_getCursorKind(tp) == CXCursor_FunctionTemplate && in_main(t, tp)) {
                callee = tp;
                if (!t->collect) inst = instantiate(t, c, spec, tp, name);
            }
        }
        if (!lc.clang_Cursor_isNull(callee) && in_main(t, callee) && !t->failed) {
            shared_args(t, c, callee, inst);
            for (int i = 0; i < lc.clang_Cursor_getNumArguments(c) && !t->failed; i++) { /* a group's handle: noted, removed */
                group_argument(t, callee, i, lc.clang_Cursor_getArgument(c, (unsigned)i));
            }
        }
        if (!lc.clang_Cursor_isNull(callee) && in_main(t, callee)) {
            const int na = lc.clang_Cursor_getNumArguments(c);
            for (int i = 0; i < na; i++) {
                CXCursor a = lc.clang_Cursor_getArgument(c, (unsigned)i);
                if (tile32_type(lc.clang_getCursorType(a)) || cg_block_type(lc.clang_getCursorType(a))) continue; /* it left */
                const int by_ref = i < fn_nargs(callee) && ref_param(fn_arg(callee, (unsigned)i));
                int sp;
                if (by_ref) { /* f(x) for f(float &v): f(&(x)), x's space that of the pointer */
                    int component = 0;
                    sp = lvalue_space(t, a, &component);
                    if (component) {
                        refuse(t, a, "a vector's component passed by reference: OpenCL C cannot take its address");
                        break;
                    }
                    unsigned s0, e0;
                    if (range(t, a, &s0, &e0)) edit(t, s0, s0, "&("), edit(t, e0, e0, ")");
                } else if (!is_pointer(lc.clang_getCursorType(a))) continue;
                else sp = space_of(t, a);
                struct fparam *fp = fparam_of(t, callee, (unsigned)i, 1);
                if (fp && (fp->seen | (sp ? sp : SP_GLOBAL)) != fp->seen) fp->seen |= sp ? sp : SP_GLOBAL, t->changed = 1;
            }
        }
        if (!t->collect && !lc.clang_Cursor_isNull(t->cur_fn) && !has_child_kind(t->cur_fn, CXCursor_CUDAGlobalAttr) &&
            multi_space(t, t->cur_fn)) { /* in a function copied per space: pointers passed on would need copies too */
            const int na = lc.clang_Cursor_getNumArguments(c);
            for (int i = 0; i < na; i++)
                if (is_pointer(lc.clang_getCursorType(lc.clang_Cursor_getArgument(c, (unsigned)i))) ||
                    (!lc.clang_Cursor_isNull(callee) && i < fn_nargs(callee) && ref_param(fn_arg(callee, (unsigned)i)))) {
                    refuse(t, c, "'%s', called with pointers into several address spaces, passes a pointer on to '%s': not translated yet",
                           cspell(t, t->cur_fn), name);
                    break;
                }
        }
        if (!t->collect && !t->failed && !lc.clang_Cursor_isNull(callee) && in_main(t, callee) && multi_space(t, callee)) {
            /* the copy for this call's combination of spaces: NAME_clrun_<g|l|c|p per pointer parameter> */
            struct clone *cl = clone_of(t, callee, 1);
            int combo[16] = {0};
            char suffix[40] = "_clrun_";
            const int na = lc.clang_Cursor_getNumArguments(c), np = fn_nargs(callee);
            for (int i = 0; i < na && i < np && i < 16 && !t->failed; i++) {
                CXCursor a = lc.clang_Cursor_getArgument(c, (unsigned)i), pd = fn_arg(callee, (unsigned)i);
                const int by_ref = ref_param(pd);
                if (!by_ref && !is_pointer(lc.clang_getCursorType(pd))) continue;
                int component = 0;
                const int sp = one_space(by_ref ? lvalue_space(t, a, &component) : space_of(t, a));
                if (!sp) refuse(t, a, "argument %d of '%s' may point into several address spaces", i + 1, name);
                combo[i] = sp;
                const size_t sl = strlen(suffix);
                if (sl + 1 < sizeof suffix)
                    suffix[sl] = sp == SP_GLOBAL ? 'g' : sp == SP_LOCAL ? 'l' : sp == SP_CONSTANT ? 'c' : 'p', suffix[sl + 1] = 0;
            }
            int found = -1;
            for (int j = 0; cl && j < cl->ncombos && found < 0; j++)
                if (!memcmp(cl->combo[j], combo, sizeof combo)) found = j;
            if (cl && found < 0 && cl->ncombos < 8) memcpy(cl->combo[found = cl->ncombos++], combo, sizeof combo);
            if (!cl || found < 0) refuse(t, c, "'%s' is called with more combinations of address spaces than clrun copies it for", name);
            CXToken *tok = NULL;
            unsigned nt = 0;
            lc.clang_tokenize(t->tu, lc.clang_getCursorExtent(c), &tok, &nt);
            if (nt && !t->failed) {
                unsigned e0;
                CXFile f0;
                lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[0])), &f0, NULL, NULL, &e0);
                if (is_main(f0)) edit(t, e0, e0, suffix);
            }
            lc.clang_disposeTokens(t->tu, tok, nt);
        }
        if (!strcmp(name, "__syncthreads") && range(t, c, &s, &e)) {
            edit(t, s, e, "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)");
            lc.clang_disposeString(sp);
            return CXChildVisit_Continue;
        }
        if (!strncmp(name, "atomic", 6)) {
            CXCursor a0 = lc.clang_Cursor_getArgument(c, 0);
            CXType pt = lc.clang_getCanonicalType(lc.clang_getPointeeType(lc.clang_getCanonicalType(lc.clang_getCursorType(a0))));
            const int sp = one_space(space_of(t, a0));
            char to[48] = "";
            if (!strcmp(name, "atomicInc") || !strcmp(name, "atomicDec")) {
                if (pt.kind == CXType_UInt) snprintf(to, sizeof to, "clrun_atomic_%s_u32", name[6] == 'I' ? "inc" : "dec");
            } else {
                const char *fn = atomic_fn(name, pt.kind);
                if (fn) snprintf(to, sizeof to, "%s", fn);
            }
            /* clrun's compare-and-swap helpers come for global and local memory */
            if (*to && !strncmp(to, "clrun_", 6) && sp == SP_LOCAL) strcat(to, "_l");
            if (!*to) refuse(t, c, "%s on %s has no OpenCL C 1.2 form", name, tspell(t, pt));
            else if (!strncmp(to, "clrun_", 6) && sp != SP_GLOBAL && sp != SP_LOCAL)
                refuse(t, c, "%s on memory other than global or shared", name);
            else rename_callee(t, c, to);
        }
        if (!lc.clang_Cursor_isNull(callee) && in_main(t, callee) && (cl_builtin(name) || cl_reserved(name))) {
            char to[80];
            snprintf(to, sizeof to, "clrun_%s", name);
            rename_callee(t, c, to);
        }
        if (!strcmp(name, "abs") && lc.clang_Cursor_getNumArguments(c) == 1) { /* OpenCL's abs of an int is unsigned */
            const enum CXTypeKind ak = lc.clang_getCanonicalType(lc.clang_getCursorType(lc.clang_Cursor_getArgument(c, 0))).kind;
            rename_callee(t, c,
                          ak == CXType_Float || ak == CXType_Double                                                    ? "fabs"
                          : ak == CXType_Long || ak == CXType_LongLong || ak == CXType_ULong || ak == CXType_ULongLong ? "(long)abs"
                                                                                                                       : "(int)abs");
        }
        if (!strncmp(name, "__syncthreads_", 14)) refuse(t, c, "%s (a block-wide vote) is not translated yet", name);
        if (!strcmp(name, "__ldg")) rename_callee(t, c, "*"); /* __ldg(p) → *(p): a plain load */
        if (!strncmp(name, "make_", 5)) {                     /* make_float4(a, b, c, d) → (float4)(a, b, c, d) */
            char cast[40];
            snprintf(cast, sizeof cast, "(%s)", name + 5);
            rename_callee(t, c, cast);
        }
        if (!strncmp(name, "__shfl", 6) || !strncmp(name, "__ballot", 8) || !strncmp(name, "__any", 5) || !strncmp(name, "__all", 5) ||
            !strcmp(name, "__activemask") || !strcmp(name, "__syncwarp"))
            warp_call(t, c, name);
        if (!strncmp(name, "tex1D", 5) || !strncmp(name, "tex2D", 5) || !strncmp(name, "tex3D", 5) || !strncmp(name, "surf", 4))
            refuse(t, c, "texture and surface access (%s) is not translated", name);
        if (!strcmp(name, "clock") || !strcmp(name, "clock64")) refuse(t, c, "%s(): OpenCL C has no cycle counter", name);
        if (!strcmp(name, "__threadfence") && range(t, c, &s, &e)) edit(t, s, e, "mem_fence(CLK_GLOBAL_MEM_FENCE)");
        if (!strcmp(name, "__threadfence_block") && range(t, c, &s, &e))
            edit(t, s, e, "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)");
        lc.clang_disposeString(sp);
        return CXChildVisit_Recurse;
    }
    case CXCursor_NamespaceAlias:
    case CXCursor_UsingDirective: { /* namespace cg = cooperative_groups; using namespace cooperative_groups; */
        struct kids k = {.n = 0};
        lc.clang_visitChildren(c, collect_kids, &k);
        CXString ns = lc.clang_getCursorSpelling(k.n ? lc.clang_getCursorReferenced(k.c[k.n - 1]) : c);
        const int cg = !strcmp(lc.clang_getCString(ns), "cooperative_groups");
        lc.clang_disposeString(ns);
        unsigned s0, e0;
        if (!cg) {
            refuse(t, c, "a namespace alias or using-directive other than cooperative_groups'");
            return CXChildVisit_Break;
        }
        if (range(t, c, &s0, &e0)) {
            unsigned q = e0;
            while (q < t->len && isspace((unsigned char)t->src[q])) q++;
            edit(t, s0, q < t->len && t->src[q] == ';' ? q + 1 : e0, "");
        }
        return CXChildVisit_Continue;
    }
    case CXCursor_FieldDecl: {
        const enum CXTypeKind fk = lc.clang_getCanonicalType(lc.clang_getCursorType(c)).kind;
        if (fk == CXType_Pointer || fk == CXType_LValueReference) {
            CXString n = lc.clang_getCursorSpelling(c);
            refuse(t, c,
                   "pointer member '%s': a device address stored in memory cannot be read in OpenCL C 1.2 (its buffers have no "
                   "addresses the host knows); pass the array as a kernel argument",
                   lc.clang_getCString(n));
            lc.clang_disposeString(n);
            return CXChildVisit_Break;
        }
        return CXChildVisit_Continue;
    }
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_EnumDecl: {
        /* C++ names `struct P {…};` as P; C needs `struct P`: a typedef after the definition */
        unsigned s0, e0;
        CXString n = lc.clang_getCursorSpelling(c);
        const char *ns = lc.clang_getCString(n);
        const char *word = k == CXCursor_StructDecl ? "struct" : k == CXCursor_UnionDecl ? "union" : "enum";
        if (k == CXCursor_StructDecl && lc.clang_isCursorDefinition(c) && (is_accessor(t, c) || shared_accessor(c))) {
            lc.clang_disposeString(n);
            add_accessor(t, c);
            return CXChildVisit_Continue;
        }
        if (lc.clang_isCursorDefinition(c) && *ns && !strchr(ns, ' ') && range(t, c, &s0, &e0)) {
            unsigned q = e0;
            while (q < t->len && isspace((unsigned char)t->src[q])) q++;
            if (q < t->len && t->src[q] == ';') {
                char td[200];
                snprintf(td, sizeof td, " typedef %s %s %s;", word, ns, ns);
                edit(t, q + 1, q + 1, td);
            }
        }
        lc.clang_disposeString(n);
        return CXChildVisit_Recurse;
    }
    case CXCursor_FunctionTemplate: {
        const enum CXCursorKind pk = lc.clang_getCursorKind(parent);
        if (pk != CXCursor_TranslationUnit && pk != CXCursor_LinkageSpec && pk != CXCursor_UnexposedDecl) return CXChildVisit_Continue;
        if (host_only(c)) {
            remove_decl(t, c);
            return CXChildVisit_Continue;
        }
        if (!lc.clang_isCursorDefinition(c)) {
            refuse(t, c, "template '%s' declared ahead of its definition: not instantiated", cspell(t, c));
            return CXChildVisit_Break;
        }
        if (!t->collect && multi_space(t, c)) {
            refuse(t, c, "template '%s' is called with pointers into several address spaces: not translated yet", cspell(t, c));
            return CXChildVisit_Break;
        }
        template_def(t, c);
        struct tmpl *m = tmpl_of(t, c, 0);
        if (m) m->kernel = has_child_kind(c, CXCursor_CUDAGlobalAttr);
        return CXChildVisit_Continue;
    }
    case CXCursor_ClassTemplate:
        if (shared_accessor(c)) {
            add_accessor(t, c);
            return CXChildVisit_Continue;
        }
        refuse(t, c, "class template '%s': templates other than functions are not translated", cspell(t, c));
        return CXChildVisit_Break;
    case CXCursor_GCCAsmStmt: asm_stmt(t, c); return t->failed ? CXChildVisit_Break : CXChildVisit_Continue;
    case CXCursor_LambdaExpr: refuse(t, c, "a lambda: OpenCL C has none"); return CXChildVisit_Break;
    case CXCursor_CXXNewExpr:
    case CXCursor_CXXDeleteExpr: refuse(t, c, "new/delete in device code"); return CXChildVisit_Break;
    case CXCursor_CXXMethod:
        refuse(t, c, "member function '%s': classes with member functions are not translated", cspell(t, c));
        return CXChildVisit_Break;
    case CXCursor_Namespace:
        refuse(t, c, "namespace '%s' (cooperative_groups and other C++ namespaces are not translated)", cspell(t, c));
        return CXChildVisit_Break;
    default:
        if (k == CXCursor_CallExpr + 0) break;
        return CXChildVisit_Recurse;
    }
    return CXChildVisit_Recurse;
}

/* `long long` is reserved in OpenCL C, where `long` has its 64 bits: the second `long` of each pair
 * is removed (`unsigned long long` → `unsigned long`), comments, strings and characters skipped. */
static void long_long(struct tr *t)
{
    const char *s = t->src;
    size_t i = 0, last_long_end = 0;
    int last_was_long = 0;
    while (i < t->len) {
        const char ch = s[i];
        if (ch == '/' && i + 1 < t->len && s[i + 1] == '/') {
            while (i < t->len && s[i] != '\n') i++;
            continue;
        }
        if (ch == '/' && i + 1 < t->len && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < t->len && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i += 2;
            continue;
        }
        if (ch == '"' || ch == '\'') {
            for (i++; i < t->len && s[i] != ch; i++)
                if (s[i] == '\\') i++;
            i++, last_was_long = 0;
            continue;
        }
        if (isspace((unsigned char)ch)) {
            i++;
            continue;
        }
        if (isalpha((unsigned char)ch) || ch == '_') {
            size_t b = i;
            while (i < t->len && (isalnum((unsigned char)s[i]) || s[i] == '_')) i++;
            const int is_long = i - b == 4 && !strncmp(s + b, "long", 4);
            if (is_long && last_was_long) {
                edit(t, (unsigned)last_long_end, (unsigned)i, ""); /* from the end of the first to the end of the second */
                last_was_long = 0;
            } else last_was_long = is_long, last_long_end = i;
            continue;
        }
        if (isdigit((unsigned char)ch)) { /* a number, its suffixes included (1ULL stays: OpenCL C reads it) */
            while (i < t->len && (isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_')) i++;
            last_was_long = 0;
            continue;
        }
        i++, last_was_long = 0;
    }
}

/* `#line LINE "NAME"` on a line of its own at w (a newline ahead of it); the end of what was written */
static char *put_line(char *w, unsigned line, const char *name)
{
    w += sprintf(w, "\n#line %u \"", line);
    w = clrun__put_quoted(w, name);
    return w + sprintf(w, "\"\n");
}

/* The translation with each function called with pointers into several address spaces written once
 * per combination its calls use (between its markers; its parameters' spaces and name suffix filled
 * in), each copy under a #line of the function's first line, the code after it under its last. */
/* The warp forms' suffix for a template's type argument (as instance_of writes it). */
static const char *sfx_of(const char *type)
{
    return !strcmp(type, "int")             ? "_i"
           : !strcmp(type, "unsigned int")  ? "_u"
           : !strcmp(type, "float")         ? "_f"
           : !strcmp(type, "long")          ? "_l"
           : !strcmp(type, "unsigned long") ? "_ul"
           : !strcmp(type, "double")        ? "_d"
                                            : "_of_a_type_without_warp_forms";
}

static char *expand_clones(struct tr *t, char *out)
{
    for (int n = 0; n < t->nclones && out; n++) {
        const struct clone *cl = &t->clones[n];
        char b[48], e[48];
        snprintf(b, sizeof b, "/*@CLRUN_FN%d{@*/", n);
        snprintf(e, sizeof e, "/*@}CLRUN_FN%d@*/", n);
        char *pb = strstr(out, b), *pe = pb ? strstr(pb, e) : NULL;
        if (!pe) continue;
        const char *body = pb + strlen(b);
        const size_t blen = (size_t)(pe - body), tail = strlen(pe + strlen(e));
        const int copies = cl->ncombos ? cl->ncombos : 1;
        size_t cap =
            (size_t)(pb - out) + tail + 1 + (size_t)copies * (blen + 64 + 2 * strlen(t->name) + 64 * 16) + 64 + 2 * strlen(t->name);
        char *x = malloc(cap), *w = x;
        if (!x) {
            free(out);
            return NULL;
        }
        memcpy(w, out, (size_t)(pb - out)), w += pb - out;
        for (int j = 0; j < copies; j++) {
            w = put_line(w, cl->first_line, t->name);
            for (const char *q = body; q < pe;) {
                unsigned k;
                int used = 0;
                if (!strncmp(q, "/*@CLRUN_SP", 11) && sscanf(q + 11, "%u@*/%n", &k, &used) == 1 && used) {
                    w += sprintf(w, "%s", k < 16 && cl->ncombos ? space_word(cl->combo[j][k]) : "");
                    q += 11 + used;
                } else if (!strncmp(q, "/*@CLRUN_NAME@*/", 16)) {
                    w += sprintf(w, "_clrun_");
                    for (int i = 0; i < 16 && cl->ncombos; i++) {
                        const int sp = cl->combo[j][i];
                        if (sp) *w++ = sp == SP_GLOBAL ? 'g' : sp == SP_LOCAL ? 'l' : sp == SP_CONSTANT ? 'c' : 'p';
                    }
                    q += 16;
                } else *w++ = *q++;
            }
        }
        w = put_line(w, cl->last_line, t->name);
        memcpy(w, pe + strlen(e), tail + 1);
        free(out);
        out = x;
    }
    for (int n = 0; n < t->ntmpls && out; n++) { /* templates: a copy per instantiation, its parameters as macros */
        const struct tmpl *m = &t->tmpls[n];
        char b[48], e[48];
        snprintf(b, sizeof b, "/*@CLRUN_TP%d{@*/", n);
        snprintf(e, sizeof e, "/*@}CLRUN_TP%d@*/", n);
        char *pb = strstr(out, b), *pe = pb ? strstr(pb, e) : NULL;
        if (!pe) continue;
        const char *body = pb + strlen(b);
        const size_t blen = (size_t)(pe - body), tail = strlen(pe + strlen(e));
        size_t cap = (size_t)(pb - out) + tail + 1 + (size_t)m->ninst * (blen + 64 + 2 * strlen(t->name) + 8 * 640 + 32 * 120) + 64 +
                     2 * strlen(t->name);
        char *x = malloc(cap), *w = x;
        if (!x) {
            free(out);
            return NULL;
        }
        memcpy(w, out, (size_t)(pb - out)), w += pb - out;
        for (int j = 0; j < m->ninst; j++) {
            *w++ = '\n';
            for (int i = 0; i < m->nparams; i++) {
                w += sprintf(w, "#define %s %s\n", m->pname[i], m->arg[j][i]);
                if (!m->ptype[i][0]) /* a type: the suffix of its warp forms (warp_suffix) */
                    w += sprintf(w, "#define CLRUN_SFX_%s %s\n", m->pname[i], sfx_of(m->arg[j][i]));
            }
            for (int i = 0; i < t->nsites; i++)
                if (t->sites[i].caller == n) {
                    CXString cs = lc.clang_getCursorSpelling(t->tmpls[t->sites[i].callee].tpl);
                    w += sprintf(w, "#define CLRUN_TC%d %.64s_clrun_t%d\n", i, lc.clang_getCString(cs), t->sites[i].target[j]);
                    lc.clang_disposeString(cs);
                }
            w = put_line(w - 1, m->first_line, t->name); /* over the defines' last newline */
            for (const char *q = body; q < pe;)
                if (!strncmp(q, "/*@CLRUN_TNAME@*/", 17)) w += sprintf(w, "_clrun_t%d", j), q += 17;
                else *w++ = *q++;
            *w++ = '\n';
            for (int i = 0; i < t->nsites; i++)
                if (t->sites[i].caller == n) w += sprintf(w, "#undef CLRUN_TC%d\n", i);
            for (int i = 0; i < m->nparams; i++) {
                w += sprintf(w, "#undef %s\n", m->pname[i]);
                if (!m->ptype[i][0]) w += sprintf(w, "#undef CLRUN_SFX_%s\n", m->pname[i]);
            }
        }
        w = put_line(w, m->last_line, t->name);
        memcpy(w, pe + strlen(e), tail + 1);
        free(out);
        out = x;
    }
    return out;
}

/* The explicit instantiations of the user's file (`template __global__ void k<float, 4>(float *);`,
 * `template decltype(k<int, 2>) k<int, 2>;`, `extern template …;`), which libclang shows no cursor
 * for: each noted in t->ireq (removed from the output later) and, but for `extern` ones, its name
 * (`k<float, 4>`) as the address a host variable takes, appended to *more: parsed again, that
 * variable leads to the specialization (requested_instance). */
static void scan_instantiations(struct tr *t, char **more)
{
    *more = NULL;
    CXSourceRange all = lc.clang_getRange(lc.clang_getLocationForOffset(t->tu, t->file, 0),
                                          lc.clang_getLocationForOffset(t->tu, t->file, (unsigned)t->len));
    CXToken *tok = NULL;
    unsigned nt = 0;
    lc.clang_tokenize(t->tu, all, &tok, &nt);
    size_t cap = 0, used = 0;
#define TOK_IS(i, w) (lc.clang_getCString(sp[i]) && !strcmp(lc.clang_getCString(sp[i]), (w)))
    CXString *sp = nt ? malloc(nt * sizeof *sp) : NULL;
    if (!sp) {
        lc.clang_disposeTokens(t->tu, tok, nt);
        return;
    }
    for (unsigned i = 0; i < nt; i++) sp[i] = lc.clang_getTokenSpelling(t->tu, tok[i]);
    for (unsigned i = 0; i + 1 < nt && !t->failed; i++) {
        if (!TOK_IS(i, "template") || TOK_IS(i + 1, "<")) continue;
        if (i > 0 && (TOK_IS(i - 1, ".") || TOK_IS(i - 1, "->") || TOK_IS(i - 1, "::") || TOK_IS(i - 1, "typename"))) continue;
        const int ext = i > 0 && TOK_IS(i - 1, "extern");
        unsigned end = i + 1, name = 0, close = 0;
        int paren = 0;
        for (; end < nt && !(paren == 0 && TOK_IS(end, ";")); end++) {
            paren += TOK_IS(end, "(") - TOK_IS(end, ")");
            if (!name && end + 1 < nt && lc.clang_getTokenKind(tok[end]) == CXToken_Identifier && TOK_IS(end + 1, "<")) {
                name = end;
                int depth = 0;
                for (close = end + 1; close < nt; close++) {
                    depth += TOK_IS(close, "<") - TOK_IS(close, ">") - 2 * TOK_IS(close, ">>");
                    if (depth <= 0) break;
                }
            }
        }
        if (end >= nt) break;
        unsigned s0, e0, ns, ne, line;
        CXFile f;
        lc.clang_getExpansionLocation(lc.clang_getTokenLocation(t->tu, tok[ext ? i - 1 : i]), &f, &line, NULL, &s0);
        lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[end])), NULL, NULL, NULL, &e0);
        if (!is_main(f) || e0 > t->len) continue;
        if (t->nireq == 32) {
            snprintf(t->err, t->errn, "%s:%u: more than 32 explicit instantiations", t->name, line);
            t->failed = 1;
            break;
        }
        t->ireq[t->nireq] = (struct ireq){s0, e0, line, ext};
        if (!ext && name && close < nt) {
            lc.clang_getExpansionLocation(lc.clang_getTokenLocation(t->tu, tok[name]), NULL, NULL, NULL, &ns);
            lc.clang_getExpansionLocation(lc.clang_getRangeEnd(lc.clang_getTokenExtent(t->tu, tok[close])), NULL, NULL, NULL, &ne);
            if (ne > ns && ne <= t->len) {
                const size_t need = used + (ne - ns) + 64;
                if (need > cap) {
                    cap = 2 * need;
                    char *nm = realloc(*more, cap);
                    if (!nm) break;
                    *more = nm;
                }
                used += (size_t)sprintf(*more + used, "\nstatic auto __clrun_inst_%d = &%.*s;", t->nireq, (int)(ne - ns), t->src + ns);
            }
        }
        t->nireq++;
        i = end;
    }
#undef TOK_IS
    for (unsigned i = 0; i < nt; i++) lc.clang_disposeString(sp[i]);
    free(sp);
    lc.clang_disposeTokens(t->tu, tok, nt);
}

/* The notes of the template kernels' copies: each one's name as C++ writes it and as it is
 * mangled, and the arguments it takes after its own. */
static void note_instances(struct tr *t)
{
    for (int n = 0; n < t->ntmpls; n++) {
        const struct tmpl *m = &t->tmpls[n];
        if (m->ninst && m->warp && (!t->warp || m->warp_line < t->warp_line)) {
            t->warp = 1, t->warp_line = m->warp_line;
            snprintf(t->warp_what, sizeof t->warp_what, "%s", m->warp_what);
        }
        if (!m->kernel) continue;
        CXString cs = lc.clang_getCursorSpelling(m->tpl);
        if (!m->ninst) {
            const size_t nl = strlen(t->note);
            snprintf(t->note + nl, sizeof t->note - nl, "// clrun: template kernel %s: no instantiation asked for\n",
                     lc.clang_getCString(cs));
        }
        for (int j = 0; j < m->ninst; j++) {
            char cl[96];
            snprintf(cl, sizeof cl, "%s_clrun_t%d", lc.clang_getCString(cs), j);
            size_t nl = strlen(t->note);
            nl += (size_t)snprintf(t->note + nl, sizeof t->note - nl, "// clrun: kernel %s is %s\n", m->cname[j], cl);
            if (nl < sizeof t->note && *m->mangled[j])
                nl += (size_t)snprintf(t->note + nl, sizeof t->note - nl, "// clrun: kernel %s is %s\n", m->mangled[j], cl);
            if (nl < sizeof t->note && *m->takes)
                snprintf(t->note + nl, sizeof t->note - nl, "// clrun: kernel %s takes after its own arguments:%s\n", cl, m->takes);
        }
        lc.clang_disposeString(cs);
    }
}

/* By start; at one start, insertions first, then the longest replacement (which covers the others). */
static int by_start(const void *a, const void *b)
{
    const struct edit *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    const int xi = x->end == x->start, yi = y->end == y->start;
    if (xi != yi) return xi ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end;
}

static char *translate_text(const char *src, size_t len, const char *name, const char *options, char *err, size_t errn)
{
    struct tr t = {.src = src, .len = len, .name = name ? name : "kernel.cu", .err = err, .errn = errn};
    if (errn) err[0] = 0;
    pthread_once(&lc_once, lc_load);
    if (!lc.ok) {
        snprintf(err, errn, "%s: CUDA source needs libclang: %s", t.name, lc.why);
        return NULL;
    }
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, src, len), copy[len] = 0;
    /* the standard headers CUDA sources include are empty here (their functions are the prelude's
     * and OpenCL's built-ins); -nostdinc keeps the host's own out */
    static const char *const std_headers[] = {
        "stdio.h",  "stdlib.h", "math.h", "cuda.h",  "cuda_runtime.h",  "device_launch_parameters.h", "stdint.h", "float.h", "limits.h",
        "assert.h", "cmath",    "cstdio", "cstdint", "math_constants.h"};
    enum { NSTD = sizeof std_headers / sizeof *std_headers };
    enum { NOURS = 5 };
    struct CXUnsavedFile files[NOURS + NSTD] = {{main_name, copy, (unsigned long)len},
                                                {pre_name, prelude_cuda, sizeof prelude_cuda - 1},
                                                {cg_name, cg_header, sizeof cg_header - 1},
                                                {cg_reduce_name, cg_more, sizeof cg_more - 1},
                                                {cg_scan_name, cg_more, sizeof cg_more - 1}};
    char std_paths[NSTD][64];
    for (int i = 0; i < NSTD; i++) {
        snprintf(std_paths[i], sizeof std_paths[i], "%s%s", std_dir, std_headers[i]);
        files[NOURS + i] = (struct CXUnsavedFile){std_paths[i], "", 0};
    }
    const char *args[] = {"-x",
                          "cuda",
                          "--cuda-device-only",
                          "-nocudainc",
                          "-nocudalib",
                          "--cuda-gpu-arch=sm_70",
                          "-std=c++14",
                          "-Wno-unknown-cuda-version",
                          "-nostdinc",
                          "-I/clrun-cuda/include",
                          "-include",
                          pre_name};
    /* the build options' macro definitions (-D NAME[=VALUE], -U NAME) hold for the parse too */
    enum { NARGS = sizeof args / sizeof *args, MAXDEF = 64 };
    const char *all[NARGS + MAXDEF];
    memcpy(all, args, sizeof args);
    int nall = NARGS;
    char *opts = options ? strdup(options) : NULL, *save = NULL;
    for (char *w = opts ? strtok_r(opts, " \t\n", &save) : NULL; w; w = strtok_r(NULL, " \t\n", &save)) {
        if ((!strcmp(w, "-D") || !strcmp(w, "-U")) && nall + 2 <= NARGS + MAXDEF) {
            char *v = strtok_r(NULL, " \t\n", &save);
            if (v) all[nall++] = w, all[nall++] = v;
        } else if ((!strncmp(w, "-D", 2) || !strncmp(w, "-U", 2)) && nall < NARGS + MAXDEF) all[nall++] = w;
    }
    CXIndex idx = lc.clang_createIndex(0, 0);
    enum CXErrorCode ec = lc.clang_parseTranslationUnit2(idx, main_name, all, nall, files, NOURS + NSTD,
                                                         CXTranslationUnit_DetailedPreprocessingRecord, &t.tu);
    free(opts);
    char *out = NULL;
    if (ec != CXError_Success) {
        snprintf(err, errn, "%s: libclang could not parse it (error %d)", t.name, (int)ec);
        goto done;
    }
    t.file = lc.clang_getFile(t.tu, main_name);
    lc.clang_visitChildren(lc.clang_getTranslationUnitCursor(t.tu), find_refused_include, &t);
    if (t.failed) goto done;
    for (unsigned i = 0; i < lc.clang_getNumDiagnostics(t.tu); i++) {
        CXDiagnostic dg = lc.clang_getDiagnostic(t.tu, i);
        if (lc.clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error) {
            unsigned line = 0, col = 0;
            CXFile f;
            lc.clang_getExpansionLocation(lc.clang_getDiagnosticLocation(dg), &f, &line, &col, NULL);
            CXString m = lc.clang_getDiagnosticSpelling(dg);
            snprintf(err, errn, "%s:%u:%u: error: %s", t.name, line, col, lc.clang_getCString(m));
            lc.clang_disposeString(m);
            lc.clang_disposeDiagnostic(dg);
            goto done;
        }
        lc.clang_disposeDiagnostic(dg);
    }
    /* explicit instantiations: parsed again with the addresses of what they name appended */
    char *more = NULL;
    scan_instantiations(&t, &more);
    if (t.failed) {
        free(more);
        goto done;
    }
    if (more) {
        const size_t ml = strlen(more);
        char *again = malloc(len + ml + 1);
        if (!again) {
            free(more);
            goto done;
        }
        memcpy(again, src, len), memcpy(again + len, more, ml + 1);
        free(more);
        free(copy);
        copy = again;
        files[0].Contents = copy, files[0].Length = (unsigned long)(len + ml);
        lc.clang_disposeTranslationUnit(t.tu);
        t.tu = NULL;
        ec = lc.clang_parseTranslationUnit2(idx, main_name, all, nall, files, NOURS + NSTD, CXTranslationUnit_DetailedPreprocessingRecord,
                                            &t.tu);
        if (ec != CXError_Success) {
            snprintf(err, errn, "%s: libclang could not parse it (error %d)", t.name, (int)ec);
            goto done;
        }
        t.file = lc.clang_getFile(t.tu, main_name);
        for (unsigned i = 0; i < lc.clang_getNumDiagnostics(t.tu); i++) {
            CXDiagnostic dg = lc.clang_getDiagnostic(t.tu, i);
            if (lc.clang_getDiagnosticSeverity(dg) >= CXDiagnostic_Error) {
                unsigned off = 0, line = 0, col = 0;
                CXFile f;
                lc.clang_getExpansionLocation(lc.clang_getDiagnosticLocation(dg), &f, &line, &col, &off);
                int r = -1; /* an appended line: reported at the instantiation it stands for */
                for (unsigned k = (unsigned)len, q = 0; is_main(f) && off >= len && k < len + ml && k <= off; k++)
                    if (copy[k] == '\n') r = (int)q++;
                CXString m = lc.clang_getDiagnosticSpelling(dg);
                if (r >= 0) {
                    int at = 0, seen = -1;
                    while (at < t.nireq && (t.ireq[at].decl_only || ++seen < r)) at++;
                    snprintf(err, errn, "%s:%u: error: the instantiation asked for here: %s", t.name, at < t.nireq ? t.ireq[at].line : line,
                             lc.clang_getCString(m));
                } else snprintf(err, errn, "%s:%u:%u: error: %s", t.name, line, col, lc.clang_getCString(m));
                lc.clang_disposeString(m);
                lc.clang_disposeDiagnostic(dg);
                goto done;
            }
            lc.clang_disposeDiagnostic(dg);
        }
    }
    /* address spaces gathered until they settle (calls seen before their callees' bodies), then the edits */
    t.collect = 1;
    int *before = NULL;
    size_t nbefore = 0;
    for (int pass = 0; pass < 8 && !t.failed; pass++) {
        /* each pass from the last one's parameter spaces, its own variables' and calls' afresh */
        int *snap = malloc((t.nvars + t.nfparams + 1) * sizeof *snap);
        if (!snap) break;
        for (size_t i = 0; i < t.nvars; i++) snap[i] = t.vars[i].space;
        for (size_t i = 0; i < t.nfparams; i++) snap[t.nvars + i] = t.fparams[i].seen;
        const size_t nsnap = t.nvars + t.nfparams;
        if (pass) {
            for (size_t i = 0; i < t.nvars; i++) t.vars[i].space = 0;
            for (size_t i = 0; i < t.nfparams; i++) t.fparams[i].decided = t.fparams[i].seen, t.fparams[i].seen = 0;
        }
        free(before);
        before = snap, nbefore = nsnap;
        lc.clang_visitChildren(lc.clang_getTranslationUnitCursor(t.tu), visit, &t);
        int same = pass > 0 && t.nvars + t.nfparams == nbefore;
        for (size_t i = 0; same && i < t.nvars; i++) same = t.vars[i].space == before[i];
        for (size_t i = 0; same && i < t.nfparams; i++) same = t.fparams[i].seen == before[t.nvars + i];
        if (same) break;
    }
    free(before);
    for (size_t i = 0; i < t.nfparams; i++) t.fparams[i].decided = t.fparams[i].seen;
    t.collect = 0;
    if (!t.failed) lc.clang_visitChildren(lc.clang_getTranslationUnitCursor(t.tu), visit, &t);
    if (t.failed) goto done;
    for (int i = 0; i < t.nireq; i++) edit(&t, t.ireq[i].start, t.ireq[i].end, "");
    resolve_sites(&t);
    if (t.failed) goto done;
    note_instances(&t);
    long_long(&t);
    if (t.n) qsort(t.e, t.n, sizeof *t.e, by_start);
    size_t cap = sizeof prelude_cl + sizeof t.note + len + 2 * strlen(t.name) + 64 + (t.warp ? WARP_PRELUDE_MAX : 0);
    for (size_t i = 0; i < t.n; i++) cap += strlen(t.e[i].text);
    out = malloc(cap);
    if (!out) goto done;
    char *w = out;
    w += sprintf(w, "%s%s", prelude_cl, t.note);
    if (t.warp) {
        const size_t k = warp_prelude(w, &t);
        if (k >= WARP_PRELUDE_MAX - 1) { /* a file name of thousands of characters */
            snprintf(err, errn, "%s: the file's name is too long for the warp intrinsics' forms", t.name);
            free(out);
            out = NULL;
            goto done;
        }
        w += k;
    }
    w += sprintf(w, "#line 1 \""); /* the compiler's messages name the user's file and lines */
    for (const char *q = t.name; *q; q++) {
        if (*q == '"' || *q == '\\') *w++ = '\\';
        *w++ = *q;
    }
    w += sprintf(w, "\"\n");
    unsigned at = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.e[i].start < at || t.e[i].end < t.e[i].start || t.e[i].end > len) continue; /* inside an edit made, or not ours */
        memcpy(w, src + at, t.e[i].start - at), w += t.e[i].start - at;
        w += sprintf(w, "%s", t.e[i].text);
        at = t.e[i].end;
    }
    memcpy(w, src + at, len - at), w += len - at;
    *w = 0;
    if (t.nclones || t.ntmpls) out = expand_clones(&t, out);
done:
    free(t.vars);
    free(t.fparams);
    for (size_t i = 0; i < t.n; i++) free(t.e[i].text);
    free(t.e);
    if (t.tu) lc.clang_disposeTranslationUnit(t.tu);
    lc.clang_disposeIndex(idx);
    free(copy);
    return out;
}

char *clrun__cuda_translate(const char *src, size_t len, const char *name, const char *options, char *err, size_t errn)
{
    if (!name) name = "kernel.cu";
    struct clrun__inc_map map;
    size_t n = 0;
    char *text = clrun__cuda_expand(src, len, name, options, &map, &n, err, errn); /* the user's headers pasted in */
    if (!text) return NULL;
    char *out = translate_text(text, n, name, options, err, errn);
    free(text);
    if (out) out = clrun__inc_remap_lines(out, &map, name); /* their lines named as theirs */
    else clrun__inc_remap_message(err, errn, &map, name);
    clrun__inc_map_free(&map);
    return out;
}
