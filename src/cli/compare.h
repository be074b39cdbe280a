/* `flagtune compare A B`: two sweeps side by side (see compare.c). */
#ifndef FLAGTUNE_COMPARE_H
#define FLAGTUNE_COMPARE_H

/* Prints the comparison of sweeps REF_A and REF_B (ids, names or DB:SWEEP, see
 * report_sweep_load) of database DB on stdout, as text or JSON. FT_EINPUT for a bad
 * reference (nothing printed). The JSON: {"a": side, "b": side, "baseline_b_vs_a",
 * "best_b_vs_a" ({speedup, lo, hi} or null), "flags" {same, differ, only_a, only_b},
 * "notes" [...]} (docs/REPORT.md). */
int compare_main(const char *db, const char *ref_a, const char *ref_b, int json, char **err);

#endif
