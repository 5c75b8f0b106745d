#!/usr/bin/env bash
# A Reshard cluster on this machine for demos and tests: one reshard-planner
# (which serves the Coordinator) and N reshard-agent processes of one job,
# all on 127.0.0.1: Gloo agents, or with --backend nccl NCCL agents, rank r
# on GPU r mod the GPU count (nvidia-smi -L). Where the agents outnumber
# the GPUs each gets its own NCCL host identity and the loopback socket
# transport (docs/notes/2026-11-27-gpu-device-path.md, "On a GPU: the device path end to end"): correct, not fast.
#
#   scripts/local-cluster.sh start N [--job NAME] [--dir STATE_DIR]
#                                    [--backend gloo|nccl]
#                                    [--hosts H [--inter_mbit X]]
#                                    [--job_token_file F] [--tls] [--metrics]
#                                    [--tensors] [--max_run_bytes B]
#   scripts/local-cluster.sh restart RANK [--dir STATE_DIR]
#   scripts/local-cluster.sh stop [--dir STATE_DIR]
#   scripts/local-cluster.sh status [--dir STATE_DIR]
#   scripts/local-cluster.sh exec [--dir STATE_DIR] -- COMMAND [ARGS...]
#
# With --hosts H the N ranks are spread over H emulated hosts, N/H each
# (ranks h*N/H.. on host h, so a mesh's outermost dim of size H is the
# hosts): one network namespace per host behind a switch namespace, the
# host's egress limited to X Mbit/s (scripts/emulated-network.sh; needs
# CAP_NET_ADMIN). The planner listens in the switch namespace, where
# `exec` runs a command (reshardctl) that must reach it; without --hosts
# `exec` just runs it. `stop` also deletes the namespaces, and a failed
# `start` removes everything it created.
#
# `start` prints the --server address to use (the only line on stdout) once
# the job is ready. The planner gets an admin token of its own (random, in
# STATE_DIR/admin-token) and the job the token issued for it (reshardctl job
# token; STATE_DIR/job-token), which every call on the job presents:
# `exec` passes it to its command as $RESHARD_JOB_TOKEN; elsewhere use
# `reshardctl --job_token_file STATE_DIR/job-token`; --job_token_file F
# also writes the token to F. --tls makes a CA and certificates
# (STATE_DIR/tls, scripts/tls-certs.sh, 30 days) and serves mutual TLS:
# the planner asks for client certificates of that CA, the agents present
# one, and `exec` passes reshardctl's TLS flags as $RESHARD_TLS_FLAGS
# (`reshardctl $RESHARD_TLS_FLAGS ...`; not with --hosts). --metrics
# serves Prometheus metrics on port 0, the ports in STATE_DIR/
# planner.metrics-port and agent-R.metrics-port. --tensors serves each
# agent's local endpoint at STATE_DIR/agent-R.sock, where rank R's
# processes register the tensors `job run --tensor` moves (the socket's
# path must stay under 108 bytes). --max_run_bytes B gives every agent
# that bound (its own flag; default: the agent's). `restart RANK` stops
# rank RANK's agent (SIGTERM) and starts it again with the same flags,
# then waits for the job to be ready. The state directory ($RESHARD_CLUSTER_DIR, else
# /tmp/reshard-cluster-$USER) holds the PIDs, the port and the logs; `stop`
# signals exactly the PIDs recorded there (SIGTERM, then SIGKILL after a
# bounded wait) and removes the state. Binaries come from $RESHARD_BUILD
# (default build/), or all three from the folder $RESHARD_BIN (a GPU
# bundle's bin/, scripts/gpu-bundle.sh). Bounds: RESHARD_CLUSTER_START_SECONDS (30) for the job
# to become ready, RESHARD_CLUSTER_STOP_SECONDS (15) for processes to exit.
set -u

