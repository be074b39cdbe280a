/* classify: the real XLA/JAX/CUDA/NCCL texts (copied from the upstream sources and issues
 * cited at each test), the look-alikes that must not count, and the outcome precedence. */
#include <signal.h>
#include <stdlib.h>

#include "classify.h"
#include "test.h"

static line_signal line_of(const char *s) {
  return classify_line(NULL, s, strlen(s));
}

/* Classifies every line of a multi-line log and returns the strongest signal seen, in
 * the order the orchestrator acts on them. */
static line_signal worst_of(const char *log) {
  line_signal worst = LINE_PLAIN;
  static const int rank[] = {0, 4, 2, 5, 1}; /* PLAIN, OOM_FATAL, OOM_SOFT, INVALID, BAD_VALUE */
  for (const char *p = log; *p;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    line_signal s = classify_line(NULL, p, n);
    if (rank[s] > rank[worst]) worst = s;
    p += n + (nl ? 1 : 0);
  }
  return worst;
}

TEST(outcome_names_round_trip) {
  const char *names[] = {"running",   "ok",     "oom",         "invalid", "timeout", "crash",
                         "no_metric", "pruned", "interrupted", "lost",    "wrong"};
  CHECK_INT(OUTCOME_COUNT, 11);
  for (int i = 0; i < OUTCOME_COUNT; i++) {
    CHECK_STR(outcome_name((outcome)i), names[i]);
    CHECK_INT(outcome_from_name(names[i]), i);
  }
  CHECK_INT(outcome_from_name("OK"), -1);
  CHECK_INT(outcome_from_name(""), -1);
  CHECK_INT(outcome_from_name(NULL), -1);
  CHECK_INT(outcome_from_name("oom "), -1);
  CHECK_STR(outcome_name(OUTCOME_COUNT), "unknown");
}

/* Finished for good: counted against the budget, never re-run by resume. */
TEST(outcome_is_final) {
  for (int i = 0; i < OUTCOME_COUNT; i++) {
    int want = i != OUTCOME_RUNNING && i != OUTCOME_INTERRUPTED && i != OUTCOME_LOST;
    CHECK_INT(outcome_is_final((outcome)i), want);
  }
  CHECK_INT(outcome_is_final(OUTCOME_WRONG), 1);
  CHECK_INT(outcome_is_final(OUTCOME_COUNT), 0);
}

/* jax-ml/jax#13428 / #22755 shape: the allocator's warnings, the executor's error, the
 * buffer report, then the Python traceback ending in the runtime error. */
static const char *const OOM_TRACEBACK =
    "2024-03-01 12:00:01.123456: W external/xla/xla/tsl/framework/bfc_allocator.cc:482] "
    "Allocator (GPU_0_bfc) ran out of memory trying to allocate 16.00GiB (rounded to "
    "17179869184)requested by op \n"
    "2024-03-01 12:00:01.123500: W external/xla/xla/tsl/framework/bfc_allocator.cc:494] "
    "****************************************************************************________\n"
    "2024-03-01 12:00:01.123600: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2826] "
    "Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
    "17179869184 bytes.\n"
    "BufferAssignment OOM Debugging.\n"
    "BufferAssignment stats:\n"
    "             parameter allocation:    8.00GiB\n"
    "              constant allocation:         0B\n"
    "Traceback (most recent call last):\n"
    "  File \"/workspace/train.py\", line 88, in <module>\n"
    "    state, loss = train_step(state, batch)\n"
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
    "allocate 17179869184 bytes.\n";

