#!/usr/bin/env bash
# Runs pytest with the project's Python, failing (not skipping) when that
# Python or what the tests import is missing.
#   run_pytest.sh PYTHON TEST_FILE...
set -u
python="$1"
shift
if [[ ! -x "$python" ]]; then
  echo "FAIL: no project Python at $python: run scripts/install-deps.sh"
  exit 1
fi
# pytest's own cache would write into the source tree.
exec "$python" -m pytest -p no:cacheprovider -q -s "$@"
