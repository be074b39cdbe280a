/* flagtune-sim: a SIMULATOR of a JAX training job. It is not JAX and runs no GPU code.
 *
 * flagtune launches it exactly like a real training command: it reads XLA_FLAGS the way XLA's
 * parse_flags_from_env.cc does (same tokenizer, same fatal and non-fatal messages), reads the
 * JAX/NCCL/CUDA environment variables a real job would, "compiles" (sleeps), then prints one step
 * time per line. Step times come from an analytical performance landscape (fsdp8, single, sparse;
 * formulas in docs/SIMULATOR.md), or one drawn from a seed (gen:SEED, genland.c), plus seeded
 * noise, so tests, the demo and the tuner benchmarks get a realistic, repeatable objective: OOM
 * regions, no-op flags, interactions, noisy repeats. Everything is deterministic for equal (--seed,
 * configuration, FLAGTUNE_TRIAL). It must stay dependency-free (C11 + libm) so the test suite can
 * always build it. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../no_leak_check.h"
#include "genland.h"

#define GIB 1073741824.0
#define MIB 1048576.0

/* ---------------------------------------------------------------------------------------------
 * The flag catalog of the simulated jaxlib (a GPU build, mid-2024 defaults as the seed guides
 * describe them). Anything else in XLA_FLAGS is an unknown flag, as in XLA. TPU-only flags
 * (xla_tpu_*, xla_jf_*, xla_mosaic_*, xla_msa_*, xla_should_*, xla_enable_async_*,
 * xla_*_latency_bound_threshold_in_bytes, xla_memory_scheduler) are libtpu flags: a GPU jaxlib
 * rejects them in XLA_FLAGS, so they are deliberately absent here.
 * ------------------------------------------------------------------------------------------- */

typedef enum { T_BOOL, T_I32, T_I64, T_F32, T_STR, T_CMDBUF, T_COLLS } ftype;

typedef struct {
  const char *name;
  ftype type;
  const char *def; /* default shown by XLA_FLAGS=--help */
} flagdef;

#define DEFAULT_COMBINE "31457287" /* 30 MiB + 7, kDefault*CombineThreshold in XLA */
#define DEFAULT_CMDBUF "FUSION,CUBLAS,CUBLASLT,CUSTOM_CALL,CUDNN"

