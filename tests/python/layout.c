/* layout.c — sizes and member offsets of the public structs the Python bindings mirror in ctypes
 * (python/clrun/_lib.py), as the compiler lays them out from clrun.h: test_layout.py compares. */
#include <clrun.h>
#include <stddef.h>
#include <stdio.h>

#define S(T) printf("%s\"%s\": {\"size\": %zu, \"fields\": {", first ? "" : ", ", #T, sizeof(T)), first = 0, f = 1
#define F(T, m) printf("%s\"%s\": %zu", f ? "" : ", ", #m, offsetof(T, m)), f = 0
#define E() printf("}}")

int main(void)
{
    int first = 1, f = 1;
    printf("{");
    S(clrun_device_info);
    F(clrun_device_info, index), F(clrun_device_info, platform_index), F(clrun_device_info, device_index), F(clrun_device_info, type);
    F(clrun_device_info, platform_name), F(clrun_device_info, platform_version), F(clrun_device_info, platform_vendor);
    F(clrun_device_info, name), F(clrun_device_info, vendor), F(clrun_device_info, version), F(clrun_device_info, driver_version);
    F(clrun_device_info, c_version), F(clrun_device_info, c_version_major), F(clrun_device_info, c_version_minor);
    F(clrun_device_info, global_mem), F(clrun_device_info, max_alloc), F(clrun_device_info, local_mem), F(clrun_device_info, compute_units);
    F(clrun_device_info, max_work_group), F(clrun_device_info, max_work_item), F(clrun_device_info, preferred_multiple);
    F(clrun_device_info, mem_base_align), F(clrun_device_info, fp64), F(clrun_device_info, fp16), F(clrun_device_info, subgroups);
    F(clrun_device_info, host_unified), F(clrun_device_info, fp32_denorms);
    E();
    S(clrun_arg_info);
    F(clrun_arg_info, kind), F(clrun_arg_info, type), F(clrun_arg_info, name);
    E();
    S(clrun_profile_entry);
    F(clrun_profile_entry, kernel), F(clrun_profile_entry, launches), F(clrun_profile_entry, total_ms), F(clrun_profile_entry, min_ms);
    F(clrun_profile_entry, max_ms);
    E();
    S(clrun_gemm_desc);
    F(clrun_gemm_desc, trans_a), F(clrun_gemm_desc, trans_b), F(clrun_gemm_desc, m), F(clrun_gemm_desc, n), F(clrun_gemm_desc, k);
    F(clrun_gemm_desc, alpha), F(clrun_gemm_desc, beta), F(clrun_gemm_desc, a), F(clrun_gemm_desc, a_off), F(clrun_gemm_desc, lda);
    F(clrun_gemm_desc, stride_a), F(clrun_gemm_desc, b), F(clrun_gemm_desc, b_off), F(clrun_gemm_desc, ldb), F(clrun_gemm_desc, stride_b);
    F(clrun_gemm_desc, c), F(clrun_gemm_desc, c_off), F(clrun_gemm_desc, ldc), F(clrun_gemm_desc, stride_c), F(clrun_gemm_desc, batch);
    F(clrun_gemm_desc, backend), F(clrun_gemm_desc, fast), F(clrun_gemm_desc, type), F(clrun_gemm_desc, whole_m);
    E();
    S(clrun_scaler);
    F(clrun_scaler, scale), F(clrun_scaler, growth_factor), F(clrun_scaler, backoff_factor), F(clrun_scaler, growth_interval);
    F(clrun_scaler, growth_tracker), F(clrun_scaler, found_inf);
    E();
    S(clrun_grad);
    F(clrun_grad, buf), F(clrun_grad, off), F(clrun_grad, n), F(clrun_grad, type);
    E();
    S(clrun_qparams);
    F(clrun_qparams, channels), F(clrun_qparams, inner), F(clrun_qparams, scale), F(clrun_qparams, zero_point);
    E();
    S(clrun_s8_epilogue);
    F(clrun_s8_epilogue, row_scale), F(clrun_s8_epilogue, col_scale), F(clrun_s8_epilogue, bias), F(clrun_s8_epilogue, relu);
    E();
    S(clrun_canny_params);
    F(clrun_canny_params, low), F(clrun_canny_params, high), F(clrun_canny_params, l2), F(clrun_canny_params, aperture);
    F(clrun_canny_params, blur), F(clrun_canny_params, blur_sigma);
    E();
    S(clrun_image);
    F(clrun_image, width), F(clrun_image, height), F(clrun_image, stride), F(clrun_image, channels), F(clrun_image, data);
    E();
    S(clrun_canny_report);
    F(clrun_canny_report, image), F(clrun_canny_report, device), F(clrun_canny_report, progress), F(clrun_canny_report, arg);
    F(clrun_canny_report, read_s), F(clrun_canny_report, device_s), F(clrun_canny_report, write_s), F(clrun_canny_report, written);
    F(clrun_canny_report, sent);
    E();
    S(clrun_rand_desc);
    F(clrun_rand_desc, seed), F(clrun_rand_desc, subsequence), F(clrun_rand_desc, offset), F(clrun_rand_desc, dist);
    F(clrun_rand_desc, type), F(clrun_rand_desc, a), F(clrun_rand_desc, b), F(clrun_rand_desc, low), F(clrun_rand_desc, high);
    E();
    S(clrun_fft_desc);
    F(clrun_fft_desc, kind), F(clrun_fft_desc, precision), F(clrun_fft_desc, ndim), F(clrun_fft_desc, shape), F(clrun_fft_desc, batch);
    F(clrun_fft_desc, norm), F(clrun_fft_desc, inplace);
    E();
    S(clrun_fft_info);
    F(clrun_fft_info, build_ms), F(clrun_fft_info, source), F(clrun_fft_info, in_count), F(clrun_fft_info, out_count);
    E();
    S(clrun_tensor4);
    F(clrun_tensor4, layout), F(clrun_tensor4, type), F(clrun_tensor4, n), F(clrun_tensor4, c), F(clrun_tensor4, h), F(clrun_tensor4, w);
    E();
    S(clrun_conv2d_desc);
    F(clrun_conv2d_desc, x), F(clrun_conv2d_desc, k), F(clrun_conv2d_desc, r), F(clrun_conv2d_desc, s), F(clrun_conv2d_desc, stride_h);
    F(clrun_conv2d_desc, stride_w), F(clrun_conv2d_desc, pad_h), F(clrun_conv2d_desc, pad_w), F(clrun_conv2d_desc, dilation_h);
    F(clrun_conv2d_desc, dilation_w), F(clrun_conv2d_desc, groups), F(clrun_conv2d_desc, algo);
    E();
    S(clrun_batchnorm);
    F(clrun_batchnorm, training), F(clrun_batchnorm, momentum), F(clrun_batchnorm, eps), F(clrun_batchnorm, gamma),
        F(clrun_batchnorm, beta);
    F(clrun_batchnorm, running_mean), F(clrun_batchnorm, running_var), F(clrun_batchnorm, save_mean), F(clrun_batchnorm, save_invstd);
    E();
    S(clrun_pool_desc);
    F(clrun_pool_desc, max), F(clrun_pool_desc, kh), F(clrun_pool_desc, kw), F(clrun_pool_desc, stride_h), F(clrun_pool_desc, stride_w);
    F(clrun_pool_desc, pad_h), F(clrun_pool_desc, pad_w), F(clrun_pool_desc, count_include_pad);
    E();
    S(clrun_sgd);
    F(clrun_sgd, lr), F(clrun_sgd, momentum), F(clrun_sgd, dampening), F(clrun_sgd, weight_decay), F(clrun_sgd, nesterov);
    E();
    S(clrun_adamw);
    F(clrun_adamw, lr), F(clrun_adamw, beta1), F(clrun_adamw, beta2), F(clrun_adamw, eps), F(clrun_adamw, weight_decay);
    E();
    printf("}\n");
    return 0;
}
