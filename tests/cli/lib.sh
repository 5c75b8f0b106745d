# Shared by the CLI test scripts: `check NAME STATUS` records a failure when
# STATUS is non-zero; `contains TEXT PART` tests for a substring.
fail=0
check() {
  if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
contains() { case "$1" in *"$2"*) return 0 ;; *) return 1 ;; esac; }

# For tests that start processes: each PID goes in the array `pids`
# (`pids+=($!)`), scratch files and `*.log` files in `$dir`. stop_started,
# set as the EXIT trap, stops exactly those processes (TERM, then KILL after
# 5 s), prints the tail of every log when the test failed and removes `$dir`.
stop_started() {
  local pid log
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ "$fail" -ne 0 ]; then
    for log in "$dir"/*.log; do echo "---- $log"; tail -n 20 "$log"; done
  fi
  rm -rf "$dir"
}
die() { echo "FAIL: $1"; fail=1; exit 1; }

# Alive and not a zombie (stopped processes may wait for their reaper).
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  case "$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null)" in
    Z | X | "") return 1 ;;
  esac
}

# wait_for SECONDS COMMAND...: runs COMMAND every 0.2 s until it succeeds;
# status 1 after SECONDS.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.2
  done
}

# start_prometheus BINARY CONFIG: a real Prometheus on loopback with its data
# in $dir/tsdb, added to `pids`; sets prom_port. It has no port-0 option: a
# random port, another one on a bind failure (5 tries). query EXPR runs
# PromQL over its HTTP API.
start_prometheus() {
  local attempt
  for attempt in 1 2 3 4 5; do
    prom_port=$((20000 + RANDOM % 40000))
    "$1" --config.file="$2" --storage.tsdb.path="$dir/tsdb" \
      --storage.tsdb.retention.time=1h --web.listen-address="127.0.0.1:$prom_port" \
      --log.level=warn 2>"$dir/prometheus.log" &
    prom_pid=$!
    pids+=($prom_pid)
    wait_for 20 prometheus_ready_or_dead && prometheus_alive && return 0
  done
  return 1
}
prometheus_alive() { kill -0 "$prom_pid" 2>/dev/null; }
prometheus_ready_or_dead() {
  ! prometheus_alive || curl -sf --max-time 1 "http://127.0.0.1:$prom_port/-/ready" >/dev/null
}
query() {
  curl -sf --max-time 5 "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1"
}

# Test certificates, made by openssl at test time (make_ca, make_cert).
# shellcheck source=../../scripts/tls-certs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/tls-certs.sh"
