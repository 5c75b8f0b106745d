#!/usr/bin/env bash
# Starts one reshard-agent per GPU of this node: the agent DaemonSet's entry
# point (deploy/kubernetes/agent-daemonset.yaml), also usable on plain hosts.
#
# A DaemonSet gives every node the same pod, so a node learns its ranks here:
# its index in the node list ($RESHARD_NODES_FILE, one node name per line, in
# rank order) times $RESHARD_GPUS_PER_NODE, plus the GPU index. When any agent
# exits, the others are stopped and this script exits with that agent's code,
# so the container restarts and the node rejoins as new incarnations.
#
# Environment: NODE_NAME, RESHARD_NODES_FILE, RESHARD_GPUS_PER_NODE,
# RESHARD_SERVER, RESHARD_JOB (required); RESHARD_BACKEND (gloo),
# RESHARD_LISTEN_ADDRESS (127.0.0.1), RESHARD_METRICS_ADDRESS (0.0.0.0),
# RESHARD_METRICS_BASE_PORT (9400; agent i serves base+i, 0: any free port),
# RESHARD_METRICS_PORT_DIR (if set, agent i writes its port to metrics-i.port),
# RESHARD_AGENT (reshard-agent). Arguments are passed to every agent.
set -uo pipefail

die() { echo "reshard-agent-node: $*" >&2; exit 2; }

for v in NODE_NAME RESHARD_NODES_FILE RESHARD_GPUS_PER_NODE RESHARD_SERVER RESHARD_JOB; do
  [ -n "${!v:-}" ] || die "$v is required"
done
[ -r "$RESHARD_NODES_FILE" ] || die "RESHARD_NODES_FILE: cannot read $RESHARD_NODES_FILE"
[[ "$RESHARD_GPUS_PER_NODE" =~ ^[1-9][0-9]*$ ]] ||
  die "RESHARD_GPUS_PER_NODE: expected a positive integer, got '$RESHARD_GPUS_PER_NODE'"

mapfile -t nodes < <(grep -v '^[[:space:]]*\(#\|$\)' "$RESHARD_NODES_FILE")
node_index=-1
for i in "${!nodes[@]}"; do
  [ "${nodes[$i]}" = "$NODE_NAME" ] && node_index=$i
done
[ "$node_index" -ge 0 ] || die "NODE_NAME: '$NODE_NAME' is not listed in $RESHARD_NODES_FILE"

gpus=$RESHARD_GPUS_PER_NODE
world_size=$((${#nodes[@]} * gpus))
backend=${RESHARD_BACKEND:-gloo}
base_port=${RESHARD_METRICS_BASE_PORT:-9400}
agent=${RESHARD_AGENT:-reshard-agent}

pids=()
stop_all() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; wait; }
trap 'stop_all; exit 143' TERM INT

for ((g = 0; g < gpus; g++)); do
  port=$base_port
  [ "$base_port" -ne 0 ] && port=$((base_port + g))
  args=(--server "$RESHARD_SERVER" --job "$RESHARD_JOB"
        --rank $((node_index * gpus + g)) --world_size "$world_size"
        --backend "$backend"
        --listen_address "${RESHARD_LISTEN_ADDRESS:-127.0.0.1}"
        --metrics_listen "${RESHARD_METRICS_ADDRESS:-0.0.0.0}:$port")
  [ "$backend" = nccl ] && args+=(--device "$g")
  [ -n "${RESHARD_METRICS_PORT_DIR:-}" ] &&
    args+=(--metrics_port_file "$RESHARD_METRICS_PORT_DIR/metrics-$g.port")
  "$agent" "${args[@]}" "$@" &
  pids+=($!)
done
echo "reshard-agent-node: node $node_index of ${#nodes[@]}, ranks" \
  "$((node_index * gpus))..$((node_index * gpus + gpus - 1)) of $world_size" >&2

wait -n
code=$?
stop_all
exit "$code"
