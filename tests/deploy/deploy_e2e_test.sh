#!/usr/bin/env bash
# deploy/ end to end (the planner on mutual TLS and a job token, as the
# manifests deploy them): a real Prometheus loaded with deploy/prometheus/ (its
# prometheus.yml and rule files, intervals shortened and file-discovery
# targets written here with loopback addresses) scrapes a reshard-planner and
# a local cluster of agents started the way the DaemonSet starts them
# (scripts/reshard-agent-node.sh: two "nodes" of two agents each) while jobs
# run. PromQL over its HTTP API must return busbw per op and group and run
# counts by result, and every expression of the recording rules, the alerts
# and the Grafana dashboard must evaluate without error. Every process is
# stopped by its PID (the node script stops its own agents) and every wait
# is bounded.
set -u
SRC="$1"
BUILD="$2"
PROMETHEUS="${3:-prometheus}"
PROMTOOL="${4:-promtool}"
. "$SRC/tests/cli/lib.sh"
CTL="$BUILD/client/reshardctl"

dir=$(mktemp -d /tmp/reshard-deploy-XXXXXX)
pids=()
declare -A node_pid
trap stop_started EXIT

"$PROMTOOL" check config "$SRC/deploy/prometheus/prometheus.yml" >/dev/null
check "promtool check config deploy/prometheus/prometheus.yml" $?
"$PROMTOOL" check rules "$SRC"/deploy/prometheus/rules/*.yml >/dev/null
check "promtool check rules deploy/prometheus/rules/*.yml" $?
out=$("$PROMTOOL" test rules "$SRC/tests/deploy/alerts_test.yml" 2>&1)
check "promtool unit tests of the alerts (tests/deploy/alerts_test.yml): $(tail -1 <<<"$out")" $?

# As deployed (deploy/kubernetes/): the planner serves mutual TLS with an
# admin token, and the agents and reshardctl present a certificate of its CA
# and the job token the admin issued (reshardctl job token).
make_ca "$dir" ca && make_cert "$dir" planner ca && make_cert "$dir" client ca
check "openssl made the certificates" $?
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/admin"
"$CTL" --admin_token_file "$dir/admin" job token e2e >"$dir/token"
check "reshardctl job token issues the job's token" $?
TLS=(--tls_ca "$dir/ca.pem" --tls_cert "$dir/client.pem" --tls_key "$dir/client.key")
"$BUILD/server/reshard-planner" --listen 127.0.0.1:0 --port_file "$dir/port" \
  --tls_cert "$dir/planner.pem" --tls_key "$dir/planner.key" --tls_ca "$dir/ca.pem" \
  --metrics_listen 127.0.0.1:0 --metrics_port_file "$dir/metrics_port" \
  --admin_token_file "$dir/admin" 2>"$dir/planner.log" &
pids+=($!)
# The metrics port is written before the service's: wait for both.
wait_for 15 test -s "$dir/metrics_port" -a -s "$dir/port" ||
  die "planner did not start"
server="127.0.0.1:$(cat "$dir/port")"

printf 'node-a\nnode-b\n' >"$dir/nodes"
for node in node-a node-b; do
  mkdir -p "$dir/$node"
  NODE_NAME=$node RESHARD_NODES_FILE="$dir/nodes" RESHARD_GPUS_PER_NODE=2 \
    RESHARD_SERVER="$server" RESHARD_JOB=e2e RESHARD_METRICS_BASE_PORT=0 \
    RESHARD_METRICS_ADDRESS=127.0.0.1 RESHARD_METRICS_PORT_DIR="$dir/$node" \
    RESHARD_AGENT="$BUILD/agent/reshard-agent" \
    "$SRC/scripts/reshard-agent-node.sh" --timeout_seconds 10 "${TLS[@]}" \
    --job_token_file "$dir/token" \
    2>"$dir/$node.log" &
  pids+=($!)
  node_pid[$node]=$!
done
agent_ports=()
for node in node-a node-b; do
  for g in 0 1; do
    wait_for 15 test -s "$dir/$node/metrics-$g.port" || die "$node agent $g has no metrics port"
    agent_ports+=("127.0.0.1:$(cat "$dir/$node/metrics-$g.port")")
  done
done
grep -q "node 1 of 2, ranks 2..3 of 4" "$dir/node-b.log"
check "the node script derives ranks from the node list" $?

# deploy/prometheus/ as shipped, but scraping and evaluating every second and
# discovering the loopback targets written here.
cp -r "$SRC/deploy/prometheus" "$dir/prom"
sed -i 's/^  scrape_interval: .*/  scrape_interval: 1s/; s/^  evaluation_interval: .*/  evaluation_interval: 1s/' \
  "$dir/prom/prometheus.yml"
echo "[{\"targets\": [\"127.0.0.1:$(cat "$dir/metrics_port")\"]}]" >"$dir/prom/targets/planner.json"
jq -n '[{targets: $ARGS.positional}]' --args "${agent_ports[@]}" >"$dir/prom/targets/agents.json"

start_prometheus "$PROMETHEUS" "$dir/prom/prometheus.yml" || die "prometheus did not start"
all_up() {
  [ "$(query 'sum(up{job="reshard-agent"}) + 10 * sum(up{job="reshard-planner"})' |
    jq -r '.data.result[0].value[1]')" = 14 ]
}
wait_for 30 all_up
check "Prometheus scrapes the planner and the 4 agents from file discovery" $?

PF=(--mesh A=2,B=2 --shape 64,48 --dtype f32 --from 'S(0),S(1)' --to 'R,R'
    --iters 2 --warmup 1)
