#!/usr/bin/env bash
# The repository stands alone: no tracked file cites a document, a section
# of docs/DESIGN.md or a path the repository does not have
# (tests/docs/citations_check.sh), and README.md links the docs a reader
# starts from.
set -u
ROOT="$1"
cd "$ROOT" || exit 1
fail=0
bash tests/docs/citations_check.sh "$ROOT" || fail=1
for doc in docs/DESIGN.md docs/PLAN_JSON.md docs/ARCHITECTURE.md docs/PERFORMANCE.md \
    docs/GUIDE.md docs/FLAGS.md docs/REFERENCE.md CONTRIBUTING.md; do
  if [ -s "$doc" ] && grep -q "($doc)\|\`$doc\`" README.md; then
    echo "ok: README links $doc"
  else
    echo "FAIL: $doc missing or not linked from README.md"; fail=1
  fi
done
exit $fail