TEST(oom_fatal_real_texts) {
  CHECK_INT(line_of("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory "
                    "while trying to allocate 17179869184 bytes."),
            LINE_OOM_FATAL);
  /* Newer JAX renamed the class; the text is what counts. */
  CHECK_INT(line_of("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
                    "to allocate 2147483648 bytes."),
            LINE_OOM_FATAL);
  CHECK_INT(line_of("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate "
                    "request for 176.00MiB (184549376B) on device ordinal 0"),
            LINE_OOM_FATAL);
  CHECK_INT(line_of("E0301 12:00:01.123600 pjrt_stream_executor_client.cc:2826] Execution of "
                    "replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                    "1024 bytes."),
            LINE_OOM_FATAL);
  /* Wrapped by a launcher that dropped the status prefix: XLA's own wording still counts. */
  CHECK_INT(line_of("ERROR: Out of memory while trying to allocate 17179869184 bytes."),
            LINE_OOM_FATAL);
  CHECK_INT(line_of("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile "
                    "permanent error. Ran out of memory in memory space hbm. Used 17.54G of "
                    "15.48G hbm. Exceeded hbm capacity by 2.06G."),
            LINE_OOM_FATAL);
  CHECK_INT(worst_of(OOM_TRACEBACK), LINE_OOM_FATAL);
}

TEST(oom_look_alikes_are_plain) {
  /* flatironinstitute/nemos#345: the BFC allocator says it is not a failure. */
  CHECK_INT(line_of("2024-05-10 14:01:02.345678: W external/xla/xla/tsl/framework/"
                    "bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of memory trying to "
                    "allocate 3.37GiB with freed_by_count=0. The caller indicates that this is "
                    "not a failure, but this may mean that there could be performance gains if "
                    "more memory were available."),
            LINE_PLAIN);
  /* The same warning without the disclaimer never stops a trial: a soft OOM, which counts
   * only if the run then fails or times out before its first step. */
  CHECK_INT(line_of("W external/xla/xla/tsl/framework/bfc_allocator.cc:482] Allocator (GPU_0_bfc) "
                    "ran out of memory trying to allocate 16.00GiB (rounded to 17179869184)"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("W bfc_allocator.cc:494] *****************************************_____"),
            LINE_PLAIN);
  /* Allocation wording without RESOURCE_EXHAUSTED is not XLA's fatal error. */
  CHECK_INT(line_of("I allocator.cc:12] Failed to allocate request for 2.00MiB, retrying after "
                    "freeing cached buffers"),
            LINE_PLAIN);
  CHECK_INT(line_of("INFO: no RESOURCE_EXHAUSTED errors in the last 100 steps"), LINE_PLAIN);
  CHECK_INT(line_of("note: out of memory while trying to allocate is printed on failure"),
            LINE_PLAIN);
  CHECK_INT(line_of("BufferAssignment OOM Debugging."), LINE_PLAIN);
  CHECK_INT(line_of("{\"step\": 3, \"step_time_ms\": 412.3, \"oom_retries\": 0}"), LINE_PLAIN);
  CHECK_INT(line_of("XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true"), LINE_PLAIN);
  CHECK_INT(line_of(""), LINE_PLAIN);
}

TEST(oom_soft_real_texts) {
  /* jax-ml/jax#788: during convolution autotuning; XLA falls back afterwards. */
  CHECK_INT(line_of("2019-06-04 21:12:58.123456: E external/org_tensorflow/tensorflow/compiler/"
                    "xla/service/gpu/cuda_gpu_executor.cc:477] failed to allocate 3.94G "
                    "(4233691136 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("E0301 12:00:00.1 cuda_blas.cc:190] failed to create cublas handle: "
                    "CUBLAS_STATUS_ALLOC_FAILED"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("node01:12345:12399 [0] include/alloc.h:103 NCCL WARN Cuda failure "
                    "'out of memory'"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("node01:1234:1288 [2] include/alloc.h:125 NCCL WARN Cuda failure 2 "
                    "'out of memory'"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("node01:1234:1288 [2] NCCL WARN Failed to allocate: out of memory"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: "
                    "cudaErrorMemoryAllocation : out of memory"),
            LINE_OOM_SOFT);
  /* NCCL's follow-up lines and ordinary warnings are plain. */
  CHECK_INT(line_of("node01:12345:12399 [3] NCCL INFO include/alloc.h:110 -> 1"), LINE_PLAIN);
  CHECK_INT(line_of("node01:12345:12399 [3] NCCL WARN NET/IB : No device found."), LINE_PLAIN);
}

TEST(invalid_and_bad_value_texts) {
  /* Older wordings, still classified: "flag(s)" (TensorFlow-era builds) and the plural that
   * jax <= 0.5.0 printed for any number of unknown flags. */
  CHECK_INT(line_of("2024-03-01 12:00:00.000000: F external/xla/xla/parse_flags_from_env.cc:226] "
                    "Unknown flag(s) in XLA_FLAGS: --xla_gpu_enable_foo=true Perhaps you meant to "
                    "specify these on the TF_XLA_FLAGS envvar?"),
            LINE_INVALID);
  CHECK_INT(line_of("F0301 parse_flags_from_env.cc:226] Unknown flags in XLA_FLAGS: "
                    "--xla_gpu_bogus=1"),
            LINE_INVALID);
  /* A malformed value is a refusal now (see malformed_value_is_fatal_today), in the older
   * wording too: jaxlibs before the QCHECK ran on with the flag silently ignored. */
  CHECK_INT(line_of("E0301 command_line_flags.cc:104] Couldn't interpret value maybe for flag "
                    "xla_gpu_enable_latency_hiding_scheduler."),
            LINE_INVALID);
  CHECK_INT(line_of("Perhaps you meant to specify these on the TF_XLA_FLAGS envvar?"), LINE_PLAIN);
  CHECK_INT(line_of("Unknown flags in TF_XLA_FLAGS: --foo"), LINE_PLAIN);
  CHECK_INT(line_of("Unknown flag in TF_XLA_FLAGS: --foo"), LINE_PLAIN);
  const char *abort_log =
      "2024-03-01 12:00:00.000000: F external/xla/xla/parse_flags_from_env.cc:226] Unknown "
      "flag(s) in XLA_FLAGS: --xla_gpu_enable_foo=true Perhaps you meant to specify these on the "
      "TF_XLA_FLAGS envvar?\n"
      "*** Check failure stack trace: ***\n"
      "    @     0x7f2b3c0d1e23  absl::log_internal::LogMessageFatal::~LogMessageFatal()\n"
      "Fatal Python error: Aborted\n";
  CHECK_INT(worst_of(abort_log), LINE_INVALID);
}

/* One unknown flag, as today's XLA says it: openxla/xla xla/parse_flags_from_env.cc:224
 * (DieIfEnvHasUnknownFlagsLeft), LOG(QFATAL) << "Unknown flag" << (unknown_flags.size() > 1 ?
 * "s" : "") << " in " << envvar << ": " << absl::StrJoin(unknown_flags, " "). The singular is
 * printed since XLA commit b727c5cd (jax >= 0.5.1), which counts only the flags left unparsed;
 * before it the span was the whole argv vector, trailing nullptr included, so always plural. */
TEST(single_unknown_flag_today) {
  CHECK_INT(line_of("F1123 11:20:00.123456   51234 parse_flags_from_env.cc:224] Unknown flag in "
                    "XLA_FLAGS: --xla_gpu_made_up_flag=true"),
            LINE_INVALID);
  CHECK_INT(line_of("F1123 11:20:00.123456   51234 parse_flags_from_env.cc:224] Unknown flags in "
                    "XLA_FLAGS: --xla_gpu_made_up_flag=true --xla_gpu_other_invention=1"),
            LINE_INVALID);
  /* QFATAL on newer absl exits 1 quietly; the trial is invalid whatever the exit. */
  trial_facts f = {0};
  f.exit_code = 1;
  f.saw_invalid = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_INVALID);
}

/* A malformed value, as today's XLA reports it. tsl's parser logs, for bool/int32/int64/float
 * flags, LOG(ERROR) << "Couldn't interpret value " << arg << " for flag " << flag << "."
 * (openxla/xla xla/tsl/util/command_line_flags.cc, ParseBoolFlag and siblings; earlier
 * third_party/tsl/tsl/util/command_line_flags.cc), a custom setter may log its own
 * "Illegal value for --xla_fuel. Saw %s, but expected token %s to have format X=INTEGER."
 * (xla/debug_options_flags.cc) or nothing at all (setter_for_xla_gpu_enable_command_buffer
 * returns false for an enum it does not know, e.g. DYNAMIC_SLICE_FUSION or CONVOLUTION on an
 * older jaxlib), and then xla/parse_flags_from_env.cc:210-212 dies:
 * QCHECK(tsl::Flags::Parse(...)) << "Flag parsing failed.\n" << tsl::Flags::Usage(...). */
TEST(malformed_value_is_fatal_today) {
  CHECK_INT(line_of("E1123 11:20:00.100000   51234 command_line_flags.cc:122] Couldn't interpret "
                    "value maybe for flag xla_gpu_enable_latency_hiding_scheduler."),
            LINE_INVALID);
  CHECK_INT(line_of("E1123 11:20:00.100000   51234 debug_options_flags.cc:480] Illegal value for "
                    "--xla_fuel. Saw abc, but expected token abc to have format X=INTEGER."),
            LINE_INVALID);
  const char *cmdbuf_log =
      "F1123 11:20:00.100200   51234 parse_flags_from_env.cc:210] Check failed: "
      "tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) Flag parsing "
      "failed.\n"
      "usage: --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CONVOLUTION\n"
      "Flags:\n"
      "\t--xla_cpu_enable_fast_math=false     \tbool\tEnable unsafe fast-math optimizations in "
      "the CPU compiler; this may produce faster code at the expense of some accuracy.\n"
      "*** Check failure stack trace: ***\n";
  CHECK_INT(worst_of(cmdbuf_log), LINE_INVALID);
  const char *first =
      "F1123 11:20:00.100200   51234 parse_flags_from_env.cc:210] Check failed: "
      "tsl::Flags::Parse(&env_argv->argc, env_argv->argv.data(), flag_list) "
      "Flag parsing failed.";
  CHECK_INT(line_of(first), LINE_INVALID);
  /* The usage table after it is plain text. */
  CHECK_INT(line_of("\t--xla_gpu_autotune_level=4           \tint32\tSet GEMM and Convolution "
                    "auto-tuning level."),
            LINE_PLAIN);
  /* Look-alikes from other programs do not name a flag. */
  CHECK_INT(line_of("ConversionError: Couldn't interpret value as string."), LINE_PLAIN);
  CHECK_INT(line_of("error: Illegal value for --steps: 12x"), LINE_PLAIN);
}

/* Host OOM: openxla/xla xla/stream_executor/integrations/tf_allocator_adapter.cc,
 * MemoryAllocationError: absl::ResourceExhaustedError(absl::StrCat("Out of ", (is_host_mem ?
 * "host " : ""), "memory while trying to allocate ", size, " bytes.", (is_host_mem ?
 * kHostMemoryExplanation : ""))), the explanation naming XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB. */
TEST(host_oom_is_oom) {
  CHECK_INT(line_of("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of host memory while "
                    "trying to allocate 68719476736 bytes. Please set the environment variable "
                    "XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the "
                    "default 64 GB."),
            LINE_OOM_FATAL);
  CHECK_INT(line_of("Out of host memory while trying to allocate 8 bytes."), LINE_OOM_FATAL);
  /* The device wording is unchanged. */
  CHECK_INT(line_of("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8 bytes."),
            LINE_OOM_FATAL);
}

TEST(bounded_by_len_and_nul_safe) {
  const char *s = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8 bytes.";
  /* Cut before "memory": the rest is beyond LEN and must not be read. */
  CHECK_INT(classify_line(NULL, s, strlen("RESOURCE_EXHAUSTED: Out of ")), LINE_PLAIN);
  CHECK_INT(classify_line(NULL, s, 0), LINE_PLAIN);
  /* An unterminated heap copy: ASan catches any read past the end. */
  size_t n = strlen(s);
  char *heap = malloc(n);
  memcpy(heap, s, n);
  CHECK_INT(classify_line(NULL, heap, n), LINE_OOM_FATAL);
  free(heap);
  /* Binary junk with a NUL before the text is still searched as bytes. */
  const char junk[] = "\xff\xfe\0\x01 Unknown flags in XLA_FLAGS: --x";
  CHECK_INT(classify_line(NULL, junk, sizeof junk - 1), LINE_INVALID);
  CHECK_INT(classify_line(NULL, NULL, 5), LINE_PLAIN);
}

TEST(experiment_patterns) {
  const char *oom[] = {"torch.cuda.OutOfMemoryError", ""};
  const char *inv[] = {"unrecognized arguments:", NULL};
  classify_patterns p = {oom, 2, inv, 2};
  const char *l1 = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
  CHECK_INT(classify_line(&p, l1, strlen(l1)), LINE_OOM_FATAL);
  CHECK_INT(classify_line(NULL, l1, strlen(l1)), LINE_PLAIN);
  const char *l2 = "train.py: error: unrecognized arguments: --bogus";
  CHECK_INT(classify_line(&p, l2, strlen(l2)), LINE_INVALID);
  /* An empty pattern matches nothing (it would otherwise match every line). */
  const char *l3 = "step 3: 412.3 ms";
  CHECK_INT(classify_line(&p, l3, strlen(l3)), LINE_PLAIN);
  /* Case-sensitive. */
  const char *l4 = "TORCH.CUDA.OUTOFMEMORYERROR";
  CHECK_INT(classify_line(&p, l4, strlen(l4)), LINE_PLAIN);
  /* Built-ins win over the experiment's own patterns. */
  const char *both[] = {"Couldn't"};
  classify_patterns q = {both, 1, NULL, 0};
  const char *l5 = "Couldn't interpret value x for flag y.";
  CHECK_INT(classify_line(&q, l5, strlen(l5)), LINE_INVALID);
  /* OOM patterns are tried before invalid ones. */
  const char *same[] = {"boom"};
  classify_patterns r = {same, 1, same, 1};
  CHECK_INT(classify_line(&r, "boom", 4), LINE_OOM_FATAL);
}

static trial_facts exited(long code) {
  trial_facts f = {0};
  f.exit_code = code;
  f.min_steps = 4;
  return f;
}

TEST(trial_ok_and_no_metric) {
  trial_facts f = exited(0);
  f.n_steps = 4;
  CHECK_INT(classify_trial(&f), OUTCOME_OK);
  f.n_steps = 3;
  CHECK_INT(classify_trial(&f), OUTCOME_NO_METRIC);
  f.n_steps = 0;
  f.min_steps = 0; /* a floor of one step: nothing read is never ok */
  CHECK_INT(classify_trial(&f), OUTCOME_NO_METRIC);
  /* Autotuning's CUDA_ERROR_OUT_OF_MEMORY then a clean exit: the run was fine. */
  f = exited(0);
  f.n_steps = 10;
  f.saw_oom_soft = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_OK);
}

TEST(trial_failures) {
  trial_facts f = exited(1);
  CHECK_INT(classify_trial(&f), OUTCOME_CRASH);
  f.saw_oom_soft = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  f = exited(0);
  f.term_signal = SIGSEGV;
  f.n_steps = 10;
  CHECK_INT(classify_trial(&f), OUTCOME_CRASH);
  f.saw_oom_soft = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  /* A bare SIGKILL (maybe the kernel OOM killer, maybe kill -9) stays a crash. */
  f = exited(0);
  f.term_signal = SIGKILL;
  CHECK_INT(classify_trial(&f), OUTCOME_CRASH);
  f = exited(0);
  f.spawn_failed = 1;
  f.n_steps = 10;
  CHECK_INT(classify_trial(&f), OUTCOME_CRASH);
  /* An abort after "Unknown flags" is invalid whatever the exit looked like. */
  f = exited(0);
  f.term_signal = SIGABRT;
  f.saw_invalid = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_INVALID);
  f = exited(1);
  f.saw_oom_fatal = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
}

TEST(trial_stop_reasons_and_precedence) {
  trial_facts f = exited(0);
  f.term_signal = SIGTERM;
  f.stopped = STOPPED_TIMEOUT;
  CHECK_INT(classify_trial(&f), OUTCOME_TIMEOUT);
  f.saw_oom_fatal = 1; /* an OOM seen before the timer fired explains it */
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  f.stopped = STOPPED_OOM;
  f.saw_oom_fatal = 0;
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  f.stopped = STOPPED_INVALID;
  CHECK_INT(classify_trial(&f), OUTCOME_INVALID);
  f.stopped = STOPPED_OOM;
  f.saw_invalid = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_INVALID);
  f.stopped = STOPPED_PRUNED;
  CHECK_INT(classify_trial(&f), OUTCOME_PRUNED);
  f.stopped = STOPPED_INTERRUPTED;
  CHECK_INT(classify_trial(&f), OUTCOME_INTERRUPTED);
  f.spawn_failed = 1;
  CHECK_INT(classify_trial(&f), OUTCOME_CRASH);
  f = exited(0);
  f.stopped = STOPPED_TIMEOUT;
  f.saw_oom_soft = 1;
  f.n_steps = 5; /* it ran steps: slow, not out of memory */
  CHECK_INT(classify_trial(&f), OUTCOME_TIMEOUT);
  f = exited(0);
  f.n_steps = 100;
  f.stopped = STOPPED_PRUNED;
  CHECK_INT(classify_trial(&f), OUTCOME_PRUNED);
  CHECK_INT(classify_trial(NULL), OUTCOME_CRASH);
}