for i in 1 2 3; do
  timeout 60 "$CTL" --server "$server" "${TLS[@]}" --job_token_file "$dir/token" \
    job run e2e "${PF[@]}" --json >"$dir/run-$i.json" 2>>"$dir/ctl.log"
  check "job run $i exits 0" $?
done
timeout 30 "$CTL" --server "$server" "${TLS[@]}" --job_token_file "$dir/token" \
  job run e2e --mesh A=8 --shape 64 \
  --from 'S(0)' --to 'R' >/dev/null 2>>"$dir/ctl.log"
[ $? -eq 2 ]; check "a run whose mesh does not fit the job is refused (exit 2, INVALID_ARGUMENT)" $?

busbw_ok() {
  query 'reshard:collective_busbw_gbytes_per_second:avg' >"$dir/busbw.json" &&
    jq -e '[.data.result[] | select(.metric.op == "all_gather" and (.value[1] | tonumber) > 0)] | length > 0' \
      "$dir/busbw.json" >/dev/null
}
wait_for 30 busbw_ok
check "busbw per op and group: $(jq -c '[.data.result[] | [.metric.op, .metric.group, .value[1]]]' "$dir/busbw.json")" $?
runs_ok() {
  query 'sum by (result) (reshard_job_runs_total)' >"$dir/runs.json" &&
    jq -e '([.data.result[] | select(.metric.result == "validated")][0].value[1] == "3") and
           ([.data.result[] | select(.metric.result == "refused")][0].value[1] == "1")' \
      "$dir/runs.json" >/dev/null
}
wait_for 30 runs_ok
check "run counts by result: $(jq -c '[.data.result[] | [.metric.result, .value[1]]]' "$dir/runs.json")" $?
executions_ok() {
  [ "$(query 'sum(reshard_plan_executions_total{result="ok"})' | jq -r '.data.result[0].value[1]')" = 12 ]
}
wait_for 30 executions_ok
check "agents counted 12 ok executions (3 runs x 4 ranks)" $?

# Every rule Prometheus loaded has been evaluated without error.
rules_ok() {
  curl -sf --max-time 5 "http://127.0.0.1:$prom_port/api/v1/rules" >"$dir/rules.json" &&
    jq -e '[.data.groups[].rules[]] | length == 25 and
           all(.health == "ok" and .lastEvaluation != "0001-01-01T00:00:00Z")' \
      "$dir/rules.json" >/dev/null
}
wait_for 30 rules_ok
check "all 25 recording and alerting rules evaluate without error" $?
jq -r '.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.lastError)"' "$dir/rules.json"

# Every rule and dashboard expression through the query API.
# One JSON string per line: rule expressions span lines.
exprs=$( (jq -c '.data.groups[].rules[].query' "$dir/rules.json"
          jq -c '.panels[].targets[].expr' "$SRC/deploy/grafana/reshard-dashboard.json") | sort -u)
count=0
while IFS= read -r line; do
  # The dashboard's template variables (namespace, job, instance) as "All".
  expr=$(jq -r . <<<"$line" | sed 's/\$namespace/.*/g; s/\$job/.*/g; s/\$instance/.*/g')
  count=$((count + 1))
  [ "$(query "$expr" | jq -r '.status')" = success ] || check "expression evaluates: $expr" 1
done <<<"$exprs"
[ "$count" -ge 30 ]
check "$count rule and dashboard expressions evaluate through the query API" $?
for metric in reshard:collective_busbw_gbytes_per_second:avg reshard:job_runs:rate5m \
    reshard:collective_duration_seconds:p99_5m reshard:plan_executions:rate5m; do
  [ "$(query "$metric" | jq '.data.result | length')" -gt 0 ]
  check "recorded series $metric has data" $?
done

# An agent dies: its node script stops the node's other agent and exits with
# the agent's status (the container restarts); the Coordinator keeps the
# killed rank as a member without a dispatch stream (the stopped one left the
# job cleanly), and the agents-missing and agent-down alerts become pending.
node_agents=($(pgrep -P "${node_pid[node-b]}"))
[ ${#node_agents[@]} -eq 2 ]; check "node-b runs 2 agents (${node_agents[*]})" $?
kill -9 "${node_agents[0]}"
node_gone() { ! kill -0 "${node_pid[node-b]}" 2>/dev/null; }
wait_for 15 node_gone; check "node-b's script exits when one of its agents dies" $?
wait "${node_pid[node-b]}"; code=$?
[ "$code" -eq 137 ]; check "it exits with the agent's status ($code)" $?
! kill -0 "${node_agents[1]}" 2>/dev/null; check "and has stopped the node's other agent" $?
pending() {
  curl -sf --max-time 5 "http://127.0.0.1:$prom_port/api/v1/alerts" >"$dir/alerts.json" &&
    jq -e '[.data.alerts[] | select(.state == "pending" or .state == "firing") | .labels.alertname]
           | (index("ReshardAgentsMissing") != null) and (index("ReshardAgentDown") != null)' \
      "$dir/alerts.json" >/dev/null
}
wait_for 30 pending
check "alerts: $(jq -c '[.data.alerts[] | [.labels.alertname, .state]] | unique' "$dir/alerts.json")" $?
disconnected() {
  [ "$(query 'sum(reshard_agents{state="disconnected"})' | jq -r '.data.result[0].value[1]')" = 1 ]
}
wait_for 10 disconnected
check "the Coordinator counts the killed agent as disconnected" $?
exit "$fail"
