#!/usr/bin/env bash
# Cached Plan QPS in plaintext vs over mutual TLS, in the same run (issue
# 28's measured cost): two reshard-planner processes, one plain and one
# with --tls_cert/--tls_key/--tls_ca (certificates made here by openssl,
# tests/cli/lib.sh: a P-256 CA, server and client), loaded in turn by reshard-loadgen over
# long-lived connections (the handshake once per run, then TLS records),
# alternating the order each round (bench/planner_ab.sh). Prints one row
# per run, the medians and their ratio (tls / plain).
#
#   bench/tls_overhead.sh [BUILD_DIR] [ROUNDS] [SECONDS] [CONCURRENCY]
set -u
BUILD="${1:-build}"
ROUNDS="${2:-6}"
SECONDS_PER_RUN="${3:-3}"
CONCURRENCY="${4:-8}"
NAME=tls_overhead
. "$(dirname "$0")/planner_ab.sh"

. "$(dirname "$0")/../tests/cli/lib.sh"  # make_ca, make_cert
make_ca "$dir" ca && make_cert "$dir" server ca && make_cert "$dir" client ca || exit 1

start plain
start tls --tls_cert "$dir/server.pem" --tls_key "$dir/server.key" --tls_ca "$dir/ca.pem"
client_flags[tls]="--tls_ca $dir/ca.pem --tls_cert $dir/client.pem --tls_key $dir/client.key"
compare plain tls