/* ---- the pre-filter changes no answer ---- */

/* The classifier as it was before its pre-filter (every search on every line), kept here as
 * the oracle: the pre-filter may only skip lines this says are plain. */
static int ref_has(const char *line, size_t len, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0 || n > len) return 0;
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(line + i, needle, n) == 0) return 1;
  return 0;
}

static int ref_any(const char *line, size_t len, const char *const *needles, int n) {
  for (int i = 0; i < n; i++)
    if (needles && needles[i] && ref_has(line, len, needles[i])) return 1;
  return 0;
}

static line_signal ref_classify(const classify_patterns *p, const char *l, size_t n) {
  static const char *const refusals[] = {"Unknown flag in XLA_FLAGS", "Unknown flags in XLA_FLAGS",
                                         "Unknown flag(s) in XLA_FLAGS", "Flag parsing failed.",
                                         "Illegal value for --xla_"};
  static const char *const with_status[] = {"RESOURCE_EXHAUSTED: Out of memory",
                                            "Failed to allocate request for",
                                            "Ran out of memory in memory space"};
  static const char *const soft[] = {"CUDA_ERROR_OUT_OF_MEMORY", "CUBLAS_STATUS_ALLOC_FAILED",
                                     "CUDNN_STATUS_ALLOC_FAILED", "cudaErrorMemoryAllocation"};
  if (ref_any(l, n, refusals, 5) ||
      (ref_has(l, n, "Couldn't interpret value ") && ref_has(l, n, " for flag ")) ||
      (ref_has(l, n, "Invalid value \"") && ref_has(l, n, "\" for JAX flag ")) ||
      (ref_has(l, n, "invalid truth value '") && ref_has(l, n, "' for environment 'JAX_")) ||
      ref_has(l, n,
              "XLA_CLIENT_MEM_FRACTION is specified together with "
              "XLA_PYTHON_CLIENT_MEM_FRACTION") ||
      ref_has(l, n, "XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of \"") ||
      ((ref_has(l, n, "Unrecognized element token \"") ||
        ref_has(l, n, "Unrecognized prefix token \"")) &&
       ref_has(l, n, "\" when parsing \"")) ||
      ref_has(l, n, "Failed to bind NVLink SHARP (NVLS) Multicast memory"))
    return LINE_INVALID;
  int benign = ref_has(l, n, "The caller indicates that this is not a failure");
  if (!benign && (ref_has(l, n, "Out of memory while trying to allocate") ||
                  ref_has(l, n, "Out of host memory while trying to allocate") ||
                  (ref_has(l, n, "RESOURCE_EXHAUSTED") && ref_any(l, n, with_status, 3))))
    return LINE_OOM_FATAL;
  if (!benign &&
      (ref_any(l, n, soft, 4) ||
       (ref_has(l, n, "'out of memory'") && ref_has(l, n, "Cuda failure")) ||
       (ref_has(l, n, "NCCL WARN") && ref_has(l, n, "out of memory")) ||
       (ref_has(l, n, "Allocator (") && ref_has(l, n, ") ran out of memory trying to allocate")) ||
       ref_has(l, n, "Failed to CUDA calloc ") ||
       ref_has(l, n, "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR") ||
       ref_has(l, n, "failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED") ||
       ref_has(l, n, "Failure to initialize cublas may be due to OOM")))
    return LINE_OOM_SOFT;
  if (!p) return LINE_PLAIN;
  if (!benign && ref_any(l, n, p->oom, p->n_oom)) return LINE_OOM_FATAL;
  if (ref_any(l, n, p->invalid, p->n_invalid)) return LINE_INVALID;
  return LINE_PLAIN;
}

