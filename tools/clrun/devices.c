/* devices.c — `clrun devices` and `clrun info`. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void mem(char *out, size_t size, uint64_t bytes)
{
    if (bytes >= ((uint64_t)1 << 30)) snprintf(out, size, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= ((uint64_t)1 << 20)) snprintf(out, size, "%.1f MiB", bytes / 1048576.0);
    else snprintf(out, size, "%.1f KiB", bytes / 1024.0);
}

/* The device as the records of `devices --json` and `info --json` give it (docs/CLI.md). */
static json_t *json_info(const clrun_device_info *in, int is_default, const char *why)
{
    char spec[32];
    snprintf(spec, sizeof spec, "%u:%u", in->platform_index, in->device_index);
    json_t *o =
        json_pack("{s:I, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "index", (json_int_t)in->index, "platform_index",
                  (json_int_t)in->platform_index, "device_index", (json_int_t)in->device_index, "spec", spec, "type",
                  cli_type_name(in->type), "name", in->name, "vendor", in->vendor, "platform", in->platform_name, "platform_vendor",
                  in->platform_vendor, "version", in->version, "driver_version", in->driver_version, "opencl_c_version", in->c_version);
    json_t *wi =
        json_pack("[I, I, I]", (json_int_t)in->max_work_item[0], (json_int_t)in->max_work_item[1], (json_int_t)in->max_work_item[2]);
    json_object_update_new(o, json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:b, s:b, s:b, s:b, s:b, s:b}", "global_mem",
                                        (json_int_t)in->global_mem, "max_alloc", (json_int_t)in->max_alloc, "local_mem",
                                        (json_int_t)in->local_mem, "compute_units", (json_int_t)in->compute_units, "max_work_group",
                                        (json_int_t)in->max_work_group, "max_work_item", wi, "preferred_multiple",
                                        (json_int_t)in->preferred_multiple, "mem_base_align", (json_int_t)in->mem_base_align, "fp16",
                                        in->fp16, "fp64", in->fp64, "subgroups", in->subgroups, "host_unified", in->host_unified,
                                        "fp32_denorms", in->fp32_denorms, "default", is_default));
    if (is_default) json_object_set_new(o, "default_reason", json_string(why));
    return o;
}

static const char *devices_help = "usage: clrun devices [--json]\n\n"
                                  "Lists every OpenCL platform and device the ICD loader finds: the selection spec (PLATFORM:DEVICE),\n"
                                  "type, name, vendor, OpenCL and driver versions, global memory, compute units, max work-group size,\n"
                                  "fp16 and fp64 support. The default device is marked with '*', with the reason ($CLRUN_DEVICE or\n"
                                  "ranking: GPU, then accelerator, then CPU, more memory first).\n\n"
                                  "  --json    one JSON object with a \"devices\" array\n"
                                  "  --help    this text\n\n"
                                  "Exit codes: 0, or 3 when there is no OpenCL platform or device (the message says how to install one).\n";

int cmd_devices(int argc, char **argv)
{
    int json = 0, c;
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    struct cli_opts opt = {.sub = "devices", .help = devices_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'j') json = 1;
    }
    if (optind < argc) return cli_usage_error("devices", "unexpected argument '%s'", argv[optind]);
    unsigned n = 0, def = 0;
    const char *why = "ranking";
    clrun_status st = clrun_device_count(&n);
    if (st != CLRUN_OK) return cli_fail("devices", NULL, st);
    st = clrun_device_select(NULL, &def, &why);
    const char *bad_env = NULL;
    if (st != CLRUN_OK) { /* $CLRUN_DEVICE matches nothing: still list, and say so */
        bad_env = getenv("CLRUN_DEVICE");
        def = n;
    }
    json_t *list = json ? json_array() : NULL;
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        clrun_device_get(i, &in);
        if (json) {
            json_array_append_new(list, json_info(&in, i == def, why));
            continue;
        }
        char gm[32];
        mem(gm, sizeof gm, in.global_mem);
        printf("%s %u:%u  %-4s %s\n", i == def ? "*" : " ", in.platform_index, in.device_index, cli_type_name(in.type), in.name);
        printf("        platform %s (%s); vendor %s\n", in.platform_name, in.platform_vendor, in.vendor);
        printf("        %s, driver %s, %s\n", in.version, in.driver_version, in.c_version);
        printf("        %s global memory, %u compute units, work-groups up to %zu, fp16 %s, fp64 %s\n", gm, in.compute_units,
               in.max_work_group, in.fp16 ? "yes" : "no", in.fp64 ? "yes" : "no");
    }
    if (json) { /* with a $CLRUN_DEVICE that matches nothing the error record follows (exit 3) */
        cli_json_emit(stdout, json_pack("{s:o}", "devices", list));
        if (bad_env) fprintf(stderr, "clrun devices: %s\n", clrun_last_error(NULL));
    } else if (bad_env) {
        printf("\nno default: $CLRUN_DEVICE='%s' matches no device\n", bad_env);
    } else {
        printf("\n* default device (%s%s)\n", why,
               strcmp(why, "ranking") == 0 ? ": GPU, then accelerator, then CPU; more global memory first" : "");
    }
    return bad_env ? EXIT_NODEVICE : EXIT_OK;
}

