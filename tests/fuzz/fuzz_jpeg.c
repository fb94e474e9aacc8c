/* fuzz_jpeg.c — libFuzzer target for the image reader's JPEG path (libjpeg-turbo, the EXIF block
 * through libexif, the orientation): any input must decode or fail cleanly, quickly and within
 * bounded memory (a damaged or truncated file fails at its first missing byte), and what decodes
 * has the shape clrun_image_info announced from the header. */
#include <clrun.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_jpeg.%ld.jpg", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    /* always a JPEG to the reader: the signature first, then the input */
    static const uint8_t soi[3] = {0xFF, 0xD8, 0xFF};
    const size_t skip = size >= 3 && !memcmp(data, soi, 3) ? 3 : 0;
    if (fwrite(soi, 1, 3, f) != 3 || fwrite(data + skip, 1, size - skip, f) != size - skip) abort();
    fclose(f);
    clrun_image img, shape;
    const clrun_status st = clrun_image_read(path, &img), si = clrun_image_info(path, &shape);
    if (st == CLRUN_OK) {
        if (si != CLRUN_OK || !img.data || (img.channels != 1 && img.channels != 3) || img.stride != img.width * img.channels) abort();
        if (shape.width != img.width || shape.height != img.height || shape.channels != img.channels || shape.data) abort();
        volatile unsigned sum = 0; /* every byte is readable */
        for (size_t i = 0; i < img.stride * img.height; i++) sum += img.data[i];
        clrun_image_free(&img);
    } else if (st != CLRUN_FORMAT_ERROR && st != CLRUN_HOST_OUT_OF_MEMORY) {
        abort();
    }
    unlink(path);
    return 0;
}