/* Lines built from pieces of every pattern (whole, cut short, with a byte changed), bytes
 * next to the anchors' range ('B', 'C', 'U', 'V'), high bytes, NULs and plain words, at
 * every length and alignment, each classified both ways, with and without an experiment's
 * own patterns. */
TEST(prefilter_agrees_with_every_search) {
  static const char *const pieces[] = {"Unknown flag in XLA_FLAGS",
                                       "Unknown flags in XLA_FLAGS",
                                       "Unknown flag(s) in XLA_FLAGS",
                                       "Flag parsing failed.",
                                       "Illegal value for --xla_",
                                       "Couldn't interpret value ",
                                       " for flag ",
                                       "The caller indicates that this is not a failure",
                                       "Out of memory while trying to allocate",
                                       "Out of host memory while trying to allocate",
                                       "RESOURCE_EXHAUSTED",
                                       "RESOURCE_EXHAUSTED: Out of memory",
                                       "Failed to allocate request for",
                                       "Ran out of memory in memory space",
                                       "CUDA_ERROR_OUT_OF_MEMORY",
                                       "CUBLAS_STATUS_ALLOC_FAILED",
                                       "CUDNN_STATUS_ALLOC_FAILED",
                                       "cudaErrorMemoryAllocation",
                                       "'out of memory'",
                                       "Cuda failure",
                                       "NCCL WARN",
                                       "out of memory",
                                       "Allocator (",
                                       ") ran out of memory trying to allocate",
                                       "Failed to CUDA calloc ",
                                       "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
                                       "failed to create cublas handle: ",
                                       "CUBLAS_STATUS_NOT_INITIALIZED",
                                       "Invalid value \"",
                                       "\" for JAX flag ",
                                       "invalid truth value '",
                                       "' for environment 'JAX_",
                                       "XLA_CLIENT_MEM_FRACTION is specified together with ",
                                       "XLA_PYTHON_CLIENT_MEM_FRACTION",
                                       "XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of \"",
                                       "Unrecognized element token \"",
                                       "Unrecognized prefix token \"",
                                       "\" when parsing \"",
                                       "Failed to bind NVLink SHARP (NVLS) Multicast memory",
                                       "Failure to initialize cublas may be due to OOM",
                                       "my-oom",
                                       "BAD FLAG",
                                       "step 12: 140.2 ms",
                                       "I1126 02:03:04.5 ",
                                       "BCUV",
                                       "\x80\xc3\xa9\xff",
                                       "\0",
                                       "  ",
                                       "x"};
  enum { N_PIECES = sizeof pieces / sizeof pieces[0] };
  const char *oom[] = {"my-oom", ""};
  const char *invalid[] = {"BAD FLAG"};
  classify_patterns own = {.oom = oom, .n_oom = 2, .invalid = invalid, .n_invalid = 1};
  unsigned seed = 12345;
  char line[512];
  int mismatches = 0, signals = 0;
  for (int iter = 0; iter < 200000; iter++) {
    size_t len = 0;
    int parts = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 5;
    for (int k = 0; k < parts; k++) {
      seed = seed * 1103515245u + 12345u;
      const char *piece = pieces[(seed >> 16) % N_PIECES];
      size_t n = piece[0] ? strlen(piece) : 1;
      seed = seed * 1103515245u + 12345u;
      int how = (int)(seed >> 16) % 8;
      if (how == 0 && n > 1) n -= 1 + (seed >> 20) % (n - 1); /* cut short */
      if (len + n + 3 > sizeof line) break;
      memcpy(line + len, piece, n);
      if (how == 1) line[len + (seed >> 20) % n] ^= 0x20; /* a byte's case changed */
      len += n;
      if (how == 2) line[len++] = (char)('A' + (seed >> 24) % 26);
    }
    seed = seed * 1103515245u + 12345u;
    size_t off = (seed >> 16) % 8; /* a suffix of it: every alignment */
    if (off > len) off = len;
    const char *l = line + off;
    size_t n = len - off;
    line_signal want = ref_classify(NULL, l, n), got = classify_line(NULL, l, n);
    line_signal want_own = ref_classify(&own, l, n), got_own = classify_line(&own, l, n);
    if (want != LINE_PLAIN) signals++;
    if (want != got || want_own != got_own) {
      if (mismatches++ < 5)
        fprintf(stderr, "line [%.*s]: %d/%d expected %d/%d\n", (int)n, l, got, got_own, want,
                want_own);
    }
  }
  CHECK_INT(mismatches, 0);
  CHECK(signals > 10000); /* the lines reached every signal, not only plain ones */
  /* Anchors at the first and last byte, in the 8-byte loop and in its tail. */
  for (size_t pad = 0; pad < 17; pad++) {
    char buf[64];
    memset(buf, 'z', pad);
    memcpy(buf + pad, "NCCL WARN out of memory", 23);
    CHECK_INT(classify_line(NULL, buf, pad + 23), LINE_OOM_SOFT);
    CHECK_INT(classify_line(NULL, buf, pad + 22), LINE_PLAIN); /* "memor" */
    memcpy(buf + pad, "cudaErrorMemoryAllocation", 25);
    CHECK_INT(classify_line(NULL, buf, pad + 25), LINE_OOM_SOFT);
    CHECK_INT(classify_line(NULL, buf + 1, pad + 24), pad > 0 ? LINE_OOM_SOFT : LINE_PLAIN);
  }
}

