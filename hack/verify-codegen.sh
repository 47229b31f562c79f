#!/usr/bin/env bash
# Fails when the generated code under pkg/ differs from what
# hack/update-codegen.sh produces from the current types.
set -o errexit -o nounset -o pipefail

SCRIPT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "${TMP}"' EXIT

# Regenerate in a copy so a failed check leaves the work tree untouched.
tar -C "${SCRIPT_ROOT}" --exclude=./.git --exclude=./_output -cf - . | tar -C "${TMP}" -xf -
"${TMP}/hack/update-codegen.sh" >/dev/null

if ! diff -Naupr "${SCRIPT_ROOT}/pkg" "${TMP}/pkg"; then
    echo "generated code is stale: run hack/update-codegen.sh" >&2
    exit 1
fi
echo "generated code is up to date"
