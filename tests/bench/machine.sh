# shellcheck shell=bash
# Sourced by the benchmark scripts (scripts/bench-*): the machine and load a figure was measured
# on, so that it can be read beside its floor on any machine (issue 33).
#   bench_machine_header NAME   one line: CPU model (with family, model and stepping: a virtual
#                               machine's model name can be as vague as "AMD EPYC"), cores,
#                               memory, kernel, OS, commit, date (UTC), load average now
#   bench_load                  the load average now (1, 5 and 15 minutes)

bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

bench_machine_header() {
  local cpu memory commit os
  cpu=$(awk -F': *' '/^model name/ {n = $2} /^cpu family/ {f = $2} /^model[[:space:]]*:/ {m = $2}
    /^stepping/ {s = $2} /^$/ {exit} END {printf "%s (family %s, model %s, stepping %s)", n, f, m, s}' /proc/cpuinfo)
  memory=$(awk '/^MemTotal:/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo none)
  if [[ $commit != none ]] && ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit-dirty"; fi
  # shellcheck disable=SC1091
  os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown OS}")
  echo "$1: machine: ${cpu:-unknown CPU}, $(nproc) cores, $memory; kernel $(uname -r); $os;" \
    "commit $commit; $(date -u +%FT%TZ); load average $(bench_load)"
}