/* What jaxlib 0.11.2 printed on an H200 when the memory fraction left too little
 * (docs/GPU.md): the BFC allocator's failure after its retries, every 10 s, no step ever.
 * A soft OOM; the benign variant ("The caller indicates that this is not a failure") is not. */
TEST(bfc_allocator_failure_real_text) {
  const char *real =
      "W1126 02:06:18.003658     620 bfc_allocator.cc:598] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 12.00MiB (rounded to 12582912) from the lower end requested by "
      "op ";
  CHECK_INT(classify_line(NULL, real, strlen(real)), LINE_OOM_SOFT);
  const char *benign =
      "W tensorflow/core/common_runtime/bfc_allocator.cc:243] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 1.25GiB with freed_by_count=0. The caller indicates that this "
      "is not a failure, but may mean that there could be performance gains if more memory were "
      "available.";
  CHECK_INT(classify_line(NULL, benign, strlen(benign)), LINE_PLAIN);
  const char *prose = "Allocator (pool) has 3 free blocks";
  CHECK_INT(classify_line(NULL, prose, strlen(prose)), LINE_PLAIN);
}

/* Out of time before the first step while allocations failed: OOM, so a strategy learns the
 * memory edge; with steps, or with no allocation failure, a timeout stays a timeout. */
TEST(timeout_before_first_step_with_soft_oom_is_oom) {
  trial_facts f = {.stopped = STOPPED_TIMEOUT, .term_signal = 9, .saw_oom_soft = 1, .min_steps = 2};
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  f.n_steps = 3;
  CHECK_INT(classify_trial(&f), OUTCOME_TIMEOUT);
  f.n_steps = 0;
  f.saw_oom_soft = 0;
  CHECK_INT(classify_trial(&f), OUTCOME_TIMEOUT);
}

