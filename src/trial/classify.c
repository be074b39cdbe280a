/* Outcome classification: the one place that knows which XLA/JAX/CUDA/NCCL texts mean
 * out-of-memory or a refused configuration, and how the facts about a finished trial
 * become exactly one outcome. Pure functions over bytes and structs: must not touch
 * processes, the loop, the store or Lua. Patterns match the message text, never the
 * exception class, which JAX has renamed (XlaRuntimeError -> JaxRuntimeError). */
#include "classify.h"

#include <stdint.h>
#include <string.h>

static const char *const outcome_names[OUTCOME_COUNT] = {
    "running",   "ok",     "oom",         "invalid", "timeout", "crash",
    "no_metric", "pruned", "interrupted", "lost",    "wrong",
};

const char *outcome_name(outcome o) {
  return (o >= 0 && o < OUTCOME_COUNT) ? outcome_names[o] : "unknown";
}

int outcome_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < OUTCOME_COUNT; i++)
    if (strcmp(name, outcome_names[i]) == 0) return i;
  return -1;
}

int outcome_is_final(outcome o) {
  return o != OUTCOME_RUNNING && o != OUTCOME_INTERRUPTED && o != OUTCOME_LOST && o >= 0 &&
         o < OUTCOME_COUNT;
}

/* Substring search bounded by LEN (not strstr: lines may hold NUL bytes and need no
 * terminator; memmem is a GNU extension). memchr finds candidate first bytes quickly.
 * An empty needle matches nothing, or one empty pattern would match every line. */
static int has(const char *line, size_t len, const char *needle) {
  size_t n = strlen(needle);
  if (n == 0) return 0;
  const char *p = line, *end = line + len;
  while ((size_t)(end - p) >= n && (p = memchr(p, needle[0], (size_t)(end - p) - n + 1))) {
    if (memcmp(p, needle, n) == 0) return 1;
    p++;
  }
  return 0;
}

static int has_any(const char *line, size_t len, const char *const *needles, int n) {
  for (int i = 0; i < n; i++)
    if (needles && needles[i] && has(line, len, needles[i])) return 1;
  return 0;
}

/* XLA's fatal out-of-memory errors. All arrive as "RESOURCE_EXHAUSTED: ..." in the final
 * exception; "Out of memory while trying to allocate" is XLA's own wording and is fatal
 * even when a wrapper dropped the status prefix. Its host twin, "Out of host memory while
 * trying to allocate N bytes. Please set the environment variable
 * XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB ...", comes from the same function
 * (MemoryAllocationError in openxla/xla xla/stream_executor/integrations/
 * tf_allocator_adapter.cc) when a pinned-host allocation fails: an OOM as well. */
static int is_oom_fatal(const char *line, size_t len) {
  if (has(line, len, "Out of memory while trying to allocate")) return 1;
  if (has(line, len, "Out of host memory while trying to allocate")) return 1;
  if (!has(line, len, "RESOURCE_EXHAUSTED")) return 0;
  /* The TPU compiler's "Ran out of memory in memory space hbm" is the same failure. */
  static const char *const with_status[] = {
      "RESOURCE_EXHAUSTED: Out of memory",
      "Failed to allocate request for",
      "Ran out of memory in memory space",
  };
  return has_any(line, len, with_status, 3);
}

/* CUDA/cuBLAS/cuDNN/NCCL allocation failures. XLA retries or falls back after several of
 * them (convolution autotuning), so they mean OOM only if the process then fails. */