static const char *info_help = "usage: clrun info [-d SPEC] [--json]\n\n"
                               "Every capability clrun probes on one device (default: $CLRUN_DEVICE, else the best device).\n\n"
                               "  -d, --device SPEC   PLATFORM:DEVICE (index or name substring each), an index, a name substring,\n"
                               "                      or gpu, cpu, accelerator\n"
                               "  --json              one JSON object\n"
                               "  --help              this text\n\n"
                               "Exit codes: 0; 3 when the spec matches nothing (the devices are listed) or there is no platform.\n";

int cmd_info(int argc, char **argv)
{
    int json = 0, c;
    const char *spec = NULL;
    static const struct option opts[] = {
        {"device", required_argument, NULL, 'd'}, {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    struct cli_opts opt = {.sub = "info", .help = info_help, .first = 1};
    while ((c = cli_next_opt(&opt, argc, argv, "d:h", opts)) != CLI_OPTS_END) {
        if (c == CLI_OPTS_EXIT) return opt.rc;
        if (c == 'd') spec = optarg;
        else if (c == 'j') json = 1;
    }
    if (optind < argc) return cli_usage_error("info", "unexpected argument '%s'", argv[optind]);
    clrun_ctx *ctx = NULL;
    int rc = cli_open("info", spec, &ctx);
    if (rc) return rc;
    const clrun_device_info *in = clrun_ctx_device(ctx);
    char cache[4096];
    const char *cdir = clrun_cache_dir(cache, sizeof cache);
    if (json) {
        cli_json_emit(stdout, json_info(in, 0, ""));
    } else {
        char gm[32], ma[32], lm[32];
        mem(gm, sizeof gm, in->global_mem);
        mem(ma, sizeof ma, in->max_alloc);
        mem(lm, sizeof lm, in->local_mem);
        printf("device            %u:%u %s\n", in->platform_index, in->device_index, in->name);
        printf("type              %s\n", cli_type_name(in->type));
        printf("vendor            %s\n", in->vendor);
        printf("platform          %s (%s), %s\n", in->platform_name, in->platform_vendor, in->platform_version);
        printf("version           %s\n", in->version);
        printf("driver            %s\n", in->driver_version);
        printf("OpenCL C          %d.%d (%s)\n", in->c_version_major, in->c_version_minor, in->c_version);
        printf("global memory     %s (%llu bytes)\n", gm, (unsigned long long)in->global_mem);
        printf("largest buffer    %s\n", ma);
        printf("local memory      %s per work-group\n", lm);
        printf("compute units     %u\n", in->compute_units);
        printf("work-group        up to %zu items (%zu x %zu x %zu); preferred multiple %zu\n", in->max_work_group, in->max_work_item[0],
               in->max_work_item[1], in->max_work_item[2], in->preferred_multiple);
        printf("sub-buffer align  %u bytes\n", in->mem_base_align);
        printf("fp16 / fp64       %s / %s\n", in->fp16 ? "yes" : "no", in->fp64 ? "yes" : "no");
        printf("subgroups         %s\n", in->subgroups ? "yes" : "no");
        printf("unified memory    %s\n", in->host_unified ? "yes" : "no");
        printf("f32 subnormals    %s\n", in->fp32_denorms ? "kept" : "flushed to zero");
        printf("binary cache      %s\n", cdir ? cdir : "off");
    }
    clrun_close(ctx);
    return EXIT_OK;
}