static const flagdef FLAGS[] = {
    /* Scheduling and collectives (the JAX-Toolbox GPU guide, its PGLE guide, the XLA flags
       guidance). */
    {"xla_gpu_enable_latency_hiding_scheduler", T_BOOL, "false"},
    {"xla_gpu_enable_highest_priority_async_stream", T_BOOL, "true"},
    {"xla_gpu_disable_async_collectives", T_COLLS, ""},
    {"xla_gpu_enable_while_loop_double_buffering", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_all_gather", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_reduce_scatter", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_all_reduce", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_collectives", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_p2p", T_BOOL, "false"},
    {"xla_gpu_enable_all_gather_combine_by_dim", T_BOOL, "true"},
    {"xla_gpu_enable_reduce_scatter_combine_by_dim", T_BOOL, "true"},
    {"xla_gpu_all_gather_combine_threshold_bytes", T_I64, DEFAULT_COMBINE},
    {"xla_gpu_reduce_scatter_combine_threshold_bytes", T_I64, DEFAULT_COMBINE},
    {"xla_gpu_all_reduce_combine_threshold_bytes", T_I64, DEFAULT_COMBINE},
    {"xla_gpu_collective_permute_combine_threshold_bytes", T_I64, DEFAULT_COMBINE},
    {"xla_gpu_collective_permute_decomposer_threshold", T_I64, "9223372036854775807"},
    {"xla_gpu_lhs_enable_gpu_async_tracker", T_BOOL, "false"},
    {"xla_gpu_multi_streamed_windowed_einsum", T_BOOL, "false"},
    {"xla_gpu_threshold_for_windowed_einsum_mib", T_I64, "100000"},
    {"xla_gpu_operand_bytes_threshold_for_windowed_einsum", T_I64, "-1"},
    {"xla_gpu_experimental_pipeline_parallelism_opt_level", T_STR,
     "PIPELINE_PARALLELISM_OPT_LEVEL_DISABLE"},
    {"xla_gpu_pgle_profile_file_or_directory_path", T_STR, ""},
    {"xla_gpu_pgle_accuracy_checker", T_STR, "PGLE_STRICTNESS_LEVEL_WARN"},
    {"xla_gpu_enable_analytical_latency_estimator", T_BOOL, "false"},
    {"xla_gpu_enable_analytical_sol_latency_estimator", T_BOOL, "true"},
    {"xla_gpu_analytical_latency_estimator_options", T_STR, ""},
    {"xla_latency_hiding_scheduler_rerun", T_I32, "1"},
    {"xla_gpu_memory_limit_slop_factor", T_I32, "95"},
    {"xla_dump_latency_hiding_schedule", T_BOOL, "false"},
    {"xla_gpu_enable_approx_costly_collectives", T_BOOL, "false"},
    {"xla_gpu_enable_reassociation_for_converted_ar", T_BOOL, "true"},
    {"xla_gpu_enable_while_loop_reduce_scatter_code_motion", T_BOOL, "false"},
    {"xla_gpu_collective_inflation_factor", T_I32, "1"},
    {"xla_gpu_experimental_parallel_collective_overlap_limit", T_I32, "1"},
    /* Flags the seed guides call "previously used": accepted (no effect), as in jaxlib 0.4.2x. */
    {"xla_gpu_enable_async_all_gather", T_BOOL, "true"},
    {"xla_gpu_enable_async_reduce_scatter", T_BOOL, "true"},
    {"xla_gpu_enable_async_all_reduce", T_BOOL, "true"},
    {"xla_gpu_enable_triton_softmax_fusion", T_BOOL, "false"},
    {"xla_gpu_simplify_all_fp_conversions", T_BOOL, "true"},
    {"xla_gpu_graph_level", T_I32, "1"},
    /* NCCL. */
    {"xla_gpu_enable_nccl_user_buffers", T_BOOL, "false"},
    {"xla_gpu_enable_nccl_comm_splitting", T_BOOL, "true"},
    {"xla_gpu_enable_nccl_per_stream_comms", T_BOOL, "false"},
    {"xla_gpu_nccl_collective_max_nchannels", T_I64, "0"},
    {"xla_gpu_nccl_p2p_max_nchannels", T_I64, "0"},
    {"xla_gpu_nccl_termination_timeout_seconds", T_I64, "-1"},
    {"xla_gpu_nccl_terminate_on_error", T_BOOL, "false"},
    {"xla_gpu_collectives_use_persistent_cliques", T_BOOL, "false"},
    {"xla_gpu_use_memcpy_local_p2p", T_BOOL, "false"},
    /* Kernels, fusion, autotuning, command buffers. */
    {"xla_gpu_autotune_level", T_I32, "4"},
    {"xla_gpu_autotune_max_solutions", T_I64, "0"},
    {"xla_gpu_autotune_gemm_rtol", T_F32, "0.100000"},
    {"xla_gpu_enable_command_buffer", T_CMDBUF, DEFAULT_CMDBUF},
    {"xla_gpu_graph_min_graph_size", T_I32, "5"},
    {"xla_gpu_graph_enable_concurrent_region", T_BOOL, "false"},
    {"xla_gpu_enable_triton_gemm", T_BOOL, "true"},
    {"xla_gpu_triton_gemm_any", T_BOOL, "false"},
    {"xla_gpu_enable_triton_hopper", T_BOOL, "false"},
    {"xla_gpu_enable_split_k_autotuning", T_BOOL, "true"},
    {"xla_gpu_exhaustive_tiling_search", T_BOOL, "false"},
    {"xla_gpu_triton_gemm_disable_reduced_precision_reduction", T_BOOL, "false"},
    {"xla_gpu_enable_cudnn_fmha", T_BOOL, "false"},
    {"xla_gpu_cudnn_gemm_fusion", T_BOOL, "false"},
    {"xla_gpu_cudnn_gemm_fusion_level", T_I32, "0"},
    {"xla_gpu_enable_cudnn_layer_norm", T_BOOL, "false"},
    {"xla_gpu_enable_cublaslt", T_BOOL, "false"},
    {"xla_gpu_cublas_fallback", T_BOOL, "true"},
    {"xla_gpu_enable_custom_fusions", T_BOOL, "false"},
    {"xla_gpu_enable_address_computation_fusion", T_BOOL, "false"},
    {"xla_gpu_enable_dynamic_slice_fusion", T_BOOL, "false"},
    {"xla_gpu_enable_priority_fusion", T_BOOL, "true"},
    {"xla_gpu_enable_reduction_epilogue_fusion", T_BOOL, "true"},
    {"xla_gpu_enable_cub_radix_sort", T_BOOL, "true"},
    {"xla_gpu_enable_fast_min_max", T_BOOL, "false"},
    {"xla_gpu_strict_conv_algorithm_picker", T_BOOL, "true"},
    {"xla_gpu_use_runtime_fusion", T_BOOL, "false"},
    {"xla_gpu_gemm_rewrite_size_threshold", T_I64, "100"},
    {"xla_gpu_dot_merger_threshold_mb", T_I32, "32"},
    {"xla_gpu_deterministic_ops", T_BOOL, "false"},
    {"xla_gpu_exclude_nondeterministic_ops", T_BOOL, "false"},
    {"xla_gpu_enable_shared_constants", T_BOOL, "true"},
    {"xla_gpu_enable_host_memory_offloading", T_BOOL, "false"},
    {"xla_gpu_shard_autotuning", T_BOOL, "true"},
    {"xla_gpu_filter_kernels_spilling_registers_on_autotuning", T_BOOL, "true"},
    {"xla_gpu_per_fusion_autotune_cache_dir", T_STR, ""},
    {"xla_gpu_dump_autotune_results_to", T_STR, ""},
    {"xla_gpu_load_autotune_results_from", T_STR, ""},
    {"xla_gpu_redzone_scratch_max_megabytes", T_I64, "4096"},
    {"xla_gpu_redzone_padding_bytes", T_I64, "8388608"},
    {"xla_gpu_enable_llvm_module_compilation_parallelism", T_BOOL, "false"},
    {"xla_gpu_enable_libnvptxcompiler", T_BOOL, "false"},
    {"xla_gpu_cuda_data_dir", T_STR, "./cuda_sdk_lib"},
    {"xla_gpu_asm_extra_flags", T_STR, ""},
    {"xla_gpu_target_config_filename", T_STR, ""},
    {"xla_gpu_temp_buffer_use_separate_color", T_BOOL, "false"},
    {"xla_gpu_require_exclusive_lock", T_BOOL, "false"},
    {"xla_gpu_executable_warn_stuck_timeout_seconds", T_I32, "10"},
    {"xla_gpu_executable_terminate_timeout_seconds", T_I32, "30"},
    {"xla_gpu_auto_spmd_partitioning_memory_budget_gb", T_I64, "0"},
    {"xla_gpu_auto_spmd_partitioning_memory_budget_ratio", T_F32, "1.100000"},
    {"xla_gpu_copy_insertion_use_region_analysis", T_BOOL, "false"},
    {"xla_gpu_unsafe_pipelined_loop_annotator", T_BOOL, "false"},
    {"xla_gpu_verify_triton_fusion_numerics", T_BOOL, "false"},
    /* General, dumping and debugging. */
    {"xla_backend_optimization_level", T_I32, "3"},
    {"xla_disable_hlo_passes", T_STR, ""},
    {"xla_enable_hlo_passes_only", T_STR, ""},
    {"xla_allow_excess_precision", T_BOOL, "true"},
    {"xla_force_host_platform_device_count", T_I32, "1"},
    {"xla_cpu_multi_thread_eigen", T_BOOL, "true"},
    {"xla_cpu_enable_fast_math", T_BOOL, "false"},
    {"xla_llvm_disable_expensive_passes", T_BOOL, "false"},
    {"xla_detailed_logging", T_BOOL, "true"},
    {"xla_enable_dumping", T_BOOL, "true"},
    {"xla_dump_to", T_STR, ""},
    {"xla_dump_hlo_as_text", T_BOOL, "false"},
    {"xla_dump_hlo_as_proto", T_BOOL, "false"},
    {"xla_dump_hlo_as_html", T_BOOL, "false"},
    {"xla_dump_hlo_as_dot", T_BOOL, "false"},
    {"xla_dump_hlo_as_long_text", T_BOOL, "true"},
    {"xla_dump_hlo_pass_re", T_STR, ""},
    {"xla_dump_hlo_module_re", T_STR, ""},
    {"xla_dump_include_timestamp", T_BOOL, "false"},
    {"xla_dump_max_hlo_modules", T_I32, "-1"},
    {"xla_dump_module_metadata", T_BOOL, "false"},
    {"xla_dump_large_constants", T_BOOL, "false"},
    {"xla_gpu_dump_llvmir", T_BOOL, "false"},
    {"xla_debug_buffer_assignment_show_max", T_I64, "15"},
    /* The rest of XLA's own flag list (xla/debug_options_flags.cc, as lua/catalog.lua records it,
     * CPU flags included: every jaxlib knows them). Accepted with no effect in any landscape, so
     * that a flag flagtune's catalog calls valid never dies here as "unknown". */
    // clang-format off
    {"xla_allow_h2h_copy_when_automatic_host_compute_offload_disabled", T_BOOL, "false"},
    {"xla_backend_extra_options", T_STR, ""}, {"xla_cmd_buffer_trace_cache_size", T_I64, "16"},
    {"xla_cpu_collective_call_terminate_timeout_seconds", T_I64, "40"},
    {"xla_cpu_collective_call_warn_stuck_timeout_seconds", T_I64, "20"},
    {"xla_cpu_collective_timeout_seconds", T_I64, "1800"},
    {"xla_cpu_copy_insertion_use_region_analysis", T_BOOL, "false"},
    {"xla_cpu_emitter_verification_level", T_I64, "0"},
    {"xla_cpu_enable_fast_min_max", T_BOOL, "true"},
    {"xla_cpu_enable_platform_dependent_math", T_BOOL, "true"},
    {"xla_cpu_enable_xprof_traceme", T_BOOL, "false"},
    {"xla_cpu_experimental_enable_tiling_propagation", T_BOOL, "false"},
    {"xla_cpu_experimental_onednn_custom_call", T_BOOL, "false"},
    {"xla_cpu_experimental_onednn_fusion_type", T_STR, ""},
    {"xla_cpu_experimental_xnn_fusion_type", T_STR, ""},
    {"xla_cpu_experimental_xnn_graph_fusion_mode", T_STR, "XNN_GRAPH_FUSION_MODE_DISABLED"},
    {"xla_cpu_experimental_ynn_fusion_type", T_STR, "INDIVIDUAL_DOT,INDIVIDUAL_CONVOLUTION,REDUCE"},
    {"xla_cpu_fast_math_honor_division", T_BOOL, "true"},
    {"xla_cpu_fast_math_honor_functions", T_BOOL, "true"},
    {"xla_cpu_fast_math_honor_infs", T_BOOL, "true"},
    {"xla_cpu_fast_math_honor_nans", T_BOOL, "true"}, {"xla_cpu_ftz", T_BOOL, "true"},
    {"xla_cpu_max_isa", T_STR, ""}, {"xla_cpu_parallel_codegen_split_count", T_I64, "32"},
    {"xla_cpu_prefer_vector_width", T_I64, "256"},
    {"xla_cpu_scheduler_type", T_STR, "CPU_SCHEDULER_TYPE_DEFAULT"},
    {"xla_cpu_strict_dot_conv_math", T_BOOL, "false"}, {"xla_cpu_use_acl", T_BOOL, "false"},
    {"xla_cpu_use_fusion_emitters", T_BOOL, "true"}, {"xla_cpu_use_onednn", T_BOOL, "false"},
    {"xla_cpu_use_thunk_runtime", T_BOOL, "true"}, {"xla_cpu_use_xnnpack", T_BOOL, "true"},
    {"xla_detect_unstable_reductions", T_STR, "DETECTION_MODE_NONE"},
    {"xla_detect_unstable_reductions_post_optimizations", T_STR, "DETECTION_MODE_NONE"},
    {"xla_disable_all_hlo_passes", T_BOOL, "false"},
    {"xla_disable_automatic_host_compute_offload", T_BOOL, "false"},
    {"xla_dump_buffer_assignment_analysis", T_BOOL, "true"},
    {"xla_dump_compact_gte", T_BOOL, "false"}, {"xla_dump_compress_protos", T_BOOL, "false"},
    {"xla_dump_disable_metadata", T_BOOL, "false"}, {"xla_dump_emitter_re", T_STR, ""},
    {"xla_dump_enable_mlir_pretty_form", T_BOOL, "true"},
    {"xla_dump_full_hlo_config", T_BOOL, "true"},
    {"xla_dump_fusion_visualization", T_BOOL, "false"},
    {"xla_dump_hlo_as_url", T_BOOL, "false"}, {"xla_dump_hlo_pipeline_re", T_STR, ""},
    {"xla_dump_hlo_snapshots", T_BOOL, "false"}, {"xla_dump_hlo_to_subfolder", T_BOOL, "false"},
    {"xla_dump_hlo_unoptimized_snapshots", T_BOOL, "false"},
    {"xla_early_exit_with_layouts", T_BOOL, "false"},
    {"xla_eliminate_hlo_implicit_broadcast", T_BOOL, "true"},
    {"xla_embed_ir_in_executable", T_BOOL, "false"},
    {"xla_enable_command_buffers_during_profiling", T_BOOL, "false"},
    {"xla_enable_enzyme_comms_opt", T_BOOL, "false"}, {"xla_enable_fast_math", T_BOOL, "false"},
    {"xla_enable_hlo_sharding_v3", T_BOOL, "false"},
    {"xla_enable_rgv3_materialization", T_BOOL, "true"},
    {"xla_enable_scoped_logging_timers", T_BOOL, "true"}, {"xla_flags_reset", T_BOOL, "false"},
    {"xla_fuel", T_STR, ""}, {"xla_gpu_algorithm_denylist_path", T_STR, ""},
    {"xla_gpu_all_gather_mode", T_STR, "private"},
    {"xla_gpu_all_reduce_blueconnect_num_devices_per_host", T_I64, "0"},
    {"xla_gpu_async_dot", T_BOOL, "false"}, {"xla_gpu_collect_cost_model_stats", T_BOOL, "false"},
    {"xla_gpu_collective_permute_connected_components", T_BOOL, "false"},
    {"xla_gpu_collective_permute_mode", T_STR, "private"},
    {"xla_gpu_collectives_implementation", T_STR, ""},
    {"xla_gpu_command_buffer_scheduling_mode", T_STR, "LHS"},
    {"xla_gpu_command_buffer_unroll_loops", T_BOOL, "false"},
    {"xla_gpu_command_buffer_update_mode", T_STR, "ALWAYS_UPDATE"},
    {"xla_gpu_crash_on_verification_failures", T_BOOL, "false"},
    {"xla_gpu_cudnn_gemm_max_plans", T_I64, "5"},
    {"xla_gpu_default_to_alg_dot_bf16_bf16_f32", T_BOOL, "false"},
    {"xla_gpu_detect_inf", T_STR, "DETECTION_MODE_NONE"},
    {"xla_gpu_detect_nan", T_STR, "DETECTION_MODE_NONE"},
    {"xla_gpu_deviceless_cub_mode", T_STR, "DEVICELESS_CUB_WITH_FALLBACK"},
    {"xla_gpu_disable_gpuasm_optimizations", T_BOOL, "false"},
    {"xla_gpu_dump_autotune_logs_to", T_STR, ""},
    {"xla_gpu_dump_autotuned_gemm_fusions", T_BOOL, "false"},
    {"xla_gpu_dump_autotuned_instructions", T_BOOL, "false"},
    {"xla_gpu_dump_hlo_unoptimized_snapshots", T_BOOL, "false"},
    {"xla_gpu_enable_allocator_spatial_partitioning", T_BOOL, "true"},
    {"xla_gpu_enable_collectives_command_buffer_filter", T_STR, "ALLCOLLECTIVES"},
    {"xla_gpu_enable_cudnn_int8x32_convolution_reordering", T_BOOL, "true"},
    {"xla_gpu_enable_custom_fusions_re", T_STR, ""},
    {"xla_gpu_enable_dus_accumulator_zero_init_elimination", T_BOOL, "false"},
    {"xla_gpu_enable_nccl_clique_optimization", T_BOOL, "false"},
    {"xla_gpu_enable_nccl_symmetric_buffers", T_BOOL, "false"},
    {"xla_gpu_enable_pdl", T_BOOL, "true"}, {"xla_gpu_enable_pdl_launch", T_BOOL, "false"},
    {"xla_gpu_enable_pipelined_host_offloading", T_BOOL, "false"},
    {"xla_gpu_enable_scatter_determinism_expander", T_BOOL, "false"},
    {"xla_gpu_enable_triton_gemm_int4", T_BOOL, "true"},
    {"xla_gpu_enable_while_loop_unrolling", T_STR, "WHILE_LOOP_UNROLLING_AUTO_UNROLL"},
    {"xla_gpu_executable_embed_debug_info", T_BOOL, "true"},
    {"xla_gpu_executable_num_communication_streams", T_I64, "0"},
    {"xla_gpu_executable_num_compute_streams", T_I64, "0"},
    {"xla_gpu_executable_terminate_timeout", T_I64, "30"},
    {"xla_gpu_executable_warn_stuck_timeout", T_I64, "10"},
    {"xla_gpu_execution_progress_tracking", T_I64, "0"},
    {"xla_gpu_execution_terminate_timeout", T_STR, "inf"},
    {"xla_gpu_experimental_all_fusions_with_triton", T_BOOL, "false"},
    {"xla_gpu_experimental_aot_compiled_thunks", T_BOOL, "true"},
    {"xla_gpu_experimental_autotune_cache_mode", T_STR, "AUTOTUNE_CACHE_MODE_UPDATE"},
    {"xla_gpu_experimental_autotuner_cache_dir", T_STR, ""},
    {"xla_gpu_experimental_collective_cse_distance_threshold", T_I64, "0"},
    {"xla_gpu_experimental_collective_perf_table_path", T_STR, ""},
    {"xla_gpu_experimental_collective_start_as_early_as_possible", T_BOOL, "false"},
    {"xla_gpu_experimental_cost_model_gemm_tiling_options", T_STR, ""},
    {"xla_gpu_experimental_disable_binary_libraries", T_BOOL, "false"},
    {"xla_gpu_experimental_dump_fdo_profiles", T_BOOL, "false"},
    {"xla_gpu_experimental_dump_gpu_executable", T_BOOL, "false"},
    {"xla_gpu_experimental_dynamic_slice_fusion_verify_offsets", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_alltoall_windowed_einsum", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_buffer_saver_on_thunks", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_checksum_tracing_on_thunks", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_collective_multi_streaming", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_conv_fusion", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_dynamic_dot_search_space", T_BOOL, "true"},
    {"xla_gpu_experimental_enable_fusion_autotuner", T_BOOL, "true"},
    {"xla_gpu_experimental_enable_fusion_block_level_rewriter", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_heuristic_collective_combining", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_nccl_symmetric_buffers", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_nvshmem", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_split_k_rewrite", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_subchannel_dequantisation_fusion", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_sync_collective_combining", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_tiling_propagation", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_triton_heroless_priority_fusion", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_triton_tma", T_BOOL, "false"},
    {"xla_gpu_experimental_enable_triton_warp_specialization", T_BOOL, "false"},
    {"xla_gpu_experimental_force_split_k", T_I64, "0"},
    {"xla_gpu_experimental_gemm_fusion_v2", T_BOOL, "false"},
    {"xla_gpu_experimental_matmul_perf_table_path", T_STR, ""},
    {"xla_gpu_experimental_max_unroll_factor", T_I64, "32"},
    {"xla_gpu_experimental_pack_dot_operands_along_k_dimension", T_BOOL, "true"},
    {"xla_gpu_experimental_parallel_async_compute_limit", T_I64, "2"},
    {"xla_gpu_experimental_ragged_all_to_all_use_barrier", T_BOOL, "true"},
    {"xla_gpu_experimental_ragged_all_to_all_use_barrier_with_nccl", T_BOOL, "false"},
    {"xla_gpu_experimental_scaled_dot_with_triton", T_BOOL, "true"},
    {"xla_gpu_experimental_stream_annotation", T_BOOL, "true"},
    {"xla_gpu_experimental_thunk_buffer_debug_module_outputs", T_BOOL, "false"},
    {"xla_gpu_experimental_use_raft_select_k", T_BOOL, "false"},
    {"xla_gpu_experimental_use_ragged_dot_fusion", T_BOOL, "false"},
    {"xla_gpu_experimental_use_ragged_dot_grouped_gemm", T_BOOL, "true"},
    {"xla_gpu_fail_ptx_compilation_on_register_spilling", T_BOOL, "false"},
    {"xla_gpu_first_collective_call_terminate_timeout_seconds", T_I64, "40"},
    {"xla_gpu_first_collective_call_warn_stuck_timeout_seconds", T_I64, "20"},
    {"xla_gpu_force_compilation_parallelism", T_I64, "0"},
    {"xla_gpu_force_conv_nchw", T_BOOL, "false"}, {"xla_gpu_force_conv_nhwc", T_BOOL, "false"},
    {"xla_gpu_ftz", T_BOOL, "false"}, {"xla_gpu_fused_attention_use_cudnn_rng", T_BOOL, "false"},
    {"xla_gpu_fusion_autotune_top_k_configs", T_I64, "1"},
    {"xla_gpu_gemm_autotuner_override_file", T_STR, ""},
    {"xla_gpu_generate_debug_info", T_BOOL, "false"},
    {"xla_gpu_generate_line_info", T_BOOL, "false"}, {"xla_gpu_kernel_cache_file", T_STR, ""},
    {"xla_gpu_llvm_ir_file", T_STR, ""}, {"xla_gpu_llvm_verification_level", T_I64, "0"},
    {"xla_gpu_log_minmax", T_BOOL, "false"}, {"xla_gpu_mock_custom_calls", T_BOOL, "false"},
    {"xla_gpu_native_emitter_tune_unroll_factor_for_loops", T_BOOL, "false"},
    {"xla_gpu_nccl_async_execution", T_BOOL, "false"},
    {"xla_gpu_nccl_blocking_communicators", T_BOOL, "true"},
    {"xla_gpu_nccl_init_max_rank_per_root_ratio", T_I64, "0"},
    {"xla_gpu_override_gemm_autotuner", T_STR, ""},
    {"xla_gpu_print_compilation_stats", T_BOOL, "false"},
    {"xla_gpu_ptx_compiler_extra_flags", T_STR, ""}, {"xla_gpu_ptx_file", T_STR, ""},
    {"xla_gpu_ragged_all_to_all_mode", T_STR, "private"},
    {"xla_gpu_require_complete_aot_autotune_results", T_BOOL, "false"},
    {"xla_gpu_rocm_max_trace_events", T_I64, "4194304"}, {"xla_gpu_shape_checks", T_STR, "RUNTIME"},
    {"xla_gpu_unsafe_fallback_to_driver_on_ptxas_not_found", T_BOOL, "false"},
    {"xla_gpu_unsupported_annotate_with_emitter_loc", T_BOOL, "false"},
    {"xla_gpu_unsupported_enable_all_reduce_decomposer", T_BOOL, "false"},
    {"xla_gpu_unsupported_enable_generic_triton_emitter_for_gemms", T_BOOL, "false"},
    {"xla_gpu_unsupported_enable_ragged_all_to_all_decomposer", T_BOOL, "false"},
    {"xla_gpu_unsupported_enable_ragged_all_to_all_multi_host_decomposer", T_BOOL, "false"},
    {"xla_gpu_unsupported_enable_triton_multi_output_fusion", T_BOOL, "false"},
    {"xla_gpu_unsupported_override_fast_interconnect_slice_size", T_I64, "0"},
    {"xla_gpu_unsupported_use_all_reduce_one_shot_kernel", T_BOOL, "true"},
    {"xla_gpu_unsupported_use_ragged_all_to_all_one_shot_kernel", T_BOOL, "true"},
    {"xla_hlo_evaluator_use_fast_path", T_BOOL, "false"},
    {"xla_hlo_graph_addresses", T_BOOL, "false"}, {"xla_hlo_graph_sharding_color", T_BOOL, "false"},
    {"xla_hlo_pass_fix_detect_cycles", T_BOOL, "false"},
    {"xla_hlo_print_inline_stack_frames", T_BOOL, "false"}, {"xla_hlo_profile", T_BOOL, "false"},
    {"xla_ignore_channel_id", T_BOOL, "false"}, {"xla_keep_shardings_after_spmd", T_BOOL, "false"},
    {"xla_llvm_enable_alias_scope_metadata", T_BOOL, "true"},
    {"xla_llvm_enable_invariant_load_metadata", T_BOOL, "true"},
    {"xla_llvm_enable_noalias_metadata", T_BOOL, "true"},
    {"xla_llvm_force_inline_before_split", T_BOOL, "true"},
    {"xla_multiheap_size_constraint_per_heap", T_I64, "-1"},
    {"xla_partitioning_algorithm", T_STR, "PARTITIONING_ALGORITHM_NOOP"},
    {"xla_pjrt_allow_auto_layout_in_hlo", T_BOOL, "false"},
    {"xla_recognize_reduction_optimization_level", T_I64, "0"},
    {"xla_reduce_window_rewrite_base_length", T_I64, "16"},
    {"xla_run_hlo_passes_starting_from", T_STR, ""},
    {"xla_sdy_export_all_reduce_scatter", T_BOOL, "false"},
    {"xla_step_marker_location", T_STR, "STEP_MARK_AT_ENTRY"},
    {"xla_syntax_sugar_async_ops", T_BOOL, "false"},
    {"xla_test_add_command_buffer_mode", T_BOOL, "false"},
    {"xla_test_all_input_layouts", T_BOOL, "false"},
    {"xla_test_all_output_layouts", T_BOOL, "false"},
    {"xla_unsupported_crash_on_hlo_pass_fix_max_iterations", T_BOOL, "false"},
    {"xla_unsupported_crash_on_hlo_pass_noop_change", T_BOOL, "false"},
    {"xla_unsupported_crash_on_hlo_pass_silent_hlo_change", T_BOOL, "false"},
    {"xla_cpu_enable_concurrency_optimized_scheduler", T_BOOL, "true"},
    {"xla_cpu_opt_preset", T_STR, ""}, {"xla_gpu_collective_combine_threshold_count", T_I64, ""},
    {"xla_gpu_enable_libnvjitlink", T_BOOL, "false"},
    {"xla_gpu_experimental_autotune_backends", T_STR, ""},
    {"xla_gpu_experimental_thunk_buffer_debug_filter_by_profile_annotation_re", T_STR, ""},
    {"xla_gpu_experimental_thunk_buffer_debug_filter_by_thunk_id_ranges", T_STR, ""},
    {"xla_gpu_use_embeded_device_lib", T_BOOL, "false"},
    {"xla_gpu_use_inprocess_lld", T_BOOL, "false"},
    // clang-format on
};
#define N_FLAGS ((int)(sizeof FLAGS / sizeof FLAGS[0]))

static int flag_index(const char *name, size_t len) {
  for (int i = 0; i < N_FLAGS; i++) {
    if (strlen(FLAGS[i].name) == len && memcmp(FLAGS[i].name, name, len) == 0) return i;
  }
  return -1;
}

/* ---------------------------------------------------------------------------------------------
 * Deterministic randomness and fake log prefixes.
 * ------------------------------------------------------------------------------------------- */

typedef struct {
  uint64_t s;
} rng;

static uint64_t rng_next(rng *r) { /* splitmix64: tiny, good enough, portable */
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double rng_unit(rng *r) {
  return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

static double rng_normal(rng *r) { /* Box-Muller; u1 kept away from 0 */
  double u1 = (rng_unit(r) + 1e-12) / (1.0 + 1e-12), u2 = rng_unit(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return (h ^ 0xff) * 0x100000001b3ULL; /* separator, so ("ab","c") != ("a","bc") */
}

/* Simulated wall clock for log prefixes: fixed origin, so stderr is as repeatable as stdout. */
static double g_clock_s = 1700000000.0;

static void logline(char sev, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void logline(char sev, const char *where, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%c0000 00:00:%.6f   12345 %s] ", sev, g_clock_s, where);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
}

/* ---------------------------------------------------------------------------------------------
 * XLA_FLAGS: tokenizer and typed values, following xla/parse_flags_from_env.cc and
 * tsl/util/command_line_flags.cc, including their quirks (see docs/SIMULATOR.md).
 * ------------------------------------------------------------------------------------------- */

typedef struct {
  const char *val[sizeof FLAGS / sizeof FLAGS[0]]; /* NULL: unset; "" bare bool */
  char **tok;                                      /* owned tokens ("--name=value") */
  int ntok;
  char **unknown; /* tokens XLA did not recognise (borrowed from tok) */
  int nunknown;
  int bad_value; /* some value could not be interpreted */
  int help;
} flagset;

static void tok_push(flagset *fs, const char *s, size_t n, const char *v, size_t vn) {
  char *t = malloc(n + vn + 1);
  if (!t) abort();
  memcpy(t, s, n);
  memcpy(t + n, v, vn);
  t[n + vn] = '\0';
  fs->tok = realloc(fs->tok, sizeof *fs->tok * (size_t)(fs->ntok + 1));
  if (!fs->tok) abort();
  fs->tok[fs->ntok++] = t;
}

/* Reads a quoted value starting at the quote at *p; backslash escapes only inside "...". */
static size_t take_quoted(const char *s, size_t p, char *out, size_t *olen) {
  char q = s[p++];
  *olen = 0;
  for (; s[p] && s[p] != q; p++) {
    if (q == '"' && s[p] == '\\' && s[p + 1]) p++;
    out[(*olen)++] = s[p];
  }
  return s[p] ? p + 1 : p;
}

/* Splits like ParseArgvFromString: a token starts with '-'; the first token that does not ends
 * the parse silently (XLA's "best effort" rule). */
static void tokenize(flagset *fs, const char *s) {
  static const char ws[] = " \t\r\n";
  size_t b = strspn(s, ws), len = strlen(s);
  char *val = malloc(len + 1);
  if (!val) abort();
  while (b < len && s[b] == '-') {
    size_t e = b, vl;
    while (s[e] && isascii((unsigned char)s[e]) &&
           (s[e] == '-' || s[e] == '_' || isalnum((unsigned char)s[e])))
      e++;
    if (s[e] == '=' && (s[e + 1] == '"' || s[e + 1] == '\'')) {
      size_t end = take_quoted(s, e + 1, val, &vl);
      tok_push(fs, s + b, e + 1 - b, val, vl);
      e = end;
    } else {
      e += strcspn(s + e, ws);
      tok_push(fs, s + b, e - b, "", 0);
    }
    b = e + strspn(s + e, ws);
  }
  free(val);
}

static int parse_i64(const char *v, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  while (isspace((unsigned char)*v)) v++; /* sscanf("%d") skips leading blanks */
  long long x = strtoll(v, &end, 10);
  if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi) return -1;
  *out = x;
  return 0;
}

static int list_ok(const char *v, const char *const *names, int ci) {
  char buf[512];
  if (strlen(v) >= sizeof buf) return 0;
  strcpy(buf, v);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (*t == '+' || *t == '-') t++;
    int found = 0;
    for (int i = 0; names[i]; i++) found |= ci ? !strcasecmp(t, names[i]) : !strcmp(t, names[i]);
    if (!found) return 0;
  }
  return 1;
}

static const char *const CMDBUF_TYPES[] = {
    "FUSION",      "CUBLAS",      "CUBLASLT", "CUSTOM_CALL",          "CUDNN",
    "COLLECTIVES", "CONDITIONAL", "WHILE",    "DYNAMIC_SLICE_FUSION", NULL};
/* DebugOptions::CollectiveOpType of current XLA (xla/xla.proto), RAGGEDALLTOALL and
 * ALLCOLLECTIVES included. */
static const char *const COLL_TYPES[] = {
    "allreduce",           "allgather",      "reducescatter",
    "collectivebroadcast", "alltoall",       "collectivepermute",
    "raggedalltoall",      "allcollectives", NULL};

/* xla_gpu_disable_async_collectives' setter (openxla/xla, xla/debug_options_flags.cc,
 * setter_for_xla_gpu_disable_async_collectives): absl::StrSplit(input, ',') keeps empty
 * pieces, and every piece must parse as a CollectiveOpType (case-insensitive), so '' and
 * "allreduce,," are refused. jaxlib 0.11.2 on an H100 refused '' (docs/GPU.md). */
static int colls_ok(const char *v) {
  for (;;) {
    size_t n = strcspn(v, ",");
    char piece[64];
    if (n == 0 || n >= sizeof piece) return 0;
    memcpy(piece, v, n);
    piece[n] = '\0';
    int found = 0;
    for (int i = 0; COLL_TYPES[i]; i++) found |= !strcasecmp(piece, COLL_TYPES[i]);
    if (!found) return 0;
    if (v[n] == '\0') return 1;
    v += n + 1;
  }
}

/* Whether VALUE is acceptable for a flag of type T (VALUE NULL: the token had no '='). */
static int value_ok(ftype t, const char *v) {
  int64_t x;
  char *end;
  switch (t) {
    case T_BOOL:
      return v == NULL || !strcasecmp(v, "true") || !strcasecmp(v, "false");
    case T_I32:
      return parse_i64(v, INT32_MIN, INT32_MAX, &x) == 0;
    case T_I64:
      return parse_i64(v, INT64_MIN, INT64_MAX, &x) == 0;
    case T_F32:
      return (strtof(v, &end), end != v && *end == '\0');
    case T_STR:
      return 1;
    case T_CMDBUF:
      return list_ok(v, CMDBUF_TYPES, 0);
    case T_COLLS:
      return colls_ok(v);
  }
  return 0;
}

/* The first comma-separated piece of V (a sign prefix dropped) that is not one of NAMES, as
 * a static copy ("" when every piece is known). */
static const char *first_bad_piece(const char *v, const char *const *names) {
  static char piece[128];
  for (;;) {
    size_t n = strcspn(v, ",");
    const char *p = (*v == '+' || *v == '-') ? v + 1 : v;
    size_t m = n - (size_t)(p - v);
    int found = 0;
    for (int i = 0; names[i] && !found; i++)
      found = strlen(names[i]) == m && !strncmp(p, names[i], m);
    if (!found) {
      snprintf(piece, sizeof piece, "%.*s", (int)m, p);
      return piece;
    }
    if (v[n] == '\0') return "";
    v += n + 1;
  }
}

/* One token through the flag list, as tsl::Flags::Parse does: a non-bool flag needs '='. */
static void apply_token(flagset *fs, char *tok) {
  if (!strcmp(tok, "--help")) fs->help = 1;
  if (strncmp(tok, "--", 2) != 0) goto unknown;
  const char *name = tok + 2, *eq = strchr(name, '=');
  int i = flag_index(name, eq ? (size_t)(eq - name) : strlen(name));
  if (i < 0 || (!eq && FLAGS[i].type != T_BOOL)) goto unknown;
  if (!value_ok(FLAGS[i].type, eq ? eq + 1 : NULL)) {
    /* tsl's typed parsers log the value (jaxlib 0.12.0.1 from command_line_flags.cc:93 for a
     * bool, :63 for an int, :112 for a float); the command-buffer setter names the bad piece
     * (debug_options_flags.cc:195); the async-collectives setter prints nothing. Those are
     * the real bytes of tests/data/real/ (tests/e2e/test_real_xla.sh). */
    static const char *const where[] = {"command_line_flags.cc:93", "command_line_flags.cc:63",
                                        "command_line_flags.cc:63", "command_line_flags.cc:112"};
    if (FLAGS[i].type < T_STR)
      logline('E', where[FLAGS[i].type], "Couldn't interpret value %s for flag %s.", eq + 1,
              FLAGS[i].name);
    else if (FLAGS[i].type == T_CMDBUF)
      logline('E', "debug_options_flags.cc:195", "Illegal value for --%s '%s'", FLAGS[i].name,
              first_bad_piece(eq + 1, CMDBUF_TYPES));
    fs->bad_value = 1; /* the flag keeps its default */
    return;
  }
  fs->val[i] = eq ? eq + 1 : "";
  return;
unknown:
  fs->unknown = realloc(fs->unknown, sizeof *fs->unknown * (size_t)(fs->nunknown + 1));
  if (!fs->unknown) abort();
  fs->unknown[fs->nunknown++] = tok;
}

/* XLA_FLAGS may also name a file holding the flags (when it does not start with '-'). */
static char *read_flag_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = calloc(1, 65536);
  if (buf) fread(buf, 1, 65535, f);
  fclose(f);
  return buf;
}

static void fatal_abort(void) {
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core); /* a SIGABRT like XLA's, without core files in CI */
  if (getenv("FLAGTUNE_SIM_QFATAL_EXIT")) _exit(1); /* newer absl: QFATAL exits quietly */
  abort();
}

static void print_usage_table(FILE *f) {
  static const char *tn[] = {"bool", "int32", "int64", "float", "string", "string", "string"};
  for (int i = 0; i < N_FLAGS; i++) {
    char b[160];
    snprintf(b, sizeof b, FLAGS[i].type >= T_STR ? "--%s=\"%s\"" : "--%s=%s", FLAGS[i].name,
             FLAGS[i].def);
    fprintf(f, "\t%-33s\t%s\t\n", b, tn[FLAGS[i].type]);
  }
}

/* jax <= 0.5.0 (XLA before commit b727c5cd) joined its whole argv vector after tsl's
 * Flags::Parse had compacted it: the unknown tokens, the null that ends them, then whatever
 * the vector still held from before (known flags included), then the final null. So the
 * word was always "flags", the list ended with a space and could name known flags. */
static void print_old_unknown_list(const flagset *fs) {
  /* argv[1..ntok+1] after the compaction, nulls printed as "" and joined with " ". */
  for (int i = 1; i <= fs->ntok + 1; i++) {
    const char *e = "";
    if (i <= fs->nunknown)
      e = fs->unknown[i - 1];
    else if (i > fs->nunknown + 1 && i <= fs->ntok)
      e = fs->tok[i - 1];
    fprintf(stderr, "%s%s", i > 1 ? " " : "", e);
  }
}

/* Returns 0, or -1 when XLA would have died (and then the message was printed if DIE).
 * Today's XLA (xla/parse_flags_from_env.cc): ParseFlagsFromEnvAndIgnoreUnknown's QCHECK dies
 * on a value that did not parse ("Flag parsing failed." and tsl's usage table), then
 * DieIfEnvHasUnknownFlagsLeft dies on unknown flags, "flag" or "flags" by their count.
 * FLAGTUNE_SIM_OLD_XLA: a malformed value is logged and ignored (and hides unknown flags),
 * and the unknown-flag list is the older over-inclusive one. */
static int flags_load(flagset *fs, int die) {
  const char *env = getenv("XLA_FLAGS"), *raw = env;
  int old = getenv("FLAGTUNE_SIM_OLD_XLA") != NULL;
  char *file = NULL;
  if (!env || !*env) return 0;
  if (env[strspn(env, " \t\r\n")] != '-') {
    if (!(file = read_flag_file(env))) {
      if (!die) return -1;
      logline('F', "parse_flags_from_env.cc:144",
              "Could not open file \"%s\" to read flags for environment variable \"XLA_FLAGS\". "
              "(We assumed \"%s\" was a file name because it did not start with a \"--\".)",
              env, env);
      fatal_abort();
    }
    env = file;
  }
  tokenize(fs, env);
  free(file);
  for (int i = 0; i < fs->ntok; i++) apply_token(fs, fs->tok[i]);
  if (fs->help) return 0;
  if (fs->bad_value && !old) {
    if (!die) return -1;
    logline('F', "parse_flags_from_env.cc:220",
            "Check failed: tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) "
            "Flag parsing failed.");
    fprintf(stderr, "usage: %s\nFlags:\n", raw);
    print_usage_table(stderr);
    fflush(stderr);
    fatal_abort();
  }
  /* Older XLA returned before its unknown-flag check when a value failed to parse. */
  if (fs->nunknown == 0 || fs->bad_value) return 0;
  if (!die) return -1;
  fprintf(stderr,
          "F0000 00:00:%.6f   12345 parse_flags_from_env.cc:234] Unknown flag%s in XLA_FLAGS: ",
          g_clock_s, (old || fs->nunknown > 1) ? "s" : "");
  if (old) {
    print_old_unknown_list(fs);
    fprintf(stderr, "\nPerhaps you meant to specify these on the TF_XLA_FLAGS envvar?");
  } else {
    for (int i = 0; i < fs->nunknown; i++) fprintf(stderr, "%s%s", i ? " " : "", fs->unknown[i]);
  }
  fputc('\n', stderr);
  fflush(stderr);
  fatal_abort();
  return -1;
}

static void flags_free(flagset *fs) {
  for (int i = 0; i < fs->ntok; i++) free(fs->tok[i]);
  free(fs->tok);
  free(fs->unknown);
}

static const char *fl_raw(const flagset *fs, const char *name) {
  int i = flag_index(name, strlen(name));
  if (i < 0) { /* a typo in this file, not user input */
    fprintf(stderr, "flagtune-sim: internal: no flag %s\n", name);
    abort();
  }
  return fs->val[i] ? fs->val[i] : FLAGS[i].def;
}

static int fl_bool(const flagset *fs, const char *name) {
  const char *v = fl_raw(fs, name);
  return *v == '\0' || !strcasecmp(v, "true");
}

static double fl_num(const flagset *fs, const char *name) {
  return atof(fl_raw(fs, name));
}

/* Whether a comma list flag VALUE (with XLA's +X/-X edit syntax over DEF) holds ITEM. */
static int list_has(const char *value, const char *def, const char *item) {
  char buf[512];
  int edit = (*value == '+' || *value == '-');
  snprintf(buf, sizeof buf, "%s", edit ? def : value);
  int has = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    has |= !strcasecmp(t, item);
  if (!edit) return has;
  snprintf(buf, sizeof buf, "%s", value);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(t + 1, item)) has = (*t == '+');
  }
  return has;
}

