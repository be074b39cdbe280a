/* Included once by each test fixture program (flagtune-sim, the unit tests' stub_child): under
 * the sanitizers (FLAGTUNE_SANITIZE) a fixture keeps ASan and UBSan but skips the leak check at
 * exit. The fixtures are the processes the tests start most (every e2e trial is a
 * flagtune-sim), the check costs ~65 ms of a ~95 ms start here (more under load, where it
 * counted in the durations the supervisor's tests measure), and they are not flagtune, which
 * keeps its check. An explicit detect_leaks in ASAN_OPTIONS still wins over this default. */
#ifndef FLAGTUNE_TESTS_NO_LEAK_CHECK_H
#define FLAGTUNE_TESTS_NO_LEAK_CHECK_H

#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "detect_leaks=0";
}
#endif

#endif