BUILD="${RESHARD_BUILD:-build}"
PLANNER="$BUILD/server/reshard-planner"
AGENT="$BUILD/agent/reshard-agent"
CTL="$BUILD/client/reshardctl"
if [ -n "${RESHARD_BIN:-}" ]; then
  PLANNER="$RESHARD_BIN/reshard-planner"
  AGENT="$RESHARD_BIN/reshard-agent"
  CTL="$RESHARD_BIN/reshardctl"
fi
START_SECONDS="${RESHARD_CLUSTER_START_SECONDS:-30}"
STOP_SECONDS="${RESHARD_CLUSTER_STOP_SECONDS:-15}"

usage() {
  echo "usage:" >&2
  sed -n '/^#   scripts.local-cluster.sh start/,/^#   scripts.local-cluster.sh exec/p' "$0" | sed 's/^# \{0,3\}//' >&2
  exit 2
}
# shellcheck source=emulated-network.sh
. "$(dirname "$0")/emulated-network.sh"
# shellcheck source=tls-certs.sh
. "$(dirname "$0")/tls-certs.sh"

die() { echo "local-cluster: $*" >&2; exit 1; }
say() { echo "local-cluster: $*" >&2; }

# Alive and not a zombie (an orphan whose parent has not reaped it yet).
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  local state
  state=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# PID NAME: still the process we started (guards against reused PIDs).
ours() {
  alive "$1" && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -q -- "$2"
}

# `pids` lines are "PID NAME"; prints the PIDs of NAME still ours.
live_pids() {
  local pid name rank
  while read -r pid name rank; do
    if ours "$pid" "$name" && { [ -z "${1:-}" ] || [ "$name" = "$1" ]; }; then
      echo "$pid"
    fi
  done < "$DIR/pids"
}

# Waits up to $2 seconds for the PIDs in $1 to exit; prints survivors.
wait_gone() {
  local pids="$1" left deadline=$((SECONDS + $2))
  while :; do
    left=""
    for p in $pids; do alive "$p" && left="$left $p"; done
    if [ -z "$left" ] || [ $SECONDS -ge $deadline ]; then
      echo "$left"
      return
    fi
    sleep 0.1
  done
}

