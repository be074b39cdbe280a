#!/usr/bin/env python3
"""Runs a command and reports its own CPU time apart from its children's, its wall time and
its peak RSS (bench helper). The process is waited for without being reaped (WNOWAIT), so
/proc/PID/stat still holds its own utime/stime (fields 14, 15) and its reaped children's
(16, 17): flagtune's CPU is told apart from the trials' it ran.

usage: selfcpu.py [--label L] COMMAND ARGS...   prints one line: label, self and children CPU ms
(each also split into user and system time), its own minor page faults, wall ms, peak RSS (VmHWM, sampled every 50 ms); SELFCPU_RSS_LOG=FILE writes 'seconds rss_kib'.
"""
import os, subprocess, sys, time
args = sys.argv[1:]
label = None
if args[:1] == ["--label"]:
    label, args = args[1], args[2:]
tick = os.sysconf("SC_CLK_TCK")
t0 = time.perf_counter()
p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
hwm, rss, samples = 0, 0, []  # VmHWM (peak RSS) of the process itself, sampled while it runs
while os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is None:
    try:
        with open("/proc/%d/status" % p.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"): hwm = max(hwm, int(line.split()[1]))
                if line.startswith("VmRSS:"): rss = int(line.split()[1])
        samples.append((time.perf_counter() - t0, rss))
    except OSError:
        pass
    time.sleep(0.05)
wall = (time.perf_counter() - t0) * 1e3
with open("/proc/%d/stat" % p.pid) as f:
    fields = f.read().rsplit(")", 1)[1].split()
# fields[0] is field 3 (state): field N is fields[N - 3]
self_ms = (int(fields[11]) + int(fields[12])) * 1e3 / tick
child_ms = (int(fields[13]) + int(fields[14])) * 1e3 / tick
ms = [int(fields[i]) * 1e3 / tick for i in (11, 12, 13, 14)]  # utime stime cutime cstime
minflt = int(fields[7])  # field 10: its own minor page faults (children's: field 11)
_, status, ru = os.wait4(p.pid, 0)
print("%s self_cpu_ms=%.0f (user %.0f sys %.0f) children_cpu_ms=%.0f (user %.0f sys %.0f) "
      "minflt=%d wall_ms=%.0f peak_rss_mib=%.1f exit=%d" % (
    label or os.path.basename(args[0]), self_ms, ms[0], ms[1], child_ms, ms[2], ms[3], minflt, wall, hwm / 1024,
    os.waitstatus_to_exitcode(status)))
if os.environ.get("SELFCPU_RSS_LOG"):  # RSS over time, for growth per trial
    with open(os.environ["SELFCPU_RSS_LOG"], "w") as f:
        for t, r in samples: f.write("%.2f %d\n" % (t, r))