static int is_oom_soft(const char *line, size_t len) {
  static const char *const soft[] = {
      "CUDA_ERROR_OUT_OF_MEMORY",
      "CUBLAS_STATUS_ALLOC_FAILED",
      "CUDNN_STATUS_ALLOC_FAILED",
      "cudaErrorMemoryAllocation",
  };
  if (has_any(line, len, soft, 4)) return 1;
  /* NCCL's own allocation failure, "Failed to CUDA calloc N bytes" (and "... calloc async N
   * bytes"): NVIDIA/nccl src/include/alloc.h:493 and :520, WARN(...) printed by src/debug.cc
   * as "host:pid:tid [dev] include/alloc.h:493 NCCL WARN Failed to CUDA calloc ..."; the same
   * words reach XLA's error through ncclGetLastError without the prefix. */
  if (has(line, len, "Failed to CUDA calloc ")) return 1;
  /* cuDNN could not start: "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
   * then "Memory usage: N bytes free, M bytes total." (openxla/xla xla/stream_executor/cuda/
   * cuda_dnn.cc, CudnnSupport::Init): cuDNN's internal error at handle creation is memory
   * in practice (its allocations are the only fallible step). CUDNN_STATUS_NOT_INITIALIZED
   * there is a driver problem and is not matched. */
  if (has(line, len, "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR")) return 1;
  /* cuBLAS could not start: "failed to create cublas handle: " << ToString(status), and for
   * CUBLAS_STATUS_NOT_INITIALIZED XLA's own reading of it, "Failure to initialize cublas may be
   * due to OOM (cublas needs some free memory when you initialize it, ...), or may be because
   * this binary was not built with support for the GPU in your machine." (openxla/xla
   * xla/stream_executor/cuda/cuda_blas.cc, kCublasNotInitializedExplanation and
   * CUDABlas::Init). Memory is the first cause it names, so it is a soft OOM: it counts only
   * when the run then fails. ToString is the status's name in older XLA and, with CUDA >=
   * 11.5, cublasGetStatusString's prose (cuda_blas_utils.cc); the prose holds no capital for
   * the pre-filter below, so for it the explanation line is what counts. */
  if (has(line, len, "failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED")) return 1;
  if (has(line, len, "Failure to initialize cublas may be due to OOM")) return 1;
  /* NCCL: "NCCL WARN Cuda failure 'out of memory'" (older) / "Cuda failure 2 'out of memory'". */
  if (has(line, len, "'out of memory'") && has(line, len, "Cuda failure")) return 1;
  if (has(line, len, "NCCL WARN") && has(line, len, "out of memory")) return 1;
  /* XLA's BFC allocator when an allocation failed after its retries: "Allocator (GPU_0_bfc)
   * ran out of memory trying to allocate 12.00MiB (rounded to 12582912) from the lower end
   * requested by op" (xla/tsl/framework/bfc_allocator.cc; jaxlib 0.11.2 printed it from
   * bfc_allocator.cc:598 on an H200, docs/GPU.md). The caller may recover (autotuning); with
   * too little memory it is all a run prints, every 10 s, and no step comes. */
  return has(line, len, "Allocator (") && has(line, len, ") ran out of memory trying to allocate");
}

/* The BFC allocator's warning says in so many words that it is not a failure. */
static int is_benign_oom(const char *line, size_t len) {
  return has(line, len, "The caller indicates that this is not a failure");
}

/* jax and jaxlib refusing a variable at import or backend start: each raises ValueError and
 * the process exits 1 before its first step (Python prints the exception last, after a
 * traceback whose source lines hold the message's format string, never its text: each test
 * below needs bytes that only the formatted message has, e.g. the quote after "value ").
 * - jax/_src/config.py (jax 0.12.0.1): enum, optional enum, int and float flags,
 *   raise ValueError(f"Invalid value \"{default}\" for JAX flag {name}") (:509, :573, :642,
 *   :711, :763), e.g. JAX_OPTIMIZATION_LEVEL=O4; a bool flag's variable,
 *   raise ValueError(f"invalid truth value {val!r} for environment {varname!r}") (:60),
 *   e.g. JAX_ENABLE_X64=maybe;
 * - jaxlib/xla_client.py generate_pjrt_gpu_plugin_options (:184, :204), which the CUDA plugin
 *   calls first (jax-ml/jax plugins/cuda/__init__.py, initialize): both memory fractions set,
 *   and an XLA_PYTHON_CLIENT_ALLOCATOR outside its list. */
