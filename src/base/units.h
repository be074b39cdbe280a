/* Units a user writes in an experiment file: byte sizes and durations. Pure functions. */
#ifndef FLAGTUNE_UNITS_H
#define FLAGTUNE_UNITS_H

#include <stdint.h>

/* Parses "512", "64KiB", "436MB", "8GiB", "1.5 GiB" (B, KB/MB/GB/TB/PB/EB = powers of 1000,
 * KiB/MiB/GiB/TiB/PiB/EiB = powers of 1024, case-insensitive suffix) into bytes. Returns 0, or
 * -1 with a short reason in WHY (static text) for anything else, negative or overflowing. */
int units_parse_bytes(const char *s, int64_t *bytes, const char **why);

/* Parses "90", "90s", "20m", "1.5h", "2h30m", "500ms", "1d" into seconds (a bare number is
 * seconds, alone only). Units ms/s/m/h/d, each at most once and largest first; spaces
 * between parts are allowed. Returns 0, or -1 with a short static reason in WHY. */
int units_parse_duration(const char *s, double *seconds, const char **why);

/* Formats bytes for humans in powers of 1024: "512B", "64KiB" (exact), "415.8MiB" (one
 * decimal when not exact). Writes at most N bytes, always terminated when N > 0. */
void units_format_bytes(int64_t bytes, char *buf, int n);

#endif
