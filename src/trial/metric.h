/* How a sweep's values read to its user (see metric.c). Pure functions. */
#ifndef FLAGTUNE_METRIC_H
#define FLAGTUNE_METRIC_H

#include <stddef.h>

/* 1 when a sweep's options (sweeps.options_json, as sweep_options_json writes it) say
 * metric.better = "higher"; 0 otherwise, NULL and unreadable JSON included. */
int metric_higher(const char *options_json);

/* The number the user's metric printed for the stored cost VALUE: the value itself (ms) for
 * a step time, 1000 / VALUE (a rate per second) when HIGHER. NaN stays NaN. */
double metric_shown(double value, int higher);

/* VALUE as the user reads it into BUF (N bytes): "412.30 ms", or "1234.50/s" when HIGHER;
 * "-" for NaN. */
void metric_format(char *buf, size_t n, double value, int higher);

#endif
