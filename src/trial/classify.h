/* Outcome classification: how a trial ended, decided from facts, in one pure module.
 * Line signals are decided per line as output arrives; the outcome at the end. */
#ifndef FLAGTUNE_CLASSIFY_H
#define FLAGTUNE_CLASSIFY_H

#include <stddef.h>

typedef enum {
  OUTCOME_RUNNING = 0,
  OUTCOME_OK,
  OUTCOME_OOM,
  OUTCOME_INVALID,
  OUTCOME_TIMEOUT,
  OUTCOME_CRASH,
  OUTCOME_NO_METRIC,
  OUTCOME_PRUNED,
  OUTCOME_INTERRUPTED,
  OUTCOME_LOST,
  OUTCOME_WRONG, /* ran ok but computed something else: its loss left the baseline's
                  * (metric.check); never chosen, never exported */
  OUTCOME_COUNT
} outcome;

/* "ok", "oom", ... as stored in the database. */
const char *outcome_name(outcome o);
/* The outcome named NAME, or -1. */
int outcome_from_name(const char *name);
/* 1 when a trial that ended so is finished for good: it counts against the budget and is
 * never re-run. Running, interrupted and lost trials are not (resume re-runs them). */
int outcome_is_final(outcome o);

typedef enum {
  LINE_PLAIN = 0,
  LINE_OOM_FATAL, /* RESOURCE_EXHAUSTED: Out of memory..., Failed to allocate request for,
                     an experiment's own oom pattern: stop now */
  LINE_OOM_SOFT,  /* CUDA_ERROR_OUT_OF_MEMORY, NCCL/cuBLAS "out of memory", NCCL's "Failed
                     to CUDA calloc", cuDNN/cuBLAS handles that could not be created, the
                     BFC allocator's "ran out of memory trying to allocate": OOM only if the
                     process fails, or times out before its first step */
  LINE_INVALID,   /* the configuration was refused: XLA ("Unknown flag in XLA_FLAGS" (or
                     "flags"), "Couldn't interpret value X for flag Y.", "Flag parsing
                     failed."), jax and jaxlib at import (a JAX_* value, both memory
                     fractions, XLA_PYTHON_CLIENT_ALLOCATOR), NCCL (NCCL_PROTO/NCCL_ALGO
                     tokens, NVLS that cannot bind), an experiment's own invalid pattern:
                     stop now */
} line_signal;

/* Extra per-experiment patterns: plain substrings, matched case-sensitively. */
typedef struct {
  const char *const *oom;
  int n_oom;
  const char *const *invalid;
  int n_invalid;
} classify_patterns;

/* What one line says. P may be NULL. Never reads past LEN. */
line_signal classify_line(const classify_patterns *p, const char *line, size_t len);

/* Why the orchestrator stopped the trial, if it did. */
typedef enum {
  STOPPED_NONE = 0,
  STOPPED_OOM,     /* a LINE_OOM_FATAL line was seen */
  STOPPED_INVALID, /* a LINE_INVALID line was seen */
  STOPPED_TIMEOUT,
  STOPPED_PRUNED,
  STOPPED_INTERRUPTED,
} stop_reason;

typedef struct {
  int spawn_failed; /* command not found / not executable */
  long exit_code;   /* valid when term_signal == 0 */
  int term_signal;
  stop_reason stopped;
  int saw_oom_soft; /* a LINE_OOM_SOFT line was seen */
  int saw_invalid;  /* a LINE_INVALID line was seen (even if not stopped for it) */
  int saw_oom_fatal;
  int n_steps;   /* valid step times read */
  int min_steps; /* needed for ok (skip + 1) */
} trial_facts;

outcome classify_trial(const trial_facts *f);

#endif
