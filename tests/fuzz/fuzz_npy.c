/* fuzz_npy.c — libFuzzer target for the .npy parser: any input must parse or fail cleanly, and a
 * parsed array must survive a write and a read back unchanged. */
#include <clrun.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clrun_array a;
    if (clrun_npy_parse(data, size, &a) != CLRUN_OK) return 0;
    if (a.count > (1u << 20)) goto done; /* keep the round trip cheap */
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_npy.%ld.npy", (long)getpid());
    clrun_array b;
    if (clrun_npy_write(path, &a) != CLRUN_OK) abort();
    if (clrun_npy_read(path, &b) != CLRUN_OK) abort();
    if (b.dtype != a.dtype || b.count != a.count || b.ndim != a.ndim || memcmp(a.data, b.data, a.bytes) != 0) abort();
    clrun_array_free(&b);
    unlink(path);
done:
    clrun_array_free(&a);
    return 0;
}
