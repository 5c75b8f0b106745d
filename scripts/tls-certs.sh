# Certificates made by openssl for local clusters and tests (P-256 keys),
# sourced by scripts/local-cluster.sh and tests/cli/lib.sh; openssl's
# output goes to DIR/openssl.log.
# make_ca DIR NAME [DAYS]: a self-signed CA, DIR/NAME.pem and DIR/NAME.key,
# valid for DAYS (2).
make_ca() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "${3:-2}" \
    -keyout "$1/$2.key" -out "$1/$2.pem" -subj "/CN=$2" 2>>"$1/openssl.log"
}
# make_cert DIR NAME CA [DAYS]: DIR/NAME.pem and DIR/NAME.key signed by
# DIR/CA.pem, valid for 127.0.0.1 and localhost for DAYS (2; -1: expired
# yesterday), usable by a server and a client.
make_cert() {
  local dir=$1 name=$2 ca=$3 days=${4:-2}
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>>"$dir/openssl.log" &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/$name.ext" &&
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" \
      -CAcreateserial -days "$days" -extfile "$dir/$name.ext" \
      -out "$dir/$name.pem" 2>>"$dir/openssl.log"
}
