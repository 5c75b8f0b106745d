# Shared by the CLI test scripts: `check NAME STATUS` records a failure when
# STATUS is non-zero; `contains TEXT PART` tests for a substring.
fail=0
check() {
  if [ "$2" -ne 0 ]; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi
}
contains() { case "$1" in *"$2"*) return 0 ;; *) return 1 ;; esac; }
