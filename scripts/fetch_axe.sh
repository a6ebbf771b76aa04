#!/usr/bin/env bash
# Vendor axe-core (the accessibility engine the browser tests inject) into tests/support/data, with its
# licence: tests never reach the network. Run at dev time to update; the files are committed.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:-4.10.3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "axe-core@$VERSION" >/dev/null && tar xzf axe-core-*.tgz)
mkdir -p tests/support/data
cp "$tmp/package/axe.min.js" tests/support/data/axe.min.js
cp "$tmp/package/LICENSE" tests/support/data/axe-core.LICENSE
echo "axe-core $VERSION" > tests/support/data/axe-core.VERSION