static void print_help(void) {
  printf("usage: <argv[0]>\nFlags:\n");
  print_usage_table(stdout);
}

/* ---------------------------------------------------------------------------------------------
 * Environment variables a JAX job reads.
 * ------------------------------------------------------------------------------------------- */

typedef struct {
  double mem_frac;   /* XLA_CLIENT_MEM_FRACTION / XLA_PYTHON_CLIENT_MEM_FRACTION, default .75 */
  int prealloc;      /* XLA_PYTHON_CLIENT_PREALLOCATE, default true */
  double proto_bw;   /* NCCL_PROTO bandwidth factor */
  int nvls;          /* NCCL_NVLS_ENABLE=1 */
  int cdmc1;         /* CUDA_DEVICE_MAX_CONNECTIONS=1 */
  int pgle;          /* JAX_ENABLE_PGLE */
  int pgle_runs;     /* JAX_PGLE_PROFILING_RUNS, default 3 */
  const char *trial; /* FLAGTUNE_TRIAL */
} envcfg;

static int env_truthy(const char *v) { /* JAX's bool env parsing */
  static const char *yes[] = {"1", "y", "yes", "t", "true", "on"};
  for (size_t i = 0; v && i < sizeof yes / sizeof yes[0]; i++)
    if (!strcasecmp(v, yes[i])) return 1;
  return 0;
}

