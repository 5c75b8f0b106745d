#!/usr/bin/env bash
# Cached Plan QPS in plaintext vs over mutual TLS, in the same run (issue
# 28's measured cost): two reshard-planner processes, one plain and one
# with --tls_cert/--tls_key/--tls_ca (certificates made here by openssl:
# a P-256 CA, server and client), loaded in turn by reshard-loadgen over
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

pem() {  # NAME [CA]: a P-256 key and certificate, self-signed or by CA
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
    -keyout "$dir/$1.key" -out "$dir/$1.csr" 2>/dev/null || exit 1
  if [ $# -eq 1 ]; then
    openssl x509 -req -in "$dir/$1.csr" -signkey "$dir/$1.key" -days 2 \
      -out "$dir/$1.pem" 2>/dev/null || exit 1
  else
    printf 'subjectAltName=IP:127.0.0.1\n' >"$dir/$1.ext"
    openssl x509 -req -in "$dir/$1.csr" -CA "$dir/$2.pem" -CAkey "$dir/$2.key" \
      -CAcreateserial -days 2 -extfile "$dir/$1.ext" -out "$dir/$1.pem" 2>/dev/null || exit 1
  fi
}
pem ca
pem server ca
pem client ca

start plain
start tls --tls_cert "$dir/server.pem" --tls_key "$dir/server.key" --tls_ca "$dir/ca.pem"
client_flags[tls]="--tls_ca $dir/ca.pem --tls_cert $dir/client.pem --tls_key $dir/client.key"
compare plain tls