# SIGTERM to the agents, then the planner (it drains its calls; the agents'
# dispatch streams would hold it), SIGKILL for whatever is left. With
# `keep_logs` (a failed start) the logs stay for reading.
stop_cluster() {
  if [ ! -f "$DIR/pids" ]; then
    net_remove
    say "no cluster state in $DIR"
    return 0
  fi
  local name pids left
  for name in reshard-agent reshard-planner; do
    pids=$(live_pids "$name")
    [ -n "$pids" ] || continue
    # shellcheck disable=SC2086  # a list of PIDs, split on purpose
    kill -TERM $pids 2>/dev/null
    left=$(wait_gone "$pids" "$STOP_SECONDS")
    if [ -n "${left// /}" ]; then
      say "SIGKILL to$left ($name did not exit within ${STOP_SECONDS}s)"
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null
      left=$(wait_gone "$left" 5)
      [ -z "${left// /}" ] || say "still alive after SIGKILL:$left"
    fi
  done
  net_remove || say "could not delete every namespace listed in $DIR/netns"
  rm -f "$DIR/pids" "$DIR/port" "$DIR/server" "$DIR/job" "$DIR/admin-token" \
    "$DIR/job-token" "$DIR/config" "$DIR"/*.metrics-port "$DIR"/agent-*.sock
  rm -rf "$DIR/tls"
  if [ "${1:-}" = keep_logs ]; then
    say "stopped; logs kept in $DIR"
    return 0
  fi
  rm -f "$DIR"/*.log
  rmdir "$DIR" 2>/dev/null || true
  say "stopped"
}

# A start that failed stops what it started; a restart that failed leaves
# the cluster as it is.
fail_start() {
  say "$1"
  for log in "$DIR"/*.log; do
    [ -s "$log" ] && { echo "--- $log" >&2; tail -n 5 "$log" >&2; }
  done
  [ "${RESTARTING:-0}" = 1 ] && exit 1
  stop_cluster keep_logs
  exit 1
}

wait_port() {
  local planner_pid="$1" deadline=$((SECONDS + START_SECONDS))
  until [ -s "$DIR/port" ]; do
    alive "$planner_pid" || fail_start "reshard-planner exited"
    [ $SECONDS -lt $deadline ] || fail_start "no port from reshard-planner in ${START_SECONDS}s"
    sleep 0.1
  done
}

# reshardctl's TLS flags for this cluster ("" without --tls).
tls_flags() {
  [ -d "$DIR/tls" ] || return 0
  echo "--tls_ca $DIR/tls/ca.pem --tls_cert $DIR/tls/client.pem --tls_key $DIR/tls/client.key"
}

# Ready: the job exists, says ready and every agent's stream is open.
wait_ready() {
  local server="$1" job="$2" n="$3" out deadline=$((SECONDS + START_SECONDS))
  while :; do
    # shellcheck disable=SC2046  # the flags, split on purpose
    out=$(in_cluster "$CTL" --server "$server" $(tls_flags) job show "$job" --json 2>/dev/null)
    if contains_all "$out" '"state": "ready"' && \
       [ "$(grep -o '"connected": true' <<<"$out" | wc -l)" -eq "$n" ]; then
      return 0
    fi
    [ -n "$(live_pids reshard-planner)" ] || fail_start "reshard-planner exited"
    [ "$(live_pids reshard-agent | wc -l)" -eq "$n" ] || fail_start "an agent exited"
    [ $SECONDS -lt $deadline ] || fail_start "job $job not ready within ${START_SECONDS}s"
    sleep 0.2
  done
}
contains_all() { case "$1" in *"$2"*) return 0 ;; *) return 1 ;; esac; }

# Agent r's environment for BACKEND among N agents on GPUS GPUs: with nccl
# and more agents than GPUs, its own NCCL host over loopback sockets.
agent_env() {
  local r="$1" n="$2" gpus="$3"
  [ "$BACKEND" = nccl ] || return 0
  if [ "$n" -gt "$gpus" ]; then
    echo "NCCL_HOSTID=reshard-cluster-$$-$r NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo"
  fi
}

# Runs a command where the planner is reachable (the switch namespace of an
# emulated cluster, else here) with the job's token in $RESHARD_JOB_TOKEN.
in_cluster() {
  net_load
  local token=""
  [ -r "$DIR/job-token" ] && token=$(cat "$DIR/job-token")
  if [ -n "$NET_ID" ]; then
    RESHARD_JOB_TOKEN="$token" RESHARD_TLS_FLAGS="$(tls_flags)" \
      ip netns exec "$(net_ns_switch)" "$@"
  else
    RESHARD_JOB_TOKEN="$token" RESHARD_TLS_FLAGS="$(tls_flags)" "$@"
  fi
}

# The planner's admin token (random) and the token it issues for job $1,
# both readable by this user only.
make_tokens() {
  local job="$1"
  (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$DIR/admin-token") ||
    fail_start "cannot write $DIR/admin-token"
  (umask 077 && "$CTL" --admin_token_file "$DIR/admin-token" job token "$job" \
     > "$DIR/job-token") || fail_start "reshardctl job token $job failed"
  if [ -n "$TOKEN_FILE" ]; then
    (umask 077 && cp "$DIR/job-token" "$TOKEN_FILE") ||
      fail_start "--job_token_file: cannot write $TOKEN_FILE"
  fi
}

# With --tls: a CA, the planner's certificate and the one every client
# (agents, reshardctl) presents, for 30 days.
make_tls() {
  [ "$TLS" = 1 ] || return 0
  mkdir -p "$DIR/tls" && make_ca "$DIR/tls" ca 30 &&
    make_cert "$DIR/tls" server ca 30 && make_cert "$DIR/tls" client ca 30 ||
    fail_start "openssl could not make the certificates ($DIR/tls/openssl.log)"
  chmod 600 "$DIR"/tls/*.key
}

# Host h's namespace prefix for a command ("" without --hosts).
on_host() {
  [ "$HOSTS" -gt 0 ] && echo "ip netns exec $(net_ns_host "$1")"
}

# The emulated network, when asked for; a failed setup removes itself.
make_network() {
  local n="$1"
  [ "$HOSTS" -gt 0 ] || return 0
  [ $((n % HOSTS)) -eq 0 ] || die "--hosts $HOSTS does not divide N=$n"
  net_can_create || die "--hosts needs CAP_NET_ADMIN (ip netns add failed)"
  # The run id: unique among live processes, short enough for 15-char
  # interface and readable namespace names.
  net_create "$$" "$HOSTS" "$INTER_MBIT" ||
    fail_start "could not create the emulated network"
}

# The planner; prints its address once it reports its port. In an emulated
# cluster it listens in the switch namespace, which only the cluster's own
# namespaces reach, so open jobs stay allowed there (the job has a token).
start_planner() {
  local listen=127.0.0.1 ns="" pid
  if [ "$HOSTS" -gt 0 ]; then
    listen=$(net_switch_ip)
    ns="ip netns exec $(net_ns_switch)"
  fi
  # shellcheck disable=SC2086  # an optional command prefix, split on purpose
  local extra=()
  [ "$TLS" = 1 ] && extra+=(--tls_cert "$DIR/tls/server.pem" --tls_key "$DIR/tls/server.key"
    --tls_ca "$DIR/tls/ca.pem")
  [ "$METRICS" = 1 ] && extra+=(--metrics_listen "$listen:0"
    --metrics_port_file "$DIR/planner.metrics-port")
  # shellcheck disable=SC2086
  $ns "$PLANNER" --listen "$listen:0" --port_file "$DIR/port" \
    --drain_seconds 5 --allow_open_jobs=true --admin_token_file "$DIR/admin-token" \
    "${extra[@]}" </dev/null >"$DIR/planner.log" 2>&1 &
  pid=$!
  echo "$pid reshard-planner" >> "$DIR/pids"
  wait_port "$pid"
  echo "$listen:$(cat "$DIR/port")"
}

# Agent r of N on `server` ($BACKEND, sharing=how many share its memory,
# gpus=the GPU count), its PID appended to the state.
start_agent() {
  local r="$1" n="$2" server="$3" job="$4" gpus="$5" sharing="$6" host=0
  local address=127.0.0.1 extra=()
  if [ "$HOSTS" -gt 0 ]; then
    host=$((r / (n / HOSTS)))
    address=$(net_host_ip "$host")
  fi
  [ "$TLS" = 1 ] && extra+=(--tls_ca "$DIR/tls/ca.pem" --tls_cert "$DIR/tls/client.pem"
    --tls_key "$DIR/tls/client.key")
  [ "$METRICS" = 1 ] && extra+=(--metrics_listen "$address:0"
    --metrics_port_file "$DIR/agent-$r.metrics-port")
  rm -f "$DIR/agent-$r.metrics-port"
  [ "$TENSORS" = 1 ] && extra+=(--tensor_socket "$DIR/agent-$r.sock")
  [ -n "$MAX_RUN_BYTES" ] && extra+=(--max_run_bytes "$MAX_RUN_BYTES")
  # shellcheck disable=SC2046,SC2086  # words split on purpose
  $(on_host "$host") env $(agent_env "$r" "$n" "$gpus") "$AGENT" \
    --server "$server" --job "$job" --rank "$r" --world_size "$n" \
    --backend "$BACKEND" --listen_address "$address" --agents_per_host "$sharing" \
    --job_token_file "$DIR/job-token" "${extra[@]}" </dev/null >>"$DIR/agent-$r.log" 2>&1 &
  echo "$! reshard-agent $r" >> "$DIR/pids"
}

# The GPU count (0 for gloo) and how many agents share a memory, for N.
gpu_count() {
  [ "$BACKEND" = nccl ] && { nvidia-smi -L 2>/dev/null | grep -c '^GPU '; return; }
  echo 0
}
sharing_of() {
  local n="$1" gpus="$2"
  # Every agent here shares this machine's memory (emulated hosts too), and
  # with nccl a GPU's: --max_run_bytes auto divides it among them.
  if [ "$gpus" -gt 0 ]; then echo $(((n + gpus - 1) / gpus)); else echo "$n"; fi
}

start_agents() {
  local n="$1" server="$2" job="$3" gpus sharing r
  gpus=$(gpu_count)
  sharing=$(sharing_of "$n" "$gpus")
  for ((r = 0; r < n; ++r)); do
    start_agent "$r" "$n" "$server" "$job" "$gpus" "$sharing"
  done
}

# The cluster's options, for `restart`.
save_config() {
  printf 'N=%s\nJOB=%s\nBACKEND=%s\nHOSTS=%s\nTLS=%s\nMETRICS=%s\nTENSORS=%s\nMAX_RUN_BYTES=%s\n' \
    "$1" "$2" "$BACKEND" "$HOSTS" "$TLS" "$METRICS" "$TENSORS" "$MAX_RUN_BYTES" > "$DIR/config"
}

# Stops rank $1's agent and starts it again with the same flags.
restart_agent() {
  local rank="$1" pid name r left server gpus
  [ -f "$DIR/config" ] || die "no cluster state in $DIR"
  # shellcheck disable=SC1091  # written by save_config
  . "$DIR/config"
  [[ "$rank" =~ ^[0-9]+$ ]] && [ "$rank" -lt "$N" ] ||
    { echo "local-cluster: restart RANK: \"$rank\" is not a rank of 0..$((N - 1))" >&2; exit 2; }
  net_load
  RESTARTING=1
  server=$(cat "$DIR/server")
  while read -r pid name r; do
    [ "$name" = reshard-agent ] && [ "$r" = "$rank" ] && ours "$pid" "$name" || continue
    kill -TERM "$pid" 2>/dev/null
    left=$(wait_gone "$pid" "$STOP_SECONDS")
    [ -z "${left// /}" ] || kill -KILL "$pid" 2>/dev/null
  done < "$DIR/pids"
  grep -v " reshard-agent $rank\$" "$DIR/pids" > "$DIR/pids.new" && mv "$DIR/pids.new" "$DIR/pids"
  gpus=$(gpu_count)
  start_agent "$rank" "$N" "$server" "$JOB" "$gpus" "$(sharing_of "$N" "$gpus")"
  wait_ready "$server" "$JOB" "$N"
  say "rank $rank restarted (PID $(tail -1 "$DIR/pids" | awk '{print $1}')); job $JOB ready"
}

start_cluster() {
  local n="$1" job="$2"
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "local-cluster: start N: \"$n\" is not a positive integer" >&2; exit 2; }
  for bin in "$PLANNER" "$AGENT" "$CTL"; do
    [ -x "$bin" ] || die "$bin not found (build it, or set RESHARD_BUILD)"
  done
  if [ -f "$DIR/pids" ] && [ -n "$(live_pids)" ]; then
    die "a cluster is running from $DIR (stop it first)"
  fi
  mkdir -p "$DIR" || die "cannot create $DIR"
  net_remove || die "namespaces of an earlier cluster in $DIR remain"
  rm -f "$DIR/pids" "$DIR/port" "$DIR/server" "$DIR/job" "$DIR"/*.log
  touch "$DIR/pids"
  [ "$TLS" = 1 ] && [ "$HOSTS" -gt 0 ] &&
    { echo "local-cluster: --tls needs the loopback cluster (no --hosts)" >&2; exit 2; }
  make_tokens "$job"
  make_tls
  save_config "$n" "$job"
  trap '' HUP  # the processes outlive this script and its terminal
  trap 'fail_start "interrupted"' INT TERM
  make_network "$n"
  local server
  server=$(start_planner) || exit 1
  echo "$server" > "$DIR/server"
  echo "$job" > "$DIR/job"
  start_agents "$n" "$server" "$job"
  wait_ready "$server" "$job" "$n"
  trap - INT TERM
  local where="planner on $server"
  [ "$HOSTS" -gt 0 ] && where="$where, $HOSTS hosts of $((n / HOSTS)) ranks, ${INTER_MBIT} Mbit/s between hosts"
  say "job $job ready: $n $BACKEND agents, $where (state in $DIR; its job token: --job_token_file ${TOKEN_FILE:-$DIR/job-token})"
  [ "$TLS" = 1 ] && say "mutual TLS: reshardctl $(tls_flags)"
  [ "$METRICS" = 1 ] && say "metrics: http://$(cut -d: -f1 <<<"$server"):$(cat "$DIR/planner.metrics-port")/metrics (planner); the agents' ports in $DIR/agent-R.metrics-port"
  echo "$server"
}

status_cluster() {
  [ -f "$DIR/pids" ] || { echo "no cluster (state dir $DIR)"; exit 1; }
  local pid name server
  server=$(cat "$DIR/server" 2>/dev/null)
  echo "server: ${server:-unknown}   job: $(cat "$DIR/job" 2>/dev/null)   state: $DIR"
  while read -r pid name rank; do
    if ours "$pid" "$name"; then echo "$pid $name${rank:+ $rank} running"; else echo "$pid $name${rank:+ $rank} gone"; fi
  done < "$DIR/pids"
  # shellcheck disable=SC2046  # the flags, split on purpose
  [ -n "$server" ] && in_cluster "$CTL" --server "$server" $(tls_flags) job list
}

[ $# -ge 1 ] || usage
cmd="$1"; shift
N=""
[ "$cmd" = start ] && { [ $# -ge 1 ] || usage; N="$1"; shift; }
RANK=""
[ "$cmd" = restart ] && { [ $# -ge 1 ] || usage; RANK="$1"; shift; }
TOKEN_FILE=""
TLS=0
METRICS=0
TENSORS=0
MAX_RUN_BYTES=""
JOB=local
BACKEND=gloo
HOSTS=0
INTER_MBIT=0
DIR="${RESHARD_CLUSTER_DIR:-/tmp/reshard-cluster-${USER:-$(id -un)}}"
while [ $# -gt 0 ]; do
  case "$1" in
    --job) [ $# -ge 2 ] || { echo "local-cluster: --job needs a value" >&2; exit 2; }; JOB="$2"; shift 2 ;;
    --dir) [ $# -ge 2 ] || { echo "local-cluster: --dir needs a value" >&2; exit 2; }; DIR="$2"; shift 2 ;;
    --backend)
      case "${2:-}" in
        gloo|nccl) BACKEND="$2"; shift 2 ;;
        *) echo "local-cluster: --backend must be gloo or nccl" >&2; exit 2 ;;
      esac ;;
    --hosts|--inter_mbit)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "local-cluster: $1 needs a non-negative integer" >&2; exit 2; }
      if [ "$1" = --hosts ]; then HOSTS="$2"; else INTER_MBIT="$2"; fi
      shift 2 ;;
    --job_token_file)
      [ $# -ge 2 ] || { echo "local-cluster: --job_token_file needs a value" >&2; exit 2; }
      TOKEN_FILE="$2"; shift 2 ;;
    --tls) TLS=1; shift ;;
    --metrics) METRICS=1; shift ;;
    --tensors) TENSORS=1; shift ;;
    --max_run_bytes)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "local-cluster: --max_run_bytes needs a byte count" >&2; exit 2; }
      MAX_RUN_BYTES="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "local-cluster: unknown argument \"$1\"" >&2; exit 2 ;;
  esac
done
case "$cmd" in
  start) start_cluster "$N" "$JOB" ;;
  restart) restart_agent "$RANK" ;;
  stop) stop_cluster ;;
  status) status_cluster ;;
  exec) [ $# -ge 1 ] || usage; in_cluster "$@" ;;
  *) usage ;;
esac
