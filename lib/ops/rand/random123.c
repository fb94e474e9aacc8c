/* random123.c — preprocessed at build time (meson.build) into random123_philox.h, the OpenCL C of
 * Random123's Philox from the installed package (Debian librandom123-dev): the kernels include the
 * library's own header, resolved here once so that no include path is needed at run time. */
#include <Random123/philox.h>
