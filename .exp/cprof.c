#include <clrun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  clrun_ctx *ctx; if (clrun_open(&ctx, argc > 2 ? argv[2] : NULL)) { puts(clrun_last_error(NULL)); return 1; }
  clrun_image img; if (clrun_image_read(argv[1], &img)) { puts(clrun_last_error(NULL)); return 1; }
  int W = img.width, H = img.height; size_t n = (size_t)W * H;
  clrun_buf *s, *d, *sc; clrun_buf_new(ctx, n, 0, &s); clrun_buf_new(ctx, n, 0, &d); clrun_buf_new(ctx, n * 5, 0, &sc);
  clrun_upload(s, 0, img.data, n);
  clrun_prog *p; if (clrun_prog_builtin(ctx, "canny", getenv("OPTS") ? getenv("OPTS") : "-DCN=1 -DL2=0 -DBX=32 -DBY=8", &p)) { puts(clrun_last_error(ctx)); return 1; }
  const char *names[4] = {getenv("CPU") ? "clrun_canny_nms_cpu" : "clrun_canny_nms", "clrun_canny_union", "clrun_canny_resolve", "clrun_canny_out"};
  clrun_kernel *k[4]; for (int i = 0; i < 4; i++) if (clrun_kernel_new(p, names[i], &k[i])) { puts(clrun_last_error(ctx)); return 1; }
  int BX = getenv("BX") ? atoi(getenv("BX")) : 32, BY = getenv("BY") ? atoi(getenv("BY")) : 8;
  clrun_arg_buf(k[0], 0, s); clrun_arg_u64(k[0], 1, 0); clrun_arg_u32(k[0], 2, W); clrun_arg_i32(k[0], 3, W); clrun_arg_i32(k[0], 4, H);
  clrun_arg_i32(k[0], 5, 50); clrun_arg_i32(k[0], 6, 100); clrun_arg_buf(k[0], 7, sc); clrun_arg_buf(k[0], 8, sc);
  for (int i = 1; i < 3; i++) { clrun_arg_i32(k[i], 0, W); clrun_arg_i32(k[i], 1, H); clrun_arg_buf(k[i], 2, sc); clrun_arg_buf(k[i], 3, sc); }
  clrun_arg_i32(k[3], 0, W); clrun_arg_i32(k[3], 1, H); clrun_arg_buf(k[3], 2, sc); clrun_arg_buf(k[3], 3, sc); clrun_arg_buf(k[3], 4, d); clrun_arg_u64(k[3], 5, 0); clrun_arg_u32(k[3], 6, W);
  int CWv = getenv("CW") ? atoi(getenv("CW")) : 1; size_t tiles[2] = {(W + BX - 1) / BX * BX, (H + BY - 1) / BY * BY}, tile[2] = {BX, BY}, g[2] = {(W + CWv - 1) / CWv, H}, l[2] = {32, 1}; if (g[0] % 32) l[0] = 1; if (getenv("CPU")) { tiles[0] = g[0]; tiles[1] = (H + 15) / 16; tile[0] = 1; tile[1] = 1; }
  for (int rep = 0; rep < 3; rep++) {
    double tot = 0;
    for (int i = 0; i < 4; i++) {
      clrun_event *ev; clrun_status st = clrun_launch_ev(k[i], 2, i ? g : tiles, i ? l : tile, &ev);
      if (st) { puts(clrun_last_error(ctx)); return 1; }
      clrun_finish(ctx); double ms = clrun_event_ms(ev); tot += ms; if (rep == 2) printf("%-22s %8.3f ms\n", names[i], ms); clrun_event_free(ev);
    }
    if (rep == 2) printf("total %.3f ms\n", tot);
  }
  return 0;
}