static int is_env_refusal(const char *line, size_t len) {
  if (has(line, len, "Invalid value \"") && has(line, len, "\" for JAX flag ")) return 1;
  if (has(line, len, "invalid truth value '") && has(line, len, "' for environment 'JAX_"))
    return 1;
  return has(line, len,
             "XLA_CLIENT_MEM_FRACTION is specified together with "
             "XLA_PYTHON_CLIENT_MEM_FRACTION") ||
         has(line, len, "XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of \"");
}

/* NCCL refusing its variables or the configuration they force (NVIDIA/nccl at 5067397c):
 * - src/graph/tuning.cc:109 (parseList, which reads NCCL_PROTO and NCCL_ALGO):
 *   WARN("Unrecognized element token \"%s\" when parsing \"%s\"", ...) and, for a
 *   "func:" prefix it does not know, "Unrecognized prefix token" (:121); both end the
 *   communicator's set-up with ncclInvalidUsage;
 * - src/transport/nvls.cc:376: "Failed to bind NVLink SHARP (NVLS) Multicast memory of size N
 *   : CUDA error E '...'. This is usually caused by a system or configuration error in the
 *   Fabric Manager or NVSwitches. Disable NVLS (NCCL_NVLS_ENABLE=0) ...": NVLS (forced on by
 *   NCCL_NVLS_ENABLE=1) cannot work on this system, whatever CUDA error it names. */
static int is_nccl_refusal(const char *line, size_t len) {
  if ((has(line, len, "Unrecognized element token \"") ||
       has(line, len, "Unrecognized prefix token \"")) &&
      has(line, len, "\" when parsing \""))
    return 1;
  return has(line, len, "Failed to bind NVLink SHARP (NVLS) Multicast memory");
}

/* XLA refusing XLA_FLAGS. Each is fatal in today's XLA (xla/parse_flags_from_env.cc):
 * - an unknown flag: LOG(QFATAL) << "Unknown flag" << (n > 1 ? "s" : "") << " in XLA_FLAGS: "
 *   (the singular since XLA commit b727c5cd, jax >= 0.5.1; older ones always said "flags",
 *   and some TensorFlow-era builds "flag(s)");
 * - a value that does not parse: tsl's parser logs "Couldn't interpret value V for flag F."
 *   for a bool/int/float (xla/tsl/util/command_line_flags.cc), a custom setter may log its
 *   own "Illegal value for --xla_F. ..." (xla/debug_options_flags.cc, --xla_fuel) or nothing
 *   (an enum such as --xla_gpu_enable_command_buffer), and then QCHECK dies with
 *   "Flag parsing failed." and the usage table. jaxlibs before that QCHECK logged the same
 *   line and ran on with the flag ignored: the configuration was refused all the same. */
static int is_refusal(const char *line, size_t len) {
  static const char *const refusals[] = {
      "Unknown flag in XLA_FLAGS", "Unknown flags in XLA_FLAGS", "Unknown flag(s) in XLA_FLAGS",
      "Flag parsing failed.",      "Illegal value for --xla_",
  };
  if (has_any(line, len, refusals, 5)) return 1;
  /* Other programs say "couldn't interpret value" too: tsl's line always names the flag. */
  if (has(line, len, "Couldn't interpret value ") && has(line, len, " for flag ")) return 1;
  return is_env_refusal(line, len) || is_nccl_refusal(line, len);
}

/* ---- the pre-filter: most lines hold none of the texts above ---- */

/* Every built-in signal needs one of these texts in the line (each test above starts from
 * one of them; the texts they are paired with, " for flag ", "'out of memory'", "out of
 * memory", "invalid truth value '", "\" for JAX flag ", "\" when parsing \"", and the benign
 * BFC warning, only matter once one is there). A line holding none of them is plain as far
 * as the built-in texts go, decided in one pass over its bytes instead of some thirty
 * searches. Each is found by its anchor: a byte at offset AT, all of
 * them uppercase letters from 'A' to 'U', which a log line in lowercase prose holds few of. */
