/* test_status.c — status names and OpenCL error names; needs no device. */
#include "helpers.h"

#include <ctype.h>

static void status_names(void **state)
{
    (void)state;
    assert_string_equal(clrun_status_str(CLRUN_OK), "CLRUN_OK");
    assert_string_equal(clrun_status_str(CLRUN_BUILD_FAILED), "CLRUN_BUILD_FAILED");
    assert_string_equal(clrun_status_str(CLRUN_NO_PLATFORM), "CLRUN_NO_PLATFORM");
    assert_string_equal(clrun_status_str((clrun_status)999), "CLRUN_?");
    assert_string_equal(clrun_status_text(CLRUN_BUILD_FAILED), "kernel build failed");
    /* every code of the table has a distinct name */
    const clrun_status all[] = {
#define X(name, value, text) CLRUN_##name,
        CLRUN_STATUS_MAP(X)
#undef X
    };
    size_t n = sizeof all / sizeof *all;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(strncmp(clrun_status_str(all[i]), "CLRUN_", 6), 0);
        assert_string_not_equal(clrun_status_str(all[i]), "CLRUN_?");
        for (size_t j = i + 1; j < n; j++) assert_string_not_equal(clrun_status_str(all[i]), clrun_status_str(all[j]));
    }
    assert_string_equal(clrun_version(), CLRUN_VERSION_STRING);
}

/* Every error code #defined in the installed Khronos headers maps to its own name. cl.h's error
 * section must match exactly; in extension headers several names may share a value, so the name
 * returned must be one of those defined with that value. */
static void cl_error_names_match_headers(void **state)
{
    (void)state;
    static const char *const headers[] = {
        "cl.h", "cl_ext.h", "cl_gl.h", "cl_egl.h", "cl_d3d10.h", "cl_d3d11.h", "cl_dx9_media_sharing.h", "cl_va_api_media_sharing_intel.h",
        NULL};
    int checked = 0;
    for (int h = 0; headers[h]; h++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", CL_INCLUDE_DIR, headers[h]);
        FILE *f = fopen(path, "r");
        if (!f) {
            if (h == 0) fail_msg("cannot open %s", path);
            continue;
        }
        char line[512];
        int in_errors = h != 0; /* cl.h: only between "Error Codes" and "cl_bool" */
        while (fgets(line, sizeof line, f)) {
            if (h == 0 && strstr(line, "/* Error Codes */")) in_errors = 1;
            if (h == 0 && strstr(line, "/* cl_bool */")) in_errors = 0;
            char name[128];
            long value;
            if (!in_errors || sscanf(line, "#define %127s %ld", name, &value) != 2 || value > 0) continue;
            if (strncmp(name, "CL_", 3) != 0 || strstr(name, "LIST_END")) continue;
            const char *got = clrun_cl_error_name((cl_int)value);
            if (h == 0) {
                if (strcmp(got, name) != 0) fail_msg("%s: %ld is %s, clrun says %s", headers[h], value, name, got);
            } else if (strcmp(got, "CL_UNKNOWN_ERROR") == 0) {
                fail_msg("%s: %s (%ld) has no name in clrun", headers[h], name, value);
            }
            checked++;
        }
        fclose(f);
    }
    assert_true(checked >= 60);
    assert_string_equal(clrun_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
    assert_string_equal(clrun_cl_error_name(-12345), "CL_UNKNOWN_ERROR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_names),
        cmocka_unit_test(cl_error_names_match_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