/* NCCL_PROTO is a protocol set ("LL,LL128,SIMPLE", or "^LL" to exclude). Large FSDP messages
 * want SIMPLE; LL alone is latency-optimised and halves bandwidth. */
static double proto_factor(const char *v) {
  if (!v || !*v) return 1.0;
  int neg = (*v == '^'), ll = 0, ll128 = 0, simple = 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", v + neg);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(t, "LL")) ll = 1;
    if (!strcasecmp(t, "LL128")) ll128 = 1;
    if (!strcasecmp(t, "SIMPLE")) simple = 1;
  }
  if (neg) ll = !ll, ll128 = !ll128, simple = !simple;
  if (simple) return (ll || ll128) ? (ll128 ? 1.0 : 1.01) : 1.015;
  if (ll128) return 0.97;
  return ll ? 0.55 : 1.0; /* nothing valid: NCCL falls back to its defaults */
}

static void env_load(envcfg *e) {
  const char *f = getenv("XLA_CLIENT_MEM_FRACTION");
  if (!f || !*f) f = getenv("XLA_PYTHON_CLIENT_MEM_FRACTION");
  e->mem_frac = (f && *f) ? atof(f) : 0.75;
  const char *p = getenv("XLA_PYTHON_CLIENT_PREALLOCATE");
  e->prealloc = !(p && (!strcasecmp(p, "false") || !strcmp(p, "0")));
  e->proto_bw = proto_factor(getenv("NCCL_PROTO"));
  const char *n = getenv("NCCL_NVLS_ENABLE");
  e->nvls = n && atoi(n) == 1;
  const char *c = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  e->cdmc1 = c && atoi(c) == 1;
  e->pgle = env_truthy(getenv("JAX_ENABLE_PGLE"));
  const char *r = getenv("JAX_PGLE_PROFILING_RUNS");
  e->pgle_runs = (r && *r) ? atoi(r) : 3;
  if (e->pgle_runs < 0) e->pgle_runs = 0;
  e->trial = getenv("FLAGTUNE_TRIAL");
}

