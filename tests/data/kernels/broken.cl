/* Test kernel that does not compile: the build log must name the undeclared identifier. */
__kernel void broken(__global float *dst)
{
    dst[get_global_id(0)] = undeclared_identifier_xyz;
}
