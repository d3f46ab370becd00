#!/usr/bin/env bash
# Runs the tests on another Node release: `bash scripts/test-on-node.sh 24.21.0 [vitest arguments…]`
# (no arguments after the version: the whole suite).
#
# The release comes from the npm registry (the `node-<platform>-<arch>` packages hold Node's official
# builds), kept under node_modules/.cache/node/<version>. The installed node_modules serve as they are:
# the one native addon loaded on Node 22 and later is better-sqlite3 13, prebuilt for Node-API, and
# the build (dist/) is plain JavaScript. Run after `bash scripts/install.sh && npm run build`.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:?usage: bash scripts/test-on-node.sh VERSION [vitest arguments…]}"
shift
package="node-$(node -p 'process.platform + "-" + process.arch')"
dir="node_modules/.cache/node/$version"

if [ ! -x "$dir/bin/node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # Tried twice: a registry hiccup should not fail a whole CI run.
  fetch() { (cd "$tmp" && npm pack --silent "$package@$version" > /dev/null 2>&1); }
  fetch || { sleep 5; fetch; } || { echo "cannot fetch $package@$version from the npm registry (is $version a Node release?)" >&2; exit 1; }
  mkdir -p "$dir"
  tar xzf "$tmp"/*.tgz -C "$dir" --strip-components=1
  rm -rf "$tmp"
fi

export PATH="$PWD/$dir/bin:$PATH"
echo "tests on node $(node --version)"
exec npx vitest run "$@"