/* Stable hash of the configuration: sorted XLA tokens plus the env values read above, so that
 * flag order does not change the noise but any change of value does. */
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t config_hash(const flagset *fs) {
  static const char *vars[] = {"XLA_CLIENT_MEM_FRACTION",
                               "XLA_PYTHON_CLIENT_MEM_FRACTION",
                               "XLA_PYTHON_CLIENT_PREALLOCATE",
                               "NCCL_PROTO",
                               "NCCL_NVLS_ENABLE",
                               "CUDA_DEVICE_MAX_CONNECTIONS",
                               "JAX_ENABLE_PGLE",
                               "JAX_PGLE_PROFILING_RUNS"};
  char **t = malloc(sizeof *t * (size_t)(fs->ntok + 1));
  if (!t) abort();
  if (fs->ntok > 0) memcpy(t, fs->tok, sizeof *t * (size_t)fs->ntok);
  qsort(t, (size_t)fs->ntok, sizeof *t, cmp_str);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < fs->ntok; i++) h = fnv1a(h, t[i]);
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    h = fnv1a(fnv1a(h, vars[i]), getenv(vars[i]));
  /* Read only by generated landscapes: hashed only when set, so the named ones keep their noise. */
  static const char *gen_vars[] = {"NCCL_BUFFSIZE"};
  for (size_t i = 0; i < sizeof gen_vars / sizeof gen_vars[0]; i++)
    if (getenv(gen_vars[i])) h = fnv1a(fnv1a(h, gen_vars[i]), getenv(gen_vars[i]));
  free(t);
  return h;
}

/* ---------------------------------------------------------------------------------------------
 * Landscapes: analytical step-time and memory models. Every constant is in docs/SIMULATOR.md.
 * ------------------------------------------------------------------------------------------- */

typedef enum { OOM_NONE, OOM_LOAD, OOM_STEP, OOM_OUTSIDE } oom_kind;

typedef struct {
  double ms;           /* noise-free steady-state step time */
  double ms_profile;   /* step time while auto-PGLE profiles */
  double need_gib;     /* XLA's BFC pool: what the program needs */
  double cap_gib;      /* ... and what the memory fraction gives it */
  double out_need_gib; /* outside the pool: CUDA context, NCCL, NVLS, user buffers */
  double out_avail_gib;
  double params_gib;    /* for the BufferAssignment stats */
  double compile_scale; /* compile time multiplier */
  int autotune_oom;     /* autotuning scratch did not fit: harmless warning, slower kernels */
  int devices;
  int collectives; /* has NCCL (outside-pool OOM reads as an NCCL failure) */
  const char *what;
  oom_kind oom;
  double noise_proc, noise_step; /* per-process and per-step noise (0: 1 % and 1.5 %) */
} model;

#define HBM_GIB 80.0 /* H100 80GB */

/* Bandwidth efficiency of a collective whose combined message is about T bytes when one
 * natural unit (a layer) is S bytes: rises on a log scale toward S and keeps rising slowly. */
static double combine_eff(double t, double s) {
  return 1.0 - 0.5 / (1.0 + pow(4.0 * t / s, 0.8));
}

/* Combining beyond two units makes the first collective of a step large and creates false
 * dependencies, so less of it can hide behind compute (the JAX-Toolbox PGLE guide, "About combine
 * thresholds"). */
static double overlap_loss(double t, double s) {
  return t > 2.0 * s ? 1.0 / (1.0 + 0.25 * log2(t / (2.0 * s))) : 1.0;
}

