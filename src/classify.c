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
  return has(line, len, "Couldn't interpret value ") && has(line, len, " for flag ");
}

/* ---- the pre-filter: most lines hold none of the texts above ---- */

/* Every built-in signal needs one of these texts in the line (each test above starts from
 * one of them; the texts they are paired with, " for flag ", "'out of memory'", "out of
 * memory", and the benign BFC warning, only matter once one is there). A line holding none
 * of them is plain as far as the built-in texts go, decided in one pass over its bytes
 * instead of some twenty searches. Each is found by its anchor: a byte at offset AT, all of
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
};
#undef PRIMARY
enum { N_PRIMARIES = sizeof primaries / sizeof primaries[0], ANCHOR_LO = 'A', ANCHOR_HI = 'U' };

/* The primaries anchored at each byte (bit K: primaries[K], so this follows their order;
 * unit.classify.prefilter_agrees_with_every_search fails if a primary is not found by its
 * anchor); 0 for every other byte. */
_Static_assert(N_PRIMARIES <= 16, "anchored[] holds 16 bits");
static const uint16_t anchored[256] = {
    ['U'] = 1 << 0,          ['F'] = 1 << 1,
    ['I'] = 1 << 2,          ['C'] = 1 << 3 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 11,
    ['O'] = 1 << 4 | 1 << 5, ['R'] = 1 << 6,
    ['E'] = 1 << 10,         ['N'] = 1 << 12,
    ['A'] = 1 << 13,
};

/* 1 when a primary anchored at the byte LINE[I] starts at LINE[I - at]. */
static int primary_at(const char *line, size_t len, size_t i) {
  for (unsigned bits = anchored[(unsigned char)line[i]]; bits; bits &= bits - 1) {
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
