#!/usr/bin/env bash
# Given the JSON Schemas in docs/schema/, then every example intent validates against them
# (python3-jsonschema, as an editor would) and fabgate validate accepts it; and every malformed
# intent of tests/gates/intent/malformed/cases is rejected by both the schema and fabgate.
# Usage: intent_schema_test.sh SOURCE_DIR FABGATE_BINARY
set -uo pipefail
source_dir=$1
fabgate=$2
check="$source_dir/scripts/check-intent-schema"
python3 -c 'import jsonschema, yaml' 2>/dev/null ||
  { echo "intent_schema_test: skipped: python3-jsonschema or python3-yaml is not installed"; exit 77; }
work=$(mktemp -d /tmp/fabgate-schema-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HOME=$work GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
  GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for intent in examples/intent examples/clos-lab/intent; do
  out=$("$check" "$source_dir/$intent" 2>&1) || fail "$intent does not match the schema: $out"
  repo="$work/example-$(echo "$intent" | tr / -)"
  mkdir -p "$repo" && cp -r "$source_dir/$intent" "$repo/intent"
  git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -qm example
  out=$("$fabgate" validate --repo "$repo/intent" 2>&1) || fail "fabgate rejects $intent: $out"
done

cases=0
while IFS='|' read -r name file script; do
  [[ -z $name || $name == \#* ]] && continue
  cases=$((cases + 1))
  repo="$work/$name"
  mkdir -p "$repo" && cp -r "$source_dir/examples/intent" "$repo/intent"
  sed -i "$script" "$repo/intent/$file"
  if cmp -s "$repo/intent/$file" "$source_dir/examples/intent/$file"; then
    fail "$name: the sed script changed nothing in $file"
    continue
  fi
  git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" commit -qm "$name"
  "$fabgate" validate --repo "$repo/intent" >/dev/null 2>&1
  rc=$?
  [[ $rc -eq 2 ]] || fail "$name: fabgate validate exited $rc, not 2"
  if out=$("$check" "$repo/intent" 2>&1); then
    fail "$name: the schema accepts it"
  elif ! grep -q "$file" <<<"$out"; then
    fail "$name: the schema's complaint does not name $file: $out"
  fi
done <"$source_dir/tests/gates/intent/malformed/cases"

[[ $cases -ge 10 ]] || fail "only $cases malformed cases were read"
echo "intent_schema_test: 2 examples, $cases malformed intents, $failures failures"
[[ $failures -eq 0 ]]
