/* Every scalar type, each stored as a double (exact for these test values). Apart from cli.cl: it
 * needs fp64, which some devices lack (llvmpipe). */
__kernel void scalars(__global double *out, char a, uchar b, short c, ushort d, int e, uint f, long g, ulong h,
                      float x, double y)
{
    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f; out[6] = g; out[7] = h;
    out[8] = x; out[9] = y;
}
