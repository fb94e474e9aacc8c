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

static void json_info(FILE *f, const clrun_device_info *in, int is_default, const char *why)
{
    fprintf(f, "{\"index\": %u, \"platform_index\": %u, \"device_index\": %u, \"spec\": \"%u:%u\", \"type\": \"%s\", \"name\": ", in->index,
            in->platform_index, in->device_index, in->platform_index, in->device_index, cli_type_name(in->type));
    cli_json_str(f, in->name);
    fprintf(f, ", \"vendor\": ");
    cli_json_str(f, in->vendor);
    fprintf(f, ", \"platform\": ");
    cli_json_str(f, in->platform_name);
    fprintf(f, ", \"platform_vendor\": ");
    cli_json_str(f, in->platform_vendor);
    fprintf(f, ", \"version\": ");
    cli_json_str(f, in->version);
    fprintf(f, ", \"driver_version\": ");
    cli_json_str(f, in->driver_version);
    fprintf(f, ", \"opencl_c_version\": ");
    cli_json_str(f, in->c_version);
    fprintf(f,
            ", \"global_mem\": %llu, \"max_alloc\": %llu, \"local_mem\": %llu, \"compute_units\": %u, "
            "\"max_work_group\": %zu, \"max_work_item\": [%zu, %zu, %zu], \"preferred_multiple\": %zu, "
            "\"mem_base_align\": %u, \"fp16\": %s, \"fp64\": %s, \"subgroups\": %s, \"host_unified\": %s, "
            "\"fp32_denorms\": %s, \"default\": %s",
            (unsigned long long)in->global_mem, (unsigned long long)in->max_alloc, (unsigned long long)in->local_mem, in->compute_units,
            in->max_work_group, in->max_work_item[0], in->max_work_item[1], in->max_work_item[2], in->preferred_multiple,
            in->mem_base_align, in->fp16 ? "true" : "false", in->fp64 ? "true" : "false", in->subgroups ? "true" : "false",
            in->host_unified ? "true" : "false", in->fp32_denorms ? "true" : "false", is_default ? "true" : "false");
    if (is_default) {
        fprintf(f, ", \"default_reason\": ");
        cli_json_str(f, why);
    }
    fprintf(f, "}");
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
    if (json) printf("{\"devices\": [");
    for (unsigned i = 0; i < n; i++) {
        clrun_device_info in;
        clrun_device_get(i, &in);
        if (json) {
            if (i) printf(", ");
            json_info(stdout, &in, i == def, why);
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
    if (json) {
        printf("]");
        if (bad_env) {
            printf(", \"error\": ");
            cli_json_str(stdout, clrun_last_error(NULL));
        }
        printf("}\n");
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
        json_info(stdout, in, 0, "");
        printf("\n");
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