/* ---- GPU-only texts, byte for byte from their upstream sources (no GPU here) ---- */

/* NCCL out of memory: NVIDIA/nccl (5067397c) src/include/alloc.h:493
 * WARN("Failed to CUDA calloc %ld bytes", ...) and :520 "Failed to CUDA calloc async %ld
 * bytes", printed by src/debug.cc:348 as "[dev] file:line NCCL WARN msg" after the host:pid:tid
 * prefix; XLA's NCCL status (ToStatus in its NCCL collectives: "%s:%d: NCCL operation %s
 * failed: %s. Last NCCL warning(error) log entry (may be unrelated) '%s'.") carries the same
 * words. A soft OOM: the run's failure decides. */
TEST(nccl_calloc_failure_is_soft_oom) {
  CHECK_INT(line_of("node01:51234:51299 [0] include/alloc.h:493 NCCL WARN Failed to CUDA calloc "
                    "536870912 bytes"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("node01:51234:51299 [3] include/alloc.h:520 NCCL WARN Failed to CUDA calloc "
                    "async 2432 bytes"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("jax.errors.JaxRuntimeError: INTERNAL: external/xla/xla/backends/gpu/"
                    "collectives/nccl_communicator.cc:116: NCCL operation ncclCommInitRankConfig("
                    "&comm, nranks, id, rank, &config) failed: unhandled cuda error (run with "
                    "NCCL_DEBUG=INFO for details). Last NCCL warning(error) log entry (may be "
                    "unrelated) 'Failed to CUDA calloc 6291456 bytes'."),
            LINE_OOM_SOFT);
  /* NCCL's INFO line for a calloc that worked is plain. */
  CHECK_INT(line_of("node01:51234:51299 [0] NCCL INFO include/alloc.h:499 Cuda Calloc Size 2097152 "
                    "pointer 0x7f1c2a000000 memType 0"),
            LINE_PLAIN);
  trial_facts f = {.exit_code = 1, .saw_oom_soft = 1, .min_steps = 2};
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
}

/* NCCL refusing NCCL_PROTO / NCCL_ALGO: NVIDIA/nccl src/graph/tuning.cc:109 (parseList)
 * WARN("Unrecognized element token \"%s\" when parsing \"%s\"", elem, str) and ncclInvalidUsage;
 * the prefix twin at :121. Its own test (test/unit, protoBad) expects "NCCL WARN Unrecognized
 * element token" for NCCL_PROTO=bad_value. */
TEST(nccl_proto_token_is_invalid) {
  CHECK_INT(line_of("node01:51234:51299 [0] graph/tuning.cc:109 NCCL WARN Unrecognized element "
                    "token \"LL256\" when parsing \"LL,LL256,SIMPLE\""),
            LINE_INVALID);
  CHECK_INT(line_of("node01:51234:51299 [0] graph/tuning.cc:121 NCCL WARN Unrecognized prefix "
                    "token \"allgathr\" when parsing \"allgathr:LL128\""),
            LINE_INVALID);
  /* The same words from another program do not say "when parsing". */
  CHECK_INT(line_of("warning: Unrecognized element token \"Xq\" in formula"), LINE_PLAIN);
}

/* NVLS forced where it cannot work: NVIDIA/nccl src/transport/nvls.cc:376. Refused even when
 * the CUDA error is 2 'out of memory' (pytorch reports): the text says NVLS is unusable on
 * this system and names NCCL_NVLS_ENABLE=0, so the configuration, not the memory, is at fault
 * (without this rule "NCCL WARN ... out of memory" made it a soft OOM). */
TEST(nvls_bind_failure_is_invalid) {
  CHECK_INT(line_of("node01:51234:51299 [0] transport/nvls.cc:376 NCCL WARN Failed to bind NVLink "
                    "SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation "
                    "cannot be performed in the present state'."),
            LINE_INVALID);
  CHECK_INT(line_of("node01:51234:51299 [0] transport/nvls.cc:376 NCCL WARN Failed to bind NVLink "
                    "SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of "
                    "memory'."),
            LINE_INVALID);
  /* Its second and third lines (the message holds "\n") are plain. */
  CHECK_INT(line_of("This is usually caused by a system or configuration error in the Fabric "
                    "Manager or NVSwitches."),
            LINE_PLAIN);
  CHECK_INT(line_of("Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the "
                    "future."),
            LINE_PLAIN);
}

/* cuDNN and cuBLAS handles. openxla/xla xla/stream_executor/cuda/cuda_dnn.cc,
 * CudnnSupport::Init: LOG(ERROR) << "Could not create cudnn handle: " << CudnnStatusToString(
 * status); then "Memory usage: N bytes free, M bytes total."; CUDNN_STATUS_NOT_INITIALIZED is
 * followed by the driver version instead. xla/stream_executor/cuda/cuda_blas.cc,
 * CUDABlas::Init: LOG(ERROR) << "failed to create cublas handle: " << ToString(ret); and for
 * CUBLAS_STATUS_NOT_INITIALIZED kCublasNotInitializedExplanation: "Failure to initialize
 * cublas may be due to OOM (cublas needs some free memory when you initialize it, and your
 * deep-learning framework may have preallocated more than its fair share), or may be because
 * this binary was not built with support for the GPU in your machine." XLA's own reading puts
 * memory first, so both are soft OOMs: OOM when the run then fails, nothing when it recovers.
 * cuDNN's internal error at handle creation comes with the free memory, its usual cause. */
TEST(cudnn_cublas_handles) {
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_dnn.cc:535] Could not create cudnn handle: "
                    "CUDNN_STATUS_INTERNAL_ERROR"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_dnn.cc:535] Could not create cudnn handle: "
                    "CUDNN_STATUS_NOT_INITIALIZED"),
            LINE_PLAIN);
  CHECK_INT(line_of("E1201 10:00:00.000100   51234 cuda_dnn.cc:539] Memory usage: 1048576 bytes "
                    "free, 85899345920 bytes total."),
            LINE_PLAIN);
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_blas.cc:193] failed to create cublas "
                    "handle: CUBLAS_STATUS_NOT_INITIALIZED"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_blas.cc:193] failed to create cublas "
                    "handle: CUBLAS_STATUS_ALLOC_FAILED"),
            LINE_OOM_SOFT);
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_blas.cc:193] failed to create cublas "
                    "handle: CUBLAS_STATUS_ARCH_MISMATCH"),
            LINE_PLAIN);
  /* With CUDA >= 11.5 the status is cublasGetStatusString's prose (cuda_blas_utils.cc): the
   * explanation that follows it for NOT_INITIALIZED is the soft OOM. */
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_blas.cc:193] failed to create cublas "
                    "handle: the library was not initialized"),
            LINE_PLAIN);
  CHECK_INT(line_of("E1201 10:00:00.000000   51234 cuda_blas.cc:195] Failure to initialize cublas "
                    "may be due to OOM (cublas needs some free memory when you initialize it, and "
                    "your deep-learning framework may have preallocated more than its fair "
                    "share), or may be because this binary was not built with support for the GPU "
                    "in your machine."),
            LINE_OOM_SOFT);
  /* A handle failure, then the process failed: OOM. Then it recovered: ok. */
  trial_facts f = {.exit_code = 1, .saw_oom_soft = 1, .min_steps = 2};
  CHECK_INT(classify_trial(&f), OUTCOME_OOM);
  f.exit_code = 0;
  f.n_steps = 5;
  CHECK_INT(classify_trial(&f), OUTCOME_OK);
}

