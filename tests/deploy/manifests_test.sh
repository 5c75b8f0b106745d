#!/usr/bin/env bash
# deploy/kubernetes/ and the Dockerfile: every manifest validates against the
# Kubernetes schemas (kubernetes-models, offline; deploy/validate/), and names
# only images, ports, flags and probes that exist: flags are asserted against
# the binaries' --help, the planner's ConfigMap flag file starts a real
# planner, ports agree with the flags that open them, images carry the
# project version, commands are the files the Dockerfile installs. The
# Dockerfile passes dockerfilelint and builds with the steps CI runs.
set -u
SRC="$1"
BUILD="$2"
. "$SRC/tests/cli/lib.sh"
PLANNER="$BUILD/server/reshard-planner"
AGENT="$BUILD/agent/reshard-agent"
CTL="$BUILD/client/reshardctl"
VALIDATE="$SRC/deploy/validate"
K8S="$SRC/deploy/kubernetes"

dir=$(mktemp -d /tmp/reshard-manifests-XXXXXX)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
die() { echo "FAIL: $1"; fail=1; exit 1; }
[ -d "$VALIDATE/node_modules/kubernetes-models" ] ||
  die "deploy/validate/node_modules is missing: run scripts/install-deps.sh"
to_json() { node "$VALIDATE/validate.mjs" --to-json "$K8S/$1"; }
# kind_of FILE KIND: that file's object of that kind, as JSON.
kind_of() { to_json "$1" | jq -c --arg k "$2" '[.[] | select(.kind == $k)][0]'; }