typedef struct {
  const char *text;
  unsigned char len, at;
} primary;

#define PRIMARY(s, at) \
  { s, sizeof s - 1, at }
static const primary primaries[] = {
    PRIMARY("Unknown flag", 0),
    PRIMARY("Flag parsing failed.", 0),
    PRIMARY("Illegal value for --xla_", 0),
    PRIMARY("Couldn't interpret value ", 0),
    PRIMARY("Out of memory while trying to allocate", 0),
    PRIMARY("Out of host memory while trying to allocate", 0),
    PRIMARY("RESOURCE_EXHAUSTED", 0),
    PRIMARY("CUDA_ERROR_OUT_OF_MEMORY", 0),
    PRIMARY("CUBLAS_STATUS_ALLOC_FAILED", 0),
    PRIMARY("CUDNN_STATUS_ALLOC_FAILED", 0),
    PRIMARY("cudaErrorMemoryAllocation", 4), /* its 'E' */
    PRIMARY("Cuda failure", 0),
    PRIMARY("NCCL WARN", 0),
    PRIMARY("Allocator (", 0),
    PRIMARY("Failed to CUDA calloc ", 0),
    PRIMARY("Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR", 0),
    PRIMARY("CUBLAS_STATUS_NOT_INITIALIZED", 0),
    PRIMARY("Invalid value \"", 0),
    PRIMARY("' for environment 'JAX_", 19),                              /* its 'J' */
    PRIMARY("XLA_CLIENT_MEM_FRACTION is specified together with ", 1),   /* its 'L' */
    PRIMARY("XLA_PYTHON_CLIENT_ALLOCATOR env var must be one of \"", 1), /* its 'L' */
    PRIMARY("Unrecognized element token \"", 0),
    PRIMARY("Unrecognized prefix token \"", 0),
    PRIMARY("Failed to bind NVLink SHARP (NVLS) Multicast memory", 0),
    PRIMARY("Failure to initialize cublas may be due to OOM", 0),
};
#undef PRIMARY
enum { N_PRIMARIES = sizeof primaries / sizeof primaries[0], ANCHOR_LO = 'A', ANCHOR_HI = 'U' };

/* The primaries anchored at each byte (bit K: primaries[K], so this follows their order;
 * unit.classify.prefilter_agrees_with_every_search fails if a primary is not found by its
 * anchor); 0 for every other byte. */
_Static_assert(N_PRIMARIES <= 32, "anchored[] holds 32 bits");
static const uint32_t anchored[256] = {
    ['U'] = 1u << 0 | 1u << 21 | 1u << 22,
    ['F'] = 1u << 1 | 1u << 14 | 1u << 23 | 1u << 24,
    ['I'] = 1u << 2 | 1u << 17,
    ['C'] = 1u << 3 | 1u << 7 | 1u << 8 | 1u << 9 | 1u << 11 | 1u << 15 | 1u << 16,
    ['O'] = 1u << 4 | 1u << 5,
    ['R'] = 1u << 6,
    ['E'] = 1u << 10,
    ['N'] = 1u << 12,
    ['A'] = 1u << 13,
    ['J'] = 1u << 18,
    ['L'] = 1u << 19 | 1u << 20,
};

/* 1 when a primary anchored at the byte LINE[I] starts at LINE[I - at]. */
static int primary_at(const char *line, size_t len, size_t i) {
  for (uint32_t bits = anchored[(unsigned char)line[i]]; bits; bits &= bits - 1) {
    const primary *q = &primaries[__builtin_ctz(bits)];
    if (i < q->at) continue;
    size_t start = i - q->at;
    if (len - start < q->len) continue;
    /* Its first and last bytes before the call: most anchors are a capital in a word. */
    const char *p = line + start;
    if (p[0] == q->text[0] && p[1] == q->text[1] && p[q->len - 1] == q->text[q->len - 1] &&
        memcmp(p, q->text, q->len) == 0)
      return 1;
  }
  return 0;
}