static double clampd(double x, double lo, double hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

/* Memory verdicts shared by all landscapes. Near the limit XLA rematerialises (slower); over it,
 * BufferAssignment fails at load, or, when only slightly over, at the first step. */
static void mem_verdict(model *m) {
  double u = m->need_gib / m->cap_gib;
  if (u > 1.03)
    m->oom = OOM_LOAD;
  else if (u > 1.0)
    m->oom = OOM_STEP;
  else if (m->out_need_gib > m->out_avail_gib)
    m->oom = OOM_OUTSIDE;
  if (u > 0.94 && u <= 1.0) {
    m->ms *= 1.0 + (u - 0.94);
    m->ms_profile *= 1.0 + (u - 0.94);
  }
}

static void mem_pool(model *m, const envcfg *e) {
  if (!e->prealloc) m->need_gib *= 1.04; /* on-demand growth fragments the pool */
  m->cap_gib = e->mem_frac * HBM_GIB;
  m->out_avail_gib = e->prealloc ? HBM_GIB * (1.0 - e->mem_frac) : HBM_GIB - m->need_gib;
}

/* fsdp8: 8 x H100 (NVLink4), FSDP of a 7B-like model: 32 layers of 436e6 bf16 bytes. */
#define FS_LAYER_B 436e6
#define FS_MODEL_B (32 * FS_LAYER_B)
#define FS_TENSOR_B 62e6 /* mean tensor in a layer: the message size when nothing combines */
#define FS_AR_B 1.5e9    /* replicated (non-FSDP) parameters' gradients, all-reduced */
#define FS_BW 360e9      /* NVLink4 bus bandwidth, bytes/s */
#define FS_COMPUTE_MS 370.0
#define FS_OTHER_MS 8.0

/* ---- manual PGLE profiles: how XLA reads the measured run's profile ----
 * xla/service/gpu/gpu_hlo_schedule.cc ReadProfileFromSources: the path's extension picks
 * text (".pbtxt") or binary (".pb") parsing, any other name is ignored without a word;
 * FilterWithFingerprint keeps only entries keyed by this module's fingerprint (or keyed by
 * none, as nsys's converter writes them). The simulator's fingerprint is which collectives
 * are synchronous: the one thing the two routes' profile runs change in the program. */
#define PGLE_PATH_FLAG "xla_gpu_pgle_profile_file_or_directory_path"

typedef enum { PROF_NONE, PROF_USED, PROF_EMPTY, PROF_MISSING, PROF_BAD } prof_state;

static void pgle_fingerprint(const flagset *fs, char *out, size_t n) {
  uint64_t h = fnv1a(0xcbf29ce484222325ULL, fl_raw(fs, "xla_gpu_disable_async_collectives"));
  snprintf(out, n, "%016llx::", (unsigned long long)h);
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

/* 1 when the entry NAME (LEN bytes) is kept: keyed by FP ("fingerprint::name"), or by none. */
static int entry_kept(const char *name, size_t len, const char *fp) {
  for (size_t i = 0; i + 1 < len; i++)
    if (name[i] == ':' && name[i + 1] == ':')
      return i + 2 == strlen(fp) && memcmp(name, fp, i + 2) == 0;
  return 1;
}

/* What the measured run makes of its profile; *matched / *total count the entries kept. */
static prof_state pgle_profile_state(const flagset *fs, int *matched, int *total) {
  const char *path = fl_raw(fs, PGLE_PATH_FLAG);
  int text = ends_with(path, ".pbtxt"), bin = ends_with(path, ".pb");
  *matched = *total = 0;
  if (!*path || (!text && !bin)) return PROF_NONE;
  FILE *f = fopen(path, "rb");
  if (!f) return PROF_MISSING;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  char fp[40];
  pgle_fingerprint(fs, fp, sizeof fp);
  if (text) { /* costs { name: "..." cost_us: ... } per entry */
    if (n > 0 && strncmp(buf, "costs", 5) != 0) return PROF_BAD;
    for (const char *q = buf; (q = strstr(q, "name: \"")) != NULL; q++) {
      const char *name = q + 7, *end = strchr(name, '"');
      if (!end) return PROF_BAD;
      (*total)++;
      *matched += entry_kept(name, (size_t)(end - name), fp);
    }
  } else { /* field 1 (costs), length-delimited, holding field 1 (name) first */
    for (size_t i = 0; i < n;) {
      if (i + 4 > n || buf[i] != 0x0a || buf[i + 2] != 0x0a) return PROF_BAD;
      size_t len = (unsigned char)buf[i + 1], nlen = (unsigned char)buf[i + 3];
      if (i + 2 + len > n || nlen + 2 > len) return PROF_BAD;
      (*total)++;
      *matched += entry_kept(buf + i + 4, nlen, fp);
      i += 2 + len;
    }
  }
  return *matched > 0 ? PROF_USED : PROF_EMPTY;
}

typedef struct {
  int lhs, pag, prs, par, dbuf, prio, pgle, cdmc1, ub, nvls;
  double tag, trs, tar;
  double headroom; /* GiB between the LHS memory limit and the program's need */
} fsdp_knobs;

static void fsdp_knobs_read(const flagset *fs, const envcfg *e, int pgle, fsdp_knobs *k) {
  int pc = fl_bool(fs, "xla_gpu_enable_pipelined_collectives"); /* overrides the three */
  k->lhs = fl_bool(fs, "xla_gpu_enable_latency_hiding_scheduler");
  k->pag = pc || fl_bool(fs, "xla_gpu_enable_pipelined_all_gather");
  k->prs = pc || fl_bool(fs, "xla_gpu_enable_pipelined_reduce_scatter");
  k->par = pc || fl_bool(fs, "xla_gpu_enable_pipelined_all_reduce");
  k->dbuf = fl_bool(fs, "xla_gpu_enable_while_loop_double_buffering");
  k->prio = fl_bool(fs, "xla_gpu_enable_highest_priority_async_stream");
  k->tag = fl_num(fs, "xla_gpu_all_gather_combine_threshold_bytes");
  k->trs = fl_num(fs, "xla_gpu_reduce_scatter_combine_threshold_bytes");
  k->tar = fl_num(fs, "xla_gpu_all_reduce_combine_threshold_bytes");
  k->ub = fl_bool(fs, "xla_gpu_enable_nccl_user_buffers");
  k->nvls = e->nvls;
  k->cdmc1 = e->cdmc1;
  int matched, total;
  k->pgle = pgle || pgle_profile_state(fs, &matched, &total) == PROF_USED;
}

/* Fraction of a collective family hidden behind compute. The LHS keeps its schedule under
 * slop_factor% of the pool, so with little headroom it starts collectives later. */
static double fsdp_overlap(const fsdp_knobs *k, double base, int pipelined, double t, double s,
                           int sync) {
  if (!k->lhs || sync) return sync ? 0.0 : 0.03;
  double ov = base + (pipelined ? 0.30 : 0.0) + (k->dbuf ? 0.04 : 0.0) + (k->pgle ? 0.02 : 0.0);
  ov *= (k->cdmc1 ? 1.0 : 0.90) * (k->prio ? 1.0 : 0.85) * overlap_loss(t, s);
  ov *= 1.0 - 0.3 * exp(-fmax(k->headroom, 0.0) / 4.0);
  return ov > 0.97 ? 0.97 : ov;
}

static void fsdp_time(const flagset *fs, const envcfg *e, const fsdp_knobs *k, model *m) {
  const char *dis = fl_raw(fs, "xla_gpu_disable_async_collectives");
  double bw = FS_BW * e->proto_bw, zc = (k->ub && k->nvls) ? 1.08 : 1.0; /* zero-copy */
  double eag = combine_eff(fmax(k->tag, FS_TENSOR_B), FS_LAYER_B);
  double ers = combine_eff(fmax(k->trs, FS_TENSOR_B), FS_LAYER_B);
  double ear = combine_eff(fmax(k->tar, 8e6), FS_AR_B / 4.0);
  if (fl_bool(fs, "xla_gpu_enable_all_gather_combine_by_dim") && k->tag > 64e6) eag *= 0.96;
  if (fl_bool(fs, "xla_gpu_enable_reduce_scatter_combine_by_dim") && k->trs > 64e6) ers *= 0.96;
  /* Bus bytes per GPU per step: AG twice (forward, backward), RS once, AR = RS + AG. */
  double c_ag = 2 * FS_MODEL_B * 7 / 8 / (bw * eag * zc) * 1e3;
  double c_rs = FS_MODEL_B * 7 / 8 / (bw * ers * zc) * 1e3;
  double c_ar = 2 * FS_AR_B * 7 / 8 / (bw * ear * zc * (k->nvls ? 1.5 : 1.0)) * 1e3;
  double h =
      c_ag * fsdp_overlap(k, 0.62, k->pag, k->tag, FS_LAYER_B, list_has(dis, "", "allgather")) +
      c_rs * fsdp_overlap(k, 0.58, k->prs, k->trs, FS_LAYER_B, list_has(dis, "", "reducescatter")) +
      c_ar * fsdp_overlap(k, 0.50, k->par, k->tar, FS_AR_B, list_has(dis, "", "allreduce"));
  double compute = FS_COMPUTE_MS * ((k->cdmc1 && !k->lhs) ? 1.005 : 1.0);
  if (h > 0.8 * compute) h = 0.8 * compute;
  double contention = h * ((k->ub && k->nvls) ? 0.08 : 0.12); /* NCCL kernels take SMs */
  m->ms = compute + contention + (c_ag + c_rs + c_ar - h) + FS_OTHER_MS;
}

/* Pool: params+grads+Adam shards 14 GiB, activations 33, temporaries 2, plus every in-flight
 * combined buffer (one more per LHS, pipelining and double-buffering stage). Outside: CUDA
 * context and NCCL 1.3 GiB, NVLS 2.5 GiB, and the user-buffer pool registering the buffers. */
static void fsdp_memory(const flagset *fs, const envcfg *e, fsdp_knobs *k, model *m) {
  double ag = clampd(k->tag, FS_TENSOR_B, FS_MODEL_B) / GIB;
  double rs = clampd(k->trs, FS_TENSOR_B, FS_MODEL_B) / GIB;
  double ar = clampd(k->tar, 8e6, FS_AR_B) / GIB;
  double slop = fl_num(fs, "xla_gpu_memory_limit_slop_factor") / 100.0;
  m->params_gib = 14.0;
  m->need_gib = 49.0 + ag * (1 + k->lhs + k->pag + k->dbuf) + rs * (1 + k->lhs + k->prs) +
                ar * (1 + k->lhs + k->par);
  /* A slop factor over 95% lets the LHS plan past what the allocator can really give. */
  if (k->lhs && slop > 0.95) m->need_gib += (slop - 0.95) * 0.5 * e->mem_frac * HBM_GIB;
  m->out_need_gib = 1.3 + (k->nvls ? 2.5 : 0.0) + (k->ub ? 2.0 * (ag + rs + ar) : 0.0) +
                    (fl_bool(fs, "xla_gpu_enable_nccl_per_stream_comms") ? 1.0 : 0.0) +
                    (fl_bool(fs, "xla_gpu_enable_nccl_comm_splitting") ? 0.0 : 0.4);
  mem_pool(m, e);
  k->headroom = slop * m->cap_gib - m->need_gib;
}

static void land_fsdp8(const flagset *fs, const envcfg *e, model *m) {
  fsdp_knobs k;
  fsdp_knobs_read(fs, e, 0, &k);
  fsdp_memory(fs, e, &k, m);
  fsdp_time(fs, e, &k, m);
  m->ms_profile = m->ms * 1.08;
  if (e->pgle) {
    k.pgle = 1;
    fsdp_time(fs, e, &k, m);
  }
  m->compile_scale = 1.0 + 0.15 * k.lhs + 0.05 * (k.pag + k.prs + k.par);
  m->devices = 8;
  m->collectives = 1;
  m->what = "8-GPU FSDP, 7B-like model";
  mem_verdict(m);
}

/* single: one H100, a 1.3B-parameter transformer; launch-bound enough that CUDA graphs matter. */
static double cmdbuf_coverage(const char *v) {
  static const char *t[] = {"FUSION", "CUBLAS",      "CUBLASLT", "CUSTOM_CALL",
                            "CUDNN",  "CONDITIONAL", "WHILE",    "DYNAMIC_SLICE_FUSION"};
  static const double w[] = {0.50, 0.08, 0.08, 0.04, 0.06, 0.04, 0.14, 0.02};
  double c = 0;
  for (int i = 0; i < 8; i++) c += list_has(v, DEFAULT_CMDBUF, t[i]) ? w[i] : 0.0;
  return c;
}

static double single_time(const flagset *fs, int level, double coverage) {
  static const double autotune[] = {1.30, 1.02, 1.005, 1.002, 1.0};
  int tg = fl_bool(fs, "xla_gpu_enable_triton_gemm"), any = fl_bool(fs, "xla_gpu_triton_gemm_any");
  double gemm = !tg ? 0.975 : !any ? 1.0 : level >= 1 ? 0.955 : 1.12;
  double attn = fl_bool(fs, "xla_gpu_enable_cudnn_fmha") ? 0.93 : 1.0;
  return 205.0 * autotune[level] * gemm * attn + 24.0 * (1.0 - coverage) + 4.0;
}

static void land_single(const flagset *fs, const envcfg *e, model *m) {
  int level = (int)clampd(fl_num(fs, "xla_gpu_autotune_level"), 0, 4);
  const char *cb = fl_raw(fs, "xla_gpu_enable_command_buffer");
  int fmha = fl_bool(fs, "xla_gpu_enable_cudnn_fmha");
  m->params_gib = 6.0;
  m->need_gib = 45.5 + (fmha ? 0.0 : 4.5) + (list_has(cb, DEFAULT_CMDBUF, "WHILE") ? 0.5 : 0.0);
  m->out_need_gib = 1.0;
  mem_pool(m, e);
  /* Autotuning allocates scratch outside the pool; when it cannot, XLA logs the failure and
   * falls back to default kernels (seed FIELD-NOTES, jax-ml/jax#788). */
  m->autotune_oom = level > 0 && m->out_avail_gib < 2.5;
  if (m->autotune_oom) level = 1;
  m->ms = single_time(fs, level, cmdbuf_coverage(cb));
  m->ms_profile = single_time(fs, level, 0.0) * 1.08; /* auto-PGLE profiles without graphs */
  if (e->pgle) m->ms *= 0.995;
  m->compile_scale = 0.5 + 0.125 * level;
  m->devices = 1;
  m->what = "1-GPU 1.3B transformer";
  mem_verdict(m);
}

/* sparse: 4 x H100 PCIe data parallel, 1.2B parameters. Only the latency hiding scheduler, the
 * all-reduce combine threshold (which interacts with it) and cuDNN fused attention matter. */
static void land_sparse(const flagset *fs, const envcfg *e, model *m) {
  int lhs = fl_bool(fs, "xla_gpu_enable_latency_hiding_scheduler");
  double t = fl_num(fs, "xla_gpu_all_reduce_combine_threshold_bytes");
  double compute = 240.0 * (fl_bool(fs, "xla_gpu_enable_cudnn_fmha") ? 0.94 : 1.0);
  double comm = 2 * 2.4e9 * 3 / 4 / (48e9 * combine_eff(fmax(t, 4e6), 300e6)) * 1e3;
  double ov = lhs ? 0.9 / (1.0 + pow(t / GIB, 1.2)) : 0.0; /* big buckets start late */
  m->ms = compute + comm * (1.0 - ov) + 0.10 * comm * ov + 6.0;
  m->ms_profile = m->ms * 1.08;
  m->params_gib = 9.0;
  m->need_gib = 28.0;
  m->out_need_gib = 1.3;
  mem_pool(m, e);
  m->compile_scale = 1.0;
  m->devices = 4;
  m->collectives = 1;
  m->what = "4-GPU data parallel, 1.2B model (3 of ~20 flags matter)";
  mem_verdict(m);
}

/* gen:SEED: a landscape drawn from SEED (tests/sim/genland.c), created once by main. */
static genland *g_gen;

static const char *gen_get(void *ctx, const char *name, int is_env) {
  if (!is_env) return fl_raw(ctx, name);
  const char *v = NULL;
  if (!strcmp(name, "XLA_PYTHON_CLIENT_MEM_FRACTION")) v = getenv("XLA_CLIENT_MEM_FRACTION");
  if (!v || !*v) v = getenv(name);
  return v && *v ? v : NULL;
}

static void land_gen(const flagset *fs, model *m) {
  static char what[96];
  genland_val v;
  genland_eval(g_gen, gen_get, (void *)fs, &v);
  m->ms = v.ms;
  m->ms_profile = v.ms * 1.08;
  m->need_gib = v.need_gib;
  m->cap_gib = v.cap_gib;
  m->out_need_gib = v.out_need_gib;
  m->out_avail_gib = v.out_avail_gib;
  m->params_gib = 0.3 * v.need_gib;
  m->compile_scale = 1.0 + 0.15 * v.lhs;
  m->devices = 8;
  m->collectives = 1;
  snprintf(what, sizeof what, "generated, %d parameters", genland_nparams(g_gen));
  m->what = what;
  if (v.oom == 1) m->oom = v.need_gib > 1.03 * v.cap_gib ? OOM_LOAD : OOM_STEP;
  if (v.oom == 2) m->oom = OOM_OUTSIDE;
  genland_noise(g_gen, &m->noise_proc, &m->noise_step);
}

static int landscape_eval(const char *name, const flagset *fs, const envcfg *e, model *m) {
  memset(m, 0, sizeof *m);
  if (g_gen && !strncmp(name, "gen:", 4))
    land_gen(fs, m);
  else if (!strcmp(name, "fsdp8"))
    land_fsdp8(fs, e, m);
  else if (!strcmp(name, "single"))
    land_single(fs, e, m);
  else if (!strcmp(name, "sparse"))
    land_sparse(fs, e, m);
  else
    return -1;
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The job: logs, compile, steps, failures.
 * ------------------------------------------------------------------------------------------- */

typedef struct {
  int steps;
  const char *landscape;
  int text;
  uint64_t seed;
  double time_scale;
  double compile_ms; /* < 0: the landscape's own (gen:SEED), else 30000 */
  double start_ms;   /* < 0: the landscape's own (gen:SEED), else 0 */
  double noise;      /* percent of the nominal noise */
  int true_value;    /* 1: --true-value; 2: --true-values (a configuration per stdin line) */
  double fail_rate;
  int corrupt_ll128; /* --corrupt-ll128: an explicit LL128 in NCCL_PROTO computes wrong sums */
  int gen_params;    /* --gen-params N: a generated landscape's size (0: drawn from its seed) */
  int print_space;   /* --print-space: 1 experiment-file fragment, 2 JSON */
  int print_optimum;
} options;

/* Advances the simulated clock by MS and really sleeps MS * time_scale. */
static void sim_sleep(const options *o, double ms) {
  g_clock_s += ms / 1e3;
  double real = ms * o->time_scale;
  if (real <= 0) return;
  struct timespec ts = {(time_t)(real / 1e3), (long)(fmod(real, 1e3) * 1e6)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* JAX's default (filtered) traceback: the chained note first, then the user's frames, so the
 * error itself is the last thing printed. */
static void py_traceback_head(void) {
  fprintf(stderr,
          "jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames "
          "from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to "
          "include these.\n\nThe above exception was the direct cause of the following "
          "exception:\n\n"
          "Traceback (most recent call last):\n"
          "  File \"/workspace/train.py\", line 214, in <module>\n"
          "    main()\n"
          "  File \"/workspace/train.py\", line 201, in main\n"
          "    state, metrics = train_step(state, batch)\n"
          "                     ^^^^^^^^^^^^^^^^^^^^^^^^\n");
}

static void gib_str(char *b, size_t n, double gib) {
  snprintf(b, n, "%.2fGiB", gib);
}

/* BufferAssignment OOM as JAX prints it (jax-ml/jax#13428, #22755), then exit 1. */
static void die_oom(const model *m) {
  double temp = m->need_gib - m->params_gib;
  long long bytes = (long long)(temp * GIB) / 256 * 256;
  char p[32], t[32], tot[32];
  gib_str(p, sizeof p, m->params_gib);
  gib_str(t, sizeof t, temp);
  gib_str(tot, sizeof tot, m->need_gib);
  py_traceback_head();
  fprintf(stderr,
          "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
          "to allocate %lld bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n"
          "             parameter allocation: %10s\n"
          "              constant allocation:         0B\n"
          "        maybe_live_out allocation: %10s\n"
          "     preallocated temp allocation: %10s\n"
          "                 total allocation: %10s\n"
          "              total fragmentation:         0B (0.00%%)\n",
          bytes, p, p, t, tot);
  exit(1);
}

/* Memory outside the pool ran out: NCCL (or, with one GPU, cuBLAS) cannot initialise. */
static void die_outside(const model *m, const envcfg *e) {
  if (!m->collectives) {
    logline('E', "cuda_blas.cc:187",
            "failed to create cublas handle: the resource allocation failed");
    py_traceback_head();
    fprintf(stderr,
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate "
            "request for 1.00GiB (1073741824B) on device ordinal 0\n");
    exit(1);
  }
  fprintf(stderr, "sim-node:12345:12401 [0] %s NCCL WARN Cuda failure 2 'out of memory'\n",
          e->nvls ? "transport/nvls.cc:158" : "init.cc:412");
  py_traceback_head();
  fprintf(
      stderr,
      "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/runtime/"
      "nccl_api.cc:616: NCCL operation ncclCommInitRankConfig(&comm, nranks, id, rank, &config) "
      "failed: unhandled cuda error (run with NCCL_DEBUG=INFO for details). Last NCCL "
      "warning(error) log entry (may be truncated): Cuda failure 2 'out of memory'\n");
  exit(1);
}

/* --fail-rate: an unrelated failure (a flaky node), so tests can exercise crash handling. */
static void die_crash(rng *r) {
  if (rng_next(r) & 1) {
    py_traceback_head();
    fprintf(stderr,
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime "
            "executable: run time error: custom call 'xla.gpu.all_reduce' failed: "
            "external/xla/xla/service/gpu/nccl_utils.cc:297: NCCL operation ncclGroupEnd() "
            "failed: unhandled system error (run with NCCL_DEBUG=INFO for details).\n");
    exit(1);
  }
  fprintf(stderr,
          "Fatal Python error: Segmentation fault\n\nThread 0x00007f3a2c1ff740 "
          "(most recent call first):\n  File \"/workspace/train.py\", line 201 in main\n");
  fflush(stderr);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(SIGSEGV, SIG_DFL);
  raise(SIGSEGV);
  _exit(139);
}

static void log_startup(const options *o, const model *m, const envcfg *e) {
  logline('I', "service.cc:145",
          "XLA service 0x55d0c3a1e2f0 initialized for platform CUDA (this "
          "does not guarantee that XLA will be used). Devices:");
  for (int i = 0; i < m->devices; i++)
    logline('I', "service.cc:153",
            "  StreamExecutor device (%d): NVIDIA H100 80GB HBM3, Compute "
            "Capability 9.0",
            i);
  logline('I', "se_gpu_pjrt_client.cc:951", "Using BFC allocator.");
  logline('I', "gpu_helpers.cc:114",
          "XLA backend allocating %.0f bytes on device 0 for "
          "BFCAllocator.",
          e->mem_frac * HBM_GIB * GIB);
  printf("flagtune-sim: SIMULATED JAX training, landscape %s (%s); not real JAX\n", o->landscape,
         m->what);
  printf("Compiling train_step ...\n");
  fflush(stdout);
}

/* XLA's own lines for the profile (ProfileFromPath, GetLatencyEstimator), and one line of
 * the simulator's own (not XLA's: XLA says nothing when the fingerprint filter empties a
 * profile) so that tests can see how many entries survived. */
static void log_pgle_profile(const flagset *fs) {
  const char *prof = fl_raw(fs, PGLE_PATH_FLAG);
  int matched, total;
  prof_state st = pgle_profile_state(fs, &matched, &total);
  int text = ends_with(prof, ".pbtxt");
  if (st == PROF_MISSING)
    logline('E', "gpu_hlo_schedule.cc:335", "PGLE profile file does not exist: %s", prof);
  if (st == PROF_BAD)
    logline('E', "gpu_hlo_schedule.cc:331",
            "Tried but failed to parse PGLE proto from %s file '%s'. Error message: "
            "Can't parse %s as %s proto",
            text ? "text" : "binary", prof, prof, text ? "text" : "binary");
  if (st != PROF_USED && st != PROF_EMPTY) return;
  logline('I', "gpu_hlo_schedule.cc:327", "Using PGLE profile from %s", prof);
  logline('I', "gpu_hlo_schedule.cc:421", "Found profile, using profile guided latency estimator");
  printf("flagtune-sim: PGLE profile: %d of %d entries match this program's fingerprint\n", matched,
         total);
}

static void log_compile(const flagset *fs, const model *m) {
  log_pgle_profile(fs);
  if (fl_bool(fs, "xla_gpu_enable_latency_hiding_scheduler"))
    logline('I', "gpu_hlo_schedule.cc:521", "Latency hiding scheduler memory limit: %.2fGiB",
            m->cap_gib * fl_num(fs, "xla_gpu_memory_limit_slop_factor") / 100.0);
  if (m->autotune_oom)
    logline('E', "cuda_driver.cc:1080",
            "failed to allocate 2.50GiB (2684354560 bytes) from "
            "device: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
}

/* The harmless BFC warning (flatironinstitute/nemos#345) for configurations close to the limit
 * or with on-demand allocation: it must not be classified as an OOM. */
static void maybe_bfc_warning(const model *m, const envcfg *e) {
  double u = m->need_gib / m->cap_gib;
  if (m->oom != OOM_NONE || !(u > 0.88 || (!e->prealloc && u > 0.75))) return;
  logline('W', "bfc_allocator.cc:296",
          "Allocator (GPU_0_bfc) ran out of memory trying to allocate "
          "%.2fGiB with freed_by_count=0. The caller indicates that this is not a failure, but "
          "this may mean that there could be performance gains if more memory were available.",
          0.5 + fmod(m->need_gib * 7.31, 3.5));
}

static void print_step(const options *o, int step, double ms, double loss) {
  if (o->text)
    printf("step %d: %.2f ms\n", step, ms);
  else
    printf("{\"step\": %d, \"step_time_ms\": %.2f, \"loss\": %.4f}\n", step, ms, loss);
  fflush(stdout);
}

/* Noise: a per-process offset (this run's GPUs, clocks, neighbours), per-step jitter, rare
 * spikes (data loader, GC), and two warm-up steps. PGLE: profiled steps, then a recompile. */
static double step_time(const options *o, const model *m, const envcfg *e, rng *r, double off,
                        int step) {
  double k = o->noise / 100.0, ms = m->ms;
  if (e->pgle && step <= e->pgle_runs) ms = m->ms_profile;
  ms *= off * (1.0 + (m->noise_step > 0 ? m->noise_step : 0.015) * k * rng_normal(r));
  if (k > 0 && rng_unit(r) < 0.02) ms *= 1.2 + 0.8 * rng_unit(r);
  if (step == 1) ms *= 1.5;
  if (step == 2) ms *= 1.1;
  if (e->pgle && e->pgle_runs > 0 && step == e->pgle_runs + 1) {
    logline('I', "pgle.py:142", "Collected PGLE profile after %d runs; recompiling train_step",
            e->pgle_runs);
    ms += 0.6 * o->compile_ms * m->compile_scale;
  }
  return ms < 0.01 ? 0.01 : ms;
}

/* --corrupt-ll128: NCCL 2.18.1's release notes report data corruption with an explicitly
 * requested LL128 protocol on HGX H100. Such a run is a little faster and its reductions are
 * wrong, so its loss drifts away from the true curve: what metric.check must catch. */
static int corrupts(const options *o) {
  const char *p = getenv("NCCL_PROTO");
  if (!o->corrupt_ll128 || !p || *p == '^') return 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", p);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (!strcasecmp(t, "LL128")) return 1;
  return 0;
}

static int run_job(const options *o, const flagset *fs, const envcfg *e, const model *m) {
  rng r = {o->seed ^ config_hash(fs) ^ fnv1a(0x84222325ULL, e->trial)};
  double off =
      1.0 + (m->noise_proc > 0 ? m->noise_proc : 0.01) * (o->noise / 100.0) * rng_normal(&r);
  int crash_at =
      rng_unit(&r) < o->fail_rate ? 1 + (int)(rng_next(&r) % (uint64_t)(o->steps + 1)) : 0;
  sim_sleep(o, o->start_ms); /* Python, jax's import, the backend's start */
  log_startup(o, m, e);
  log_compile(fs, m);
  sim_sleep(o, o->compile_ms * m->compile_scale);
  printf("Compiled train_step in %.1f s\n", o->compile_ms * m->compile_scale / 1e3);
  fflush(stdout);
  if (m->oom == OOM_LOAD) die_oom(m);
  for (int step = 1; step <= o->steps; step++) {
    double ms = step_time(o, m, e, &r, off, step) * (corrupts(o) ? 0.9 : 1.0);
    sim_sleep(o, ms);
    if (step == 1 && m->oom == OOM_STEP) die_oom(m);
    if (step == 1 && m->oom == OOM_OUTSIDE) die_outside(m, e);
    if (step == 1) maybe_bfc_warning(m, e);
    if (step == crash_at) die_crash(&r);
    double loss = 2.0 + 8.4 * exp(-step / 40.0) + 0.01 * rng_normal(&r);
    print_step(o, step, ms, loss * (corrupts(o) ? 1.0 + 0.05 * step : 1.0));
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Command line.
 * ------------------------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: flagtune-sim [--steps N] [--landscape fsdp8|single|sparse|gen:SEED]\n"
          "                    [--format json|text] [--seed S] [--time-scale X] [--compile-ms MS]\n"
          "                    [--start-ms MS] [--noise PCT] [--true-value] [--true-values] "
          "[--fail-rate P]\n"
          "                    [--corrupt-ll128]"
          "                    [--gen-params N] [--print-space] [--print-space-json] "
          "[--print-optimum]\n"
          "A SIMULATED JAX training job for flagtune's tests and benchmarks (not JAX).\n"
          "Reads XLA_FLAGS, XLA_PYTHON_CLIENT_MEM_FRACTION, NCCL_*, ... like a real job.\n");
}

static int num_arg(const char *v, double lo, double hi, double *out) {
  char *end;
  double x = v ? strtod(v, &end) : 0;
  if (!v || end == v || *end || !(x >= lo && x <= hi)) return -1;
  *out = x;
  return 0;
}

static int parse_options(int argc, char **argv, options *o) {
  double x = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 0, val = 1;
    if (!strcmp(a, "--true-value"))
      ok = 1, val = 0, o->true_value = 1;
    else if (!strcmp(a, "--true-values"))
      ok = 1, val = 0, o->true_value = 2;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      usage(stdout), exit(0);
    else if (!strcmp(a, "--steps"))
      ok = !num_arg(v, 0, 1e7, &x), o->steps = (int)x;
    else if (!strcmp(a, "--seed"))
      ok = v && (o->seed = strtoull(v, NULL, 10), isdigit((unsigned char)*v));
    else if (!strcmp(a, "--time-scale"))
      ok = !num_arg(v, 0, 1e3, &o->time_scale);
    else if (!strcmp(a, "--compile-ms"))
      ok = !num_arg(v, 0, 1e8, &o->compile_ms);
    else if (!strcmp(a, "--start-ms"))
      ok = !num_arg(v, 0, 1e8, &o->start_ms);
    else if (!strcmp(a, "--noise"))
      ok = !num_arg(v, 0, 1e4, &o->noise);
    else if (!strcmp(a, "--fail-rate"))
      ok = !num_arg(v, 0, 1, &o->fail_rate);
    else if (!strcmp(a, "--print-space"))
      ok = 1, val = 0, o->print_space = 1;
    else if (!strcmp(a, "--print-space-json"))
      ok = 1, val = 0, o->print_space = 2;
    else if (!strcmp(a, "--print-optimum"))
      ok = 1, val = 0, o->print_optimum = 1;
    else if (!strcmp(a, "--gen-params"))
      ok = !num_arg(v, GENLAND_MIN_PARAMS, GENLAND_MAX_PARAMS, &x), o->gen_params = (int)x;
    else if (!strcmp(a, "--corrupt-ll128"))
      ok = 1, val = 0, o->corrupt_ll128 = 1;
    else if (!strcmp(a, "--landscape"))
      ok = v != NULL, o->landscape = v;
    else if (!strcmp(a, "--format"))
      ok = v && (!strcmp(v, "json") || !strcmp(v, "text")), o->text = v && !strcmp(v, "text");
    if (!ok) {
      fprintf(stderr, "flagtune-sim: bad argument '%s'%s%s\n", a, v && val ? " " : "",
              v && val ? v : "");
      usage(stderr);
      return -1;
    }
    i += val;
  }
  return 0;
}

/* Manual PGLE's profile run: flagtune names the file in FLAGTUNE_PGLE_PROFILE, and a real
 * job writes its converted profile there. By the name's extension: ".pb", the binary proto
 * jax.experimental.profiler.get_profiled_instructions_proto returns (entries keyed by the
 * profiled program's fingerprint; the JAX route profiles with the scheduler on); anything
 * else, the text form nsys plus pgo_nsys_converter.py writes (plain names), only from a
 * proper nsys-route run: no latency hiding scheduler, so that op costs do not overlap. */
static void write_pgle_profile(const flagset *fs) {
  static const char *names[] = {"all-gather-start.1", "reduce-scatter.289.1", "cublas-gemm.209.0"};
  static const double costs[] = {7040.5215, 8609.677, 969.08};
  const char *path = getenv("FLAGTUNE_PGLE_PROFILE");
  int bin = path && ends_with(path, ".pb");
  if (!path || !*path || (!bin && fl_bool(fs, "xla_gpu_enable_latency_hiding_scheduler"))) return;
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "flagtune-sim: cannot write the PGLE profile %s\n", path);
    return;
  }
  char fp[40];
  pgle_fingerprint(fs, fp, sizeof fp);
  for (int i = 0; i < 3; i++) {
    if (!bin) {
      fprintf(f, "costs { name: \"%s\" cost_us: %g }\n", names[i], costs[i]);
      continue;
    }
    /* costs (field 1) { name (field 1, string) cost_us (field 2, double) } */
    size_t len = strlen(fp) + strlen(names[i]);
    fputc(0x0a, f), fputc((int)(len + 2 + 9), f);
    fputc(0x0a, f), fputc((int)len, f), fputs(fp, f), fputs(names[i], f);
    fputc(0x11, f), fwrite(&costs[i], sizeof costs[i], 1, f);
  }
  fclose(f);
}

/* jaxlib >= 0.4.32 refuses both memory fractions at backend start-up (jax-ml/jax
 * jaxlib/xla_client.py:184 in 0.12.0.1, generate_pjrt_gpu_plugin_options, which the CUDA
 * plugin calls first): the job dies with its ValueError before the first step. The frame and
 * the message are jaxlib 0.12.0.1's bytes under Python 3.13 (tests/data/real/
 * memfrac_both.txt); the caller's frame is left out. */
static int mem_fraction_conflict(void) {
  const char *a = getenv("XLA_CLIENT_MEM_FRACTION");
  const char *b = getenv("XLA_PYTHON_CLIENT_MEM_FRACTION");
  if (!a || !*a || !b || !*b) return 0;
  fprintf(stderr,
          "Traceback (most recent call last):\n"
          "  File \"jaxlib/xla_client.py\", line 184, in "
          "generate_pjrt_gpu_plugin_options\n"
          "    raise ValueError(\n"
          "    ...<3 lines>...\n"
          "    )\n"
          "ValueError: XLA_CLIENT_MEM_FRACTION is specified together with "
          "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated.\n");
  return 1;
}

/* gen:SEED (SEED an unsigned decimal): draws the landscape. -1 (and a message) on bad input. */
static int gen_open(const options *o) {
  const char *s = o->landscape;
  char err[160], *end;
  if (strncmp(s, "gen:", 4) != 0) {
    if (o->gen_params) fprintf(stderr, "flagtune-sim: --gen-params needs --landscape gen:SEED\n");
    return o->gen_params ? -1 : 0;
  }
  errno = 0;
  unsigned long long seed = strtoull(s + 4, &end, 10);
  if (!isdigit((unsigned char)s[4]) || *end || errno == ERANGE) {
    fprintf(stderr,
            "flagtune-sim: landscape '%s': want gen:SEED, SEED an unsigned integer "
            "(e.g. gen:17)\n",
            s);
    return -1;
  }
  if (!(g_gen = genland_new(seed, o->gen_params, err, sizeof err))) {
    fprintf(stderr, "flagtune-sim: %s\n", err);
    return -1;
  }
  for (int i = 0; i < genland_nparams(g_gen); i++) {
    int env;
    const char *name = genland_param(g_gen, i, &env);
    if (!env && flag_index(name, strlen(name)) < 0) { /* a typo in genland.c, not user input */
      fprintf(stderr, "flagtune-sim: internal: generated flag %s is not in FLAGS\n", name);
      abort();
    }
  }
  return 0;
}

/* The noise-free steady-state step time (%.6f) of an evaluated model, or "oom". */
static void print_value(const model *m) {
  if (m->oom != OOM_NONE)
    puts("oom");
  else
    printf("%.6f\n", m->ms);
}

/* --true-value's answer for the configuration the environment holds now: the noise-free
 * step time (%.6f), "oom" or "invalid". */
static void print_true_value(const char *landscape) {
  static flagset fs; /* static: reachable when a path exit()s (clean under LSan) */
  envcfg e;
  model m;
  memset(&fs, 0, sizeof fs);
  if (mem_fraction_conflict() || flags_load(&fs, 0) < 0) {
    puts("invalid");
  } else {
    env_load(&e);
    landscape_eval(landscape, &fs, &e, &m);
    print_value(&m);
  }
  flags_free(&fs);
}

/* --true-values: one configuration per stdin line, tab-separated NAME=VALUE settings of the
 * environment (XLA_FLAGS among them), answered line by line as --true-value would answer a
 * process started with them: one start for a whole grid (the landscape checks evaluate
 * thousands). The settings are unset again after each line. */
static int true_values(const char *landscape) {
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) > 0) {
    line[strcspn(line, "\r\n")] = 0;
    char *names[64];
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(line, "\t", &save); tok && n < 64;
         tok = strtok_r(NULL, "\t", &save)) {
      char *eq = strchr(tok, '=');
      if (!eq || eq == tok) continue;
      *eq = 0;
      setenv(tok, eq + 1, 1);
      names[n++] = tok;
    }
    print_true_value(landscape);
    for (int i = 0; i < n; i++) unsetenv(names[i]);
  }
  free(line);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* A generated landscape's own start and compile (genland_costs: the ranges of real trials,
 * tests/data/real/costs.txt) where the command line gives none; the named landscapes keep
 * 30 s of compile (a 57-140 steps' worth, as real trials' 60-530) and no start. */