/* jax and jaxlib refusing a variable, as the pinned jax 0.12.0.1 prints it (produced for real
 * by tests/e2e/test_real_xla.sh; recorded in tests/data/real/): jax/_src/config.py:509, :60
 * and jaxlib/xla_client.py:184, :204. The traceback before the message shows the format
 * strings ("Invalid value \"{default}\"", "{val!r}"), which must stay plain, or the stored
 * reason would be a line of source instead of the message. */
TEST(jax_import_refusals_are_invalid) {
  CHECK_INT(line_of("ValueError: Invalid value \"O4\" for JAX flag jax_optimization_level"),
            LINE_INVALID);
  CHECK_INT(
      line_of("ValueError: Invalid value \"bogus\" for JAX flag jax_default_matmul_precision"),
      LINE_INVALID);
  CHECK_INT(line_of("ValueError: invalid truth value 'maybe' for environment 'JAX_ENABLE_X64'"),
            LINE_INVALID);
  CHECK_INT(line_of("ValueError: XLA_CLIENT_MEM_FRACTION is specified together with "
                    "XLA_PYTHON_CLIENT_MEM_FRACTION. Remove the latter one, it is deprecated."),
            LINE_INVALID);
  CHECK_INT(line_of("ValueError: XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of \"default\", "
                    "\"platform\", \"bfc\", \"cuda_async\", \"vmm\", \"address\", got \"bogus\""),
            LINE_INVALID);
  /* The traceback's source lines. */
  CHECK_INT(
      line_of("    raise ValueError(f\"Invalid value \\\"{default}\\\" for JAX flag {name}\")"),
      LINE_PLAIN);
  CHECK_INT(line_of("    raise ValueError(f\"invalid truth value {val!r} for environment "
                    "{varname!r}\")"),
            LINE_PLAIN);
  CHECK_INT(line_of("        'XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of %s, got \"%s\"'"),
            LINE_PLAIN);
  CHECK_INT(line_of("          'XLA_CLIENT_MEM_FRACTION is specified together '"), LINE_PLAIN);
  /* Look-alikes: another program's truth values, a non-JAX variable. */
  CHECK_INT(line_of("ValueError: invalid truth value 'maybe'"), LINE_PLAIN);
  CHECK_INT(line_of("ValueError: invalid truth value 'x' for environment 'MY_TOOL_DEBUG'"),
            LINE_PLAIN);
  CHECK_INT(line_of("error: Invalid value \"3\" for option --depth"), LINE_PLAIN);
}