/* Bytes of an 8-byte word (a bitwise test of all eight at once) that may be an anchor:
 * nonzero when some byte is in ANCHOR_LO..ANCHOR_HI ("Determine if a word has a byte
 * between m and n", Sean Eron Anderson's Bit Twiddling Hacks; bytes >= 0x80 never match). */
static uint64_t maybe_anchor(uint64_t x) {
  const uint64_t ones = ~(uint64_t)0 / 255, low7 = ones * 127;
  return ((ones * (127 + ANCHOR_HI + 1) - (x & low7)) & ~x &
          ((x & low7) + ones * (127 - (ANCHOR_LO - 1)))) &
         (ones * 128);
}

static int has_primary(const char *line, size_t len) {
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, line + i, 8);
    if (!maybe_anchor(w)) continue;
    for (size_t j = i; j < i + 8; j++)
      if (anchored[(unsigned char)line[j]] && primary_at(line, len, j)) return 1;
  }
  for (; i < len; i++)
    if (anchored[(unsigned char)line[i]] && primary_at(line, len, i)) return 1;
  return 0;
}

line_signal classify_line(const classify_patterns *p, const char *line, size_t len) {
  if (!line) return LINE_PLAIN;
  if (has_primary(line, len)) {
    if (is_refusal(line, len)) return LINE_INVALID;
    if (!is_benign_oom(line, len)) {
      if (is_oom_fatal(line, len)) return LINE_OOM_FATAL;
      if (is_oom_soft(line, len)) return LINE_OOM_SOFT;
    }
  }
  if (!p) return LINE_PLAIN;
  /* The experiment's own substrings mean what the user says: an OOM pattern stops the
   * trial now, like XLA's fatal text. */
  if (has_any(line, len, p->oom, p->n_oom) && !is_benign_oom(line, len)) return LINE_OOM_FATAL;
  if (has_any(line, len, p->invalid, p->n_invalid)) return LINE_INVALID;
  return LINE_PLAIN;
}

/* Exited on its own with status 0. */
static int exited_clean(const trial_facts *f) {
  return f->term_signal == 0 && f->exit_code == 0;
}

outcome classify_trial(const trial_facts *f) {
  if (!f || f->spawn_failed) return OUTCOME_CRASH;
  if (f->stopped == STOPPED_INTERRUPTED) return OUTCOME_INTERRUPTED;
  if (f->stopped == STOPPED_PRUNED) return OUTCOME_PRUNED;
  /* A refused configuration outranks everything it may cause later (an OOM, a timeout):
   * it must never be retried or modelled as slow. */
  if (f->saw_invalid || f->stopped == STOPPED_INVALID) return OUTCOME_INVALID;
  if (f->stopped == STOPPED_OOM || f->saw_oom_fatal) return OUTCOME_OOM;
  /* Out of time before its first step while allocations kept failing: the memory, not the
   * speed (jaxlib 0.11.2 with XLA_CLIENT_MEM_FRACTION=0.01 logged the BFC allocator's failure
   * every 10 s and never ended, docs/GPU.md). A strategy must learn it as OOM. */
  if (f->stopped == STOPPED_TIMEOUT)
    return f->saw_oom_soft && f->n_steps == 0 ? OUTCOME_OOM : OUTCOME_TIMEOUT;
  if (exited_clean(f)) {
    /* min_steps <= 0 would call a run with no step time "ok": one step is the floor. */
    int need = f->min_steps > 0 ? f->min_steps : 1;
    return f->n_steps >= need ? OUTCOME_OK : OUTCOME_NO_METRIC;
  }
  /* It failed. A soft allocation failure before the failure is the likely cause. */
  if (f->saw_oom_soft) return OUTCOME_OOM;
  /* Everything else is a crash, a bare SIGKILL included: it may be the kernel's OOM
   * killer, but kill -9 looks the same, and a false OOM would teach the strategy wrongly. */
  return OUTCOME_CRASH;
}
