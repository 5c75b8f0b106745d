#!/usr/bin/env bash
# Every citation in the tracked tree must resolve inside the repository:
#  1. a DESIGN section ("DESIGN §N", "DESIGN.md §N", "docs/DESIGN.md §N", also
#     with the section sign on the next comment line) must be a heading of
#     docs/DESIGN.md ("## N. Title" or "### N Title"); for ranges and lists
#     only the first number is checked;
#  2. no file may point outside the repository (the parent's shared folder,
#     by a relative or an absolute path);
#  3. a markdown document named by path (docs/X.md, ../X.md) or by an
#     upper-case bare name (README.md, PLAN_JSON.md) must exist: docs/X.md
#     relative to the root (or to the citing file), a bare X.md as ROOT/X.md
#     or ROOT/docs/X.md (or beside the citing file).
# Prints "file:line: text  [reason]" per problem and a summary line; exits 1
# when there is any problem.
#
# Usage: citations_check.sh [ROOT]   (default: the git top level of this
# script's directory)
set -euo pipefail

if [ $# -ge 1 ]; then
  ROOT="$1"
else
  ROOT="$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel)"
fi
cd "$ROOT"

self="tests/docs/citations_check.sh"
list="$(mktemp)"
trap 'rm -f "$list"' EXIT

# Tracked text files (git grep -I skips binaries; a tracked file deleted
# from the work tree is not listed). Names with newlines are not supported.
git grep -I -l -e '' -- . >"$list" || true

sections=""
if [ -f docs/DESIGN.md ]; then
  # "## 4. Plan JSON" -> 4, "### 6.2 Data rule" -> 6.2
  sections="$(sed -n -E 's/^#+[[:space:]]+([0-9]+(\.[0-9]+)*)\.?([[:space:]].*)?$/\1/p' \
    docs/DESIGN.md | tr '\n' ' ')"
fi

LC_ALL=C awk -v sections="$sections" -v self="$self" -v listfile="$list" '
function exists(path,   line, r) {
  if (path in seen) return seen[path]
  r = (getline line < path)
  close(path)
  seen[path] = (r >= 0)
  return seen[path]
}
function dirof(path,   i) {
  i = match(path, /\/[^\/]*$/)
  return i ? substr(path, 1, i) : ""
}
function trim(s) {
  sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s)
  if (length(s) > 200) s = substr(s, 1, 200) "..."
  return s
}
function report(file, n, text, why) {
  printf "%s:%d: %s  [%s]\n", file, n, trim(text), why
  problems++
}
# The section number at the start of s (after an optional section sign),
# trailing dot dropped; "" when there is none.
function section_at(s,   num) {
  sub(/^[ \t]*/, "", s)
  if (substr(s, 1, 2) == "\302\247") s = substr(s, 3)   # the section sign
  sub(/^[ \t]*/, "", s)
  if (!match(s, /^[0-9]+(\.[0-9]+)*/)) return ""
  num = substr(s, RSTART, RLENGTH)
  return num
}
function check_section(file, n, text, num) {
  if (!(num in known)) report(file, n, text, "no section " num " in docs/DESIGN.md")
}
function check_design(file, n, line,   rest, pos, after, num, hit) {
  rest = line
  while (match(rest, /DESIGN(\.md)?/)) {
    after = substr(rest, RSTART + RLENGTH)
    rest = after
    # "DESIGN §6.2", "DESIGN.md §2-§5", "DESIGN 6.2": a number right after,
    # with the section sign or at least one blank.
    if (after ~ /^[ \t]*\302\247/ || after ~ /^[ \t]+[0-9]/) {
      num = section_at(after)
      if (num != "") check_section(file, n, line, num)
    } else if (after ~ /^[ \t\r]*$/) {
      pending = 1   # the number may open the next line
    }
  }
}
function check_docs(file, n, line,   rest, tok, nxt, base, ok) {
  rest = line
  while (match(rest, /[A-Za-z0-9_.\/-]+\.md/)) {
    tok = substr(rest, RSTART, RLENGTH)
    nxt = substr(rest, RSTART + RLENGTH, 1)
    rest = substr(rest, RSTART + RLENGTH)
    if (nxt ~ /[A-Za-z0-9_]/) continue            # foo.mdx, x.md5
    if (tok ~ /^\// || tok ~ /shared\//) continue # outside paths: rule 2
    sub(/^(\.\/)+/, "", tok)
    if (index(tok, "/")) {
      base = tok; sub(/.*\//, "", base)
      if (tok ~ /^\.\.\//) {
        ok = exists(dirof(file) tok)              # relative to the citing file
      } else if (tok ~ /^docs\// || base ~ /^[A-Z][A-Z0-9_-]*\.md$/) {
        ok = exists(tok) || exists(dirof(file) tok)
      } else {
        continue
      }
    } else {
      if (tok !~ /^[A-Z][A-Z0-9_-]*\.md$/) continue # lower-case names: not docs
      ok = exists(tok) || exists("docs/" tok) || exists(dirof(file) tok)
    }
    if (!ok) report(file, n, line, "no document " tok " in the repository")
  }
}
BEGIN {
  nsec = split(sections, parts, " ")
  for (i = 1; i <= nsec; i++) known[parts[i]] = 1
  files = 0; problems = 0
  while ((getline file < listfile) > 0) {
    if (file == self) continue
    files++
    n = 0; pending = 0
    while ((getline line < file) > 0) {
      n++
      if (pending) {
        pending = 0
        cont = line
        sub(/^[ \t]*(\/\/+|#+|\*+|--|;+)?[ \t]*/, "", cont)
        if (substr(cont, 1, 2) == "\302\247") {
          num = section_at(cont)
          if (num != "") check_section(file, n - 1, prevline " " cont, num)
        }
      }
      if (index(line, "DESIGN")) check_design(file, n, line)
      if (index(line, "../shared") || index(line, "/work/shared"))
        report(file, n, line, "path outside the repository")
      if (index(line, ".md")) check_docs(file, n, line)
      prevline = line
    }
    close(file)
  }
  printf "citations: %d files checked, %d problems\n", files, problems
  exit(problems > 0 ? 1 : 0)
}'
