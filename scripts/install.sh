#!/usr/bin/env bash
# `npm ci` that does not depend on the machine's user-level npm settings.
#
# better-sqlite3 12 (the cluster API's SQLite driver on Node 20) builds from source when no prebuilt
# binary can be downloaded, and node-gyp then needs Node's headers. Without a configured nodedir it
# downloads them, which fails on a machine that reaches only the npm registry. The running Node's own headers are the right ones and are usually
# installed beside it (<prefix>/include/node), so point node-gyp there unless told otherwise.
#
# A failed install is tried once more: a registry hiccup should not fail a whole CI run.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${npm_config_nodedir:-}" ]; then
  prefix="$(dirname "$(dirname "$(node -p 'process.execPath')")")"
  if [ -f "$prefix/include/node/node.h" ] && [ -f "$prefix/include/node/common.gypi" ]; then
    export npm_config_nodedir="$prefix"
  fi
fi

echo "node $(node --version), npm $(npm --version), node-gyp headers: ${npm_config_nodedir:-as npm is configured}"

if ! npm ci; then
  echo "npm ci failed; trying once more" >&2
  sleep 5
  npm ci
fi