# Schemas.
out=$(node "$VALIDATE/validate.mjs" "$K8S"/*.yaml "$K8S"/operator/*.yaml 2>&1)
check "every manifest validates against the Kubernetes schemas" $?
[ "$(grep -c '^ok ' <<<"$out")" -eq 10 ]
check "10 objects validated: $(grep -c '^ok ' <<<"$out")" $?
sed 's/containerPort: 50051/containerPort: "fifty"/' "$K8S/planner-deployment.yaml" >"$dir/bad.yaml"
bad=$(node "$VALIDATE/validate.mjs" "$dir/bad.yaml" 2>&1)
[ $? -ne 0 ] && contains "$bad" "containers/0/ports/0/containerPort must be integer"
check "a wrong type is refused, naming the field: $bad" $?

# `kubectl apply -f deploy/kubernetes/` applies files in name order: the
# namespace comes first; what needs the Prometheus Operator's CRDs is apart
# (operator/), so the plain apply needs nothing but Kubernetes.
first=$(ls "$K8S"/*.yaml | head -1)
[ "$(kind_of "$(basename "$first")" Namespace | jq -r '.kind')" = Namespace ] &&
  ! grep -l 'monitoring.coreos.com' "$K8S"/*.yaml >/dev/null
check "the namespace applies first; Operator-only objects are in operator/ ($(basename "$first"))" $?

# The Operator's PrometheusRule is generated from the one source of the
# rules, and holds exactly their groups.
diff <(bash "$SRC/scripts/gen-prometheusrule.sh") "$K8S/operator/prometheusrule.yaml" >"$dir/rule.diff"
check "operator/prometheusrule.yaml is scripts/gen-prometheusrule.sh's output ($(head -3 "$dir/rule.diff"))" $?
for f in "$SRC"/deploy/prometheus/rules/*.yml; do
  node "$VALIDATE/validate.mjs" --to-json "$f"
done | jq -s -c '[.[][].groups[]]' >"$dir/groups.json"
[ "$(to_json operator/prometheusrule.yaml | jq -c '.[0].spec.groups')" = "$(cat "$dir/groups.json")" ] &&
  [ "$(jq 'length' "$dir/groups.json")" -ge 3 ]
check "the PrometheusRule's groups are deploy/prometheus/rules' groups" $?

# The dashboard: template variables for the data source, namespace, job and
# instance; every panel reads the chosen data source and
# every expression filters by namespace (raw series by job and instance too).
DASH="$SRC/deploy/grafana/reshard-dashboard.json"
jq -e '[.templating.list[].name] == ["datasource", "namespace", "job", "instance"] and
  .templating.list[0].type == "datasource" and
  all(.templating.list[1:][]; .includeAll and .allValue == ".*")' "$DASH" >/dev/null
check "the dashboard has datasource, namespace, job and instance variables" $?
jq -e 'all(.panels[]; .datasource.uid == "${datasource}" and
  all(.targets[]; .datasource.uid == "${datasource}" and (.expr | contains("namespace=~\"$namespace\""))))' \
  "$DASH" >/dev/null
check "every panel reads \${datasource} and filters by \$namespace" $?
jq -e '[.panels[].targets[].expr | scan("reshard_[a-z_]+\\{[^}]*\\}")] |
  length > 0 and all(contains("job=~\"$job\"") and contains("instance=~\"$instance\""))' \
  "$DASH" >/dev/null
check "raw series filter by \$job and \$instance" $?

# Images: the project's, at this version.
version=$("$PLANNER" --version | awk '{print $2}')
images=$(cat "$K8S"/*.yaml "$K8S"/operator/*.yaml | awk '$1 == "image:" {print $2}' | sort -u)
[ "$images" = "ghcr.io/reshard/reshard-agent-cuda:$version
ghcr.io/reshard/reshard:$version" ]
check "images carry version $version: $(echo $images)" $?

# The planner: its flag file holds only flags reshard-planner has, and
# starts a real planner (listen addresses overridden to loopback).
kind_of planner-configmap.yaml ConfigMap | jq -r '.data["planner.flags"]' >"$dir/planner.flags"
help=$("$PLANNER" --help 2>&1)
while read -r flag; do
  [ -z "$flag" ] && continue
  name=${flag%%=*}
  contains "$help" "    $name (" || check "reshard-planner --help lists $name" 1
done <"$dir/planner.flags"
[ "$(wc -l <"$dir/planner.flags")" -ge 5 ]; check "the planner flag file has its flags" $?
# The flag file serves mutual TLS from the Secret's mount: certificates
# made here stand in for the Secret (its keys tls.crt, tls.key, ca.crt).
tls_dir=$(dirname "$(grep -- '^--tls_cert=' "$dir/planner.flags" | cut -d= -f2)")
mkdir -p "$dir/tls"
make_ca "$dir/tls" ca && make_cert "$dir/tls" tls ca &&
  mv "$dir/tls/ca.pem" "$dir/tls/ca.crt" && mv "$dir/tls/tls.pem" "$dir/tls/tls.crt"
check "openssl made a stand-in for the Secret reshard-planner-tls" $?
# And a stand-in for the Secret reshard-planner-admin (its key token).
admin_dir=$(dirname "$(grep -- '^--admin_token_file=' "$dir/planner.flags" | cut -d= -f2)")
mkdir -p "$dir/admin" && echo "manifest-admin-token" >"$dir/admin/token"
sed "s|$tls_dir/|$dir/tls/|; s|$admin_dir/|$dir/admin/|" "$dir/planner.flags" >"$dir/planner-local.flags"
"$PLANNER" --flagfile="$dir/planner-local.flags" --listen=127.0.0.1:0 --port_file="$dir/port" \
  --metrics_listen=127.0.0.1:0 2>"$dir/planner.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
# The probe's command, pointed at this planner and at the stand-in files.
deploy=$(kind_of planner-deployment.yaml Deployment)
c='.spec.template.spec.containers[0]'
mapfile -t probe < <(jq -r "$c.readinessProbe.exec.command[]" <<<"$deploy" |
  sed "s|^127.0.0.1:[0-9]*$|127.0.0.1:$(cat "$dir/port" 2>/dev/null)|; s|^$tls_dir/|$dir/tls/|; s|^reshardctl$|$CTL|")
timeout 10 "${probe[@]}" >/dev/null
check "a planner started from the ConfigMap's flag file answers the probe over mutual TLS" $?
timeout 10 "$CTL" --server "127.0.0.1:$(cat "$dir/port" 2>/dev/null)" --deadline_seconds 2 health >/dev/null 2>&1
[ $? -eq 4 ]; check "it refuses plaintext" $?

flag_port() { grep -- "^--$1=" "$dir/planner.flags" | sed 's/.*://'; }
port_of() { jq -r "$c.ports[] | select(.name == \"$1\") | .containerPort" <<<"$deploy"; }
[ "$(port_of grpc)" = "$(flag_port listen)" ] && [ "$(port_of metrics)" = "$(flag_port metrics_listen)" ]
check "planner ports match --listen and --metrics_listen ($(port_of grpc), $(port_of metrics))" $?
jq -e --arg server "127.0.0.1:$(flag_port listen)" --arg d "$tls_dir" "$c.readinessProbe.exec.command ==
  [\"reshardctl\", \"--server\", \$server, \"--tls_ca\", \"\(\$d)/ca.crt\", \"--tls_cert\",
   \"\(\$d)/tls.crt\", \"--tls_key\", \"\(\$d)/tls.key\", \"--deadline_seconds\", \"2\", \"health\"] and
  $c.livenessProbe.exec == $c.readinessProbe.exec and
  ($c.volumeMounts[] | select(.name == \"tls\") | .mountPath) == \$d and
  (.spec.template.spec.volumes[] | select(.name == \"tls\") | .secret.secretName) == \"reshard-planner-tls\"" \
  <<<"$deploy" >/dev/null
check "planner probes run reshardctl health over TLS on the serving port, with the mounted Secret ($tls_dir)" $?
jq -e --arg d "$admin_dir" "($c.volumeMounts[] | select(.name == \"admin-token\") | .mountPath) == \$d and
  (.spec.template.spec.volumes[] | select(.name == \"admin-token\") | .secret.secretName) == \"reshard-planner-admin\"" \
  <<<"$deploy" >/dev/null
check "the planner's admin token comes from the Secret reshard-planner-admin, mounted where --admin_token_file reads ($admin_dir)" $?
grep -q "job tokens issued under key [0-9a-f]\{8\} are accepted" "$dir/planner.log"
check "the planner started from the flag file issues job tokens" $?
jq -e ".spec.template.metadata.annotations[\"prometheus.io/port\"] == \"$(flag_port metrics_listen)\"" <<<"$deploy" >/dev/null
check "the scrape annotation names the metrics port" $?
mount=$(jq -r "$c.volumeMounts[0].mountPath" <<<"$deploy")
jq -e "$c.args == [\"--flagfile=$mount/planner.flags\"] and $c.command == [\"reshard-planner\"]" <<<"$deploy" >/dev/null
check "the planner reads the ConfigMap's flag file" $?
jq -e '.spec.template.spec.securityContext.runAsNonRoot == true' <<<"$deploy" >/dev/null
check "the planner runs as non-root" $?
for svc in $(to_json planner-service.yaml | jq -c '.[]'); do
  for target in $(jq -r '.spec.ports[].targetPort' <<<"$svc"); do
    [ -n "$(port_of "$target")" ] || check "Service port $target names a container port" 1
  done
done
to_json planner-service.yaml | jq -e '[.[] | select(.spec.clusterIP == "None")] | length == 1' >/dev/null
check "a headless Service lists the planner replicas" $?

# The agents: the node script's flags exist in reshard-agent, the DaemonSet's
# settings are ones the script reads, ports follow RESHARD_METRICS_BASE_PORT.
script="$SRC/scripts/reshard-agent-node.sh"
agent_help=$("$AGENT" --help 2>&1)
for flag in $(grep -o -- '--[a-z_]*' "$script" | grep -v -- '^--$' | sort -u); do
  contains "$agent_help" "    $flag (" || check "reshard-agent --help lists $flag" 1
done
ds=$(kind_of agent-daemonset.yaml DaemonSet)
cm=$(kind_of agent-configmap.yaml ConfigMap)
for var in $(jq -r "$c.env[].name" <<<"$ds") $(jq -r '.data | keys[] | select(startswith("RESHARD_"))' <<<"$cm"); do
  grep -q "$var" "$script" || check "the node script reads $var" 1
done
base=$(jq -r '.data.RESHARD_METRICS_BASE_PORT' <<<"$cm")
gpus=$(jq -r '.data.RESHARD_GPUS_PER_NODE' <<<"$cm")
jq -e --argjson b "$base" --argjson g "$gpus" "[$c.ports[] | .containerPort] == [range(\$b; \$b + \$g)]
  and ([$c.ports[] | .name] == [range(0; \$g) | \"metrics-\(.)\"])
  and $c.resources.limits[\"nvidia.com/gpu\"] == (\$g | tostring)
  and $c.livenessProbe.httpGet.port == \"metrics-0\" and $c.livenessProbe.httpGet.path == \"/metrics\"" \
  <<<"$ds" >/dev/null
check "agent ports, GPUs and probe follow the ConfigMap ($gpus GPUs from port $base)" $?
contains "$agent_help" "$(jq -r '.data.RESHARD_BACKEND' <<<"$cm") ("
check "the ConfigMap's backend is one reshard-agent accepts" $?
jq -e '.spec.template.spec.securityContext.runAsNonRoot == true' <<<"$ds" >/dev/null
check "the agents run as non-root" $?
# The job token and TLS come from Secrets, mounted where the flags read.
token_mount=$(jq -r "$c.volumeMounts[] | select(.name == \"job-token\") | .mountPath" <<<"$ds")
tls_mount=$(jq -r "$c.volumeMounts[] | select(.name == \"tls\") | .mountPath" <<<"$ds")
jq -e --arg m "$token_mount" --arg t "$tls_mount" "$c.args == [\"--job_token_file=\(\$m)/token\",
  \"--tls_ca=\(\$t)/ca.crt\", \"--tls_cert=\(\$t)/tls.crt\", \"--tls_key=\(\$t)/tls.key\"] and
  ([.spec.template.spec.volumes[] | select(.secret) | .secret.secretName] | sort) ==
  [\"reshard-agent-tls\", \"reshard-job-token\"]" <<<"$ds" >/dev/null
check "the agents read the job token and TLS from the Secrets ($token_mount, $tls_mount)" $?
for flag in job_token_file tls_ca tls_cert tls_key; do
  contains "$agent_help" "    --$flag (" || check "reshard-agent --help lists --$flag" 1
done
jq -e '.spec.template.spec.nodeSelector == {"reshard.io/agent": "true"}' <<<"$ds" >/dev/null
check "the agents run only on nodes labelled reshard.io/agent=true (those of the node list)" $?
# The PodMonitor's series carry prometheus.yml's job names (the pods'
# app.kubernetes.io/name), which the alerts' up{job=...} use.
to_json operator/podmonitor.yaml | jq -e '.[0].spec.jobLabel == "app.kubernetes.io/name"' >/dev/null &&
  [ "$(jq -r '.spec.template.metadata.labels["app.kubernetes.io/name"]' <<<"$ds")" = reshard-agent ] &&
  [ "$(jq -r '.spec.template.metadata.labels["app.kubernetes.io/name"]' <<<"$deploy")" = reshard-planner ] &&
  grep -q 'job_name: reshard-planner' "$SRC/deploy/prometheus/prometheus.yml" &&
  grep -q 'job_name: reshard-agent' "$SRC/deploy/prometheus/prometheus.yml"
check "PodMonitor jobs are prometheus.yml's job names" $?
to_json operator/podmonitor.yaml | jq -r '.[0].spec.podMetricsEndpoints[].port' >"$dir/monitored"
jq -r "$c.ports[].name" <<<"$ds" | grep -vxFf "$dir/monitored" >/dev/null
[ $? -ne 0 ] && grep -qx metrics "$dir/monitored"
check "the PodMonitor scrapes every agent port and the planner's" $?

# The Dockerfile.
df="$SRC/Dockerfile"
lint=$(cd "$VALIDATE" && node_modules/.bin/dockerfilelint "$df" 2>&1)
check "dockerfilelint passes: $(grep Issues <<<"$lint")" $?
grep -q '^RUN make build ' "$df" && grep -q '^RUN bash scripts/install-deps.sh' "$df"
check "the image builds with install-deps.sh and make build, as CI does" $?
for bin in server/reshard-planner agent/reshard-agent client/reshardctl; do
  grep -q "build/$bin" "$df" && [ -x "$BUILD/$bin" ] || check "the Dockerfile installs $bin" 1
done
grep -q 'cp scripts/reshard-agent-node.sh /out/bin/reshard-agent-node' "$df" &&
  jq -e "$c.command == [\"reshard-agent-node\"]" <<<"$ds" >/dev/null
check "the DaemonSet's command is the node script the image installs" $?
packages=$(sed -n '/apt-get install/,/rm -rf/p' "$df" | grep -oE '(^| )lib[a-z0-9][a-z0-9.+-]*' | sort -u)
for pkg in $packages; do
  apt-cache show "$pkg" >/dev/null 2>&1 || check "runtime package $pkg exists in Debian 12" 1
done
# Each shared library the binaries link comes from a listed package or one
# of their dependencies (apt pulls those in).
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances $packages 2>/dev/null | grep -v '^ ')
for lib in $(ldd "$PLANNER" "$AGENT" "$CTL" | awk '/=> \//{print $3}' | sort -u); do
  pkg=$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -1 | cut -d: -f1)
  [ -z "$pkg" ] && continue
  case "$pkg" in lib*san[0-9]*) continue ;; esac  # a sanitized build's runtime
  grep -qx "$pkg" <<<"$closure" || check "the runtime stage provides $lib ($pkg)" 1
done
# The CUDA and NCCL libraries from install-deps.sh's prefix are no Debian
# package: the image copies each one the binaries link.
for lib in $(ldd "$PLANNER" "$AGENT" "$CTL" | awk '/=> \/opt\/reshard\/cuda\//{print $1}' | sort -u); do
  grep -q "/opt/reshard/cuda/lib/$lib" "$df" || check "the image carries $lib from the CUDA prefix" 1
done
[ "$(wc -w <<<"$packages")" -ge 10 ]
check "the runtime stage installs the binaries' libraries ($(echo $packages))" $?
grep -q '^USER 10001' "$df"; check "the image runs as a non-root user" $?
grep -q '^EXPOSE 50051 9090 9400$' "$df"; check "the image exposes gRPC and metrics ports" $?
grep -q 'CMD \["reshardctl", "--server", "127.0.0.1:50051", "health"\]' "$df" &&
  contains "$("$CTL" --help 2>&1)" "health"
check "the HEALTHCHECK runs reshardctl health" $?
exit "$fail"