static void default_costs(options *o) {
  double start = 0, compile = 30000.0, t0;
  if (g_gen) genland_costs(g_gen, &start, &compile, &t0);
  if (o->start_ms < 0) o->start_ms = start;
  if (o->compile_ms < 0) o->compile_ms = compile;
}

int main(int argc, char **argv) {
  options o = {.steps = 20, .time_scale = 0.001, .compile_ms = -1, .start_ms = -1, .noise = 100.0};
  static flagset fs; /* static: still reachable when a failure path exit()s (clean under LSan) */
  envcfg e;
  model m;
  memset(&fs, 0, sizeof fs);
  if (parse_options(argc, argv, &o) < 0) return 2;
  if (mem_fraction_conflict()) return 1;
  if (!o.landscape) o.landscape = getenv("FLAGTUNE_SIM_LANDSCAPE");
  if (!o.landscape || !*o.landscape) o.landscape = "fsdp8";
  env_load(&e);
  if (gen_open(&o) < 0) return 2;
  default_costs(&o);
  if (o.print_space || o.print_optimum) {
    if (!g_gen) {
      fprintf(stderr,
              "flagtune-sim: --print-space and --print-optimum need a generated "
              "landscape (--landscape gen:SEED)\n");
      return 2;
    }
    if (o.print_space) genland_print_space(g_gen, stdout, o.print_space == 2);
    if (o.print_optimum) genland_print_optimum(g_gen, stdout);
    genland_free(g_gen);
    return 0;
  }
  if (landscape_eval(o.landscape, &fs, &e, &m) < 0) {
    fprintf(stderr, "flagtune-sim: unknown landscape '%s' (fsdp8, single, sparse, gen:SEED)\n",
            o.landscape);
    return 2;
  }
  if (o.true_value == 2) {
    int rc = true_values(o.landscape);
    genland_free(g_gen);
    return rc;
  }
  if (flags_load(&fs, !o.true_value) < 0) { /* only reached with --true-value */
    puts("invalid");
    return 0;
  }
  if (fs.help) {
    print_help();
    return 0;
  }
  landscape_eval(o.landscape, &fs, &e, &m);
  if (o.true_value) {
    print_value(&m);
  } else {
    run_job(&o, &fs, &e, &m);
    write_pgle_profile(&fs);
  }
  flags_free(&fs);
  genland_free(g_gen);
  return 0;
}
