# An emulated two-tier cluster network, sourced by local-cluster.sh: one
# network namespace per host, each joined by a veth pair to a bridge in a
# switch namespace, with a `tc tbf` rate limit on every host's egress into
# the switch (the slow, inter-host tier). Ranks of one host reach each other
# over their namespace's own loopback route (the fast tier). netem is not
# available here, so only the bandwidth tier is emulated: per-collective
# latency is process scheduling (docs/notes/2026-11-27-plan-quality.md, "Measured plan
# quality").
#
# Every name carries a run id, so parallel runs do not collide; the veth
# pairs are created inside the namespaces, so nothing is added to the
# caller's namespace, and deleting the namespaces removes everything.
#
#   net_create ID HOSTS MBIT   creates the namespaces, records them in
#                              $DIR/netns; MBIT 0: no rate limit
#   net_remove                 deletes what $DIR/netns records
#   net_ns_host H / net_ns_switch / net_host_ip H / net_switch_ip

NET_SUBNET=10.77.0

net_ns_switch() { echo "rs-$NET_ID-sw"; }
net_ns_host() { echo "rs-$NET_ID-h$1"; }
net_host_ip() { echo "$NET_SUBNET.$(($1 + 1))"; }
net_switch_ip() { echo "$NET_SUBNET.254"; }

# True when this process may create network namespaces.
net_can_create() {
  local probe="rs-probe-$$"
  ip netns add "$probe" 2>/dev/null || return 1
  ip netns del "$probe" 2>/dev/null
  return 0
}

net_add_ns() {
  ip netns add "$1" || return 1
  echo "$1" >> "$DIR/netns"
  ip -n "$1" link set lo up
}

# Host H: its namespace, a veth pair to the switch's bridge, the rate limit.
net_add_host() {
  local h="$1" mbit="$2" sw host
  sw=$(net_ns_switch)
  host=$(net_ns_host "$h")
  net_add_ns "$host" || return 1
  ip -n "$sw" link add "p$h" type veth peer name eth0 netns "$host" || return 1
  ip -n "$sw" link set "p$h" master br0 up || return 1
  ip -n "$host" addr add "$(net_host_ip "$h")/24" dev eth0 || return 1
  ip -n "$host" link set eth0 up || return 1
  [ "$mbit" -gt 0 ] || return 0
  # A burst of 256 KiB keeps tbf's rate at line level for large messages.
  ip netns exec "$host" tc qdisc add dev eth0 root tbf rate "${mbit}mbit" \
    burst 256kb latency 100ms
}

net_create() {
  NET_ID="$1"
  local hosts="$2" mbit="$3" sw h
  sw=$(net_ns_switch)
  echo "$NET_ID" > "$DIR/net_id"
  net_add_ns "$sw" || return 1
  ip -n "$sw" link add br0 type bridge || return 1
  ip -n "$sw" addr add "$(net_switch_ip)/24" dev br0 || return 1
  ip -n "$sw" link set br0 up || return 1
  for ((h = 0; h < hosts; ++h)); do
    net_add_host "$h" "$mbit" || return 1
  done
}

# Deletes the namespaces recorded in $DIR/netns (their veths and qdiscs go
# with them); the processes in them must have exited first.
net_remove() {
  [ -f "$DIR/netns" ] || return 0
  local ns rc=0
  while read -r ns; do
    [ -e "/run/netns/$ns" ] || continue
    ip netns del "$ns" || rc=1
  done < "$DIR/netns"
  [ $rc -eq 0 ] && rm -f "$DIR/netns" "$DIR/net_id"
  return $rc
}

# Loads the run id of an existing cluster in $DIR (empty when none).
net_load() {
  NET_ID=""
  [ -f "$DIR/net_id" ] && NET_ID=$(cat "$DIR/net_id")
  return 0
}
