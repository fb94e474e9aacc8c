#ifndef TEST_OFFSET
#define TEST_OFFSET 0.5f
#endif
