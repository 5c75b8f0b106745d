#!/usr/bin/env bash
# The repository's docs stand alone: README.md and docs/ must not send a
# reader to DESIGN.md ("DESIGN §4"), a document users of the repository do
# not have, and the plan JSON reference they link instead must exist.
set -u
ROOT="$1"
cd "$ROOT" || exit 1
fail=0
hits=$(grep -rnE 'DESIGN( ?§|\.md)' README.md docs/)
if [ -n "$hits" ]; then
  echo "FAIL: README.md/docs/ cite DESIGN:"; echo "$hits"; fail=1
else
  echo "ok: no DESIGN citations in README.md and docs/"
fi
for doc in docs/PLAN_JSON.md docs/ARCHITECTURE.md docs/PERFORMANCE.md; do
  if [ -s "$doc" ] && grep -q "($doc)\|\`$doc\`" README.md; then
    echo "ok: README links $doc"
  else
    echo "FAIL: $doc missing or not linked from README.md"; fail=1
  fi
done
exit $fail