/* None of the new texts is confused with the BFC allocator's harmless warning, and that
 * warning stays plain next to them. */
TEST(new_texts_and_the_benign_bfc_warning) {
  const char *benign =
      "W1201 10:00:00.000000   51234 bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 3.37GiB with freed_by_count=0. The caller indicates that this is "
      "not a failure, but this may mean that there could be performance gains if more memory "
      "were available.";
  CHECK_INT(line_of(benign), LINE_PLAIN);
  const char *log =
      "W1201 10:00:00.000000   51234 bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 3.37GiB with freed_by_count=0. The caller indicates that this is "
      "not a failure.\n"
      "node01:51234:51299 [0] graph/tuning.cc:109 NCCL WARN Unrecognized element token \"LL256\" "
      "when parsing \"LL256\"\n";
  CHECK_INT(worst_of(log), LINE_INVALID);
  const char *oom_log =
      "W1201 10:00:00.000000   51234 bfc_allocator.cc:291] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 3.37GiB with freed_by_count=0. The caller indicates that this is "
      "not a failure.\n"
      "node01:51234:51299 [0] include/alloc.h:493 NCCL WARN Failed to CUDA calloc 536870912 "
      "bytes\n";
  CHECK_INT(worst_of(oom_log), LINE_OOM_SOFT);
}
