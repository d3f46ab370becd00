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

# npm warns (EBADENGINE) of two packages whose engines exclude Node 20 and that are not used there:
# better-sqlite3 13 (Node >= 22; on Node 20 the cluster API loads better-sqlite3 12, installed beside
# it as better-sqlite3-node20) and faas-js-runtime (the compatibility suite's peer, a test dependency).
# Those warnings ask nothing of the reader, so they are left out; every other line passes through.
quiet_known_engines() {
  awk '
    /npm warn EBADENGINE Unsupported engine/ { block = $0 "\n"; inblock = 1; next }
    inblock { block = block $0 "\n"
      if ($0 ~ /package: /) known = ($0 ~ /package: .(better-sqlite3@13|faas-js-runtime@)/)
      if ($0 ~ /EBADENGINE }/) { if (!known) printf "%s", block; else skipped++; inblock = 0; known = 0 }
      next }
    { print; fflush() }
    END { if (skipped) print "(" skipped " engine notices for packages Node " ENVIRON["NODE_MAJOR"] " does not use left out: better-sqlite3 13, faas-js-runtime)" }'
}
export NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"

npm_install() {
  echo "npm ci: a few minutes on a fresh machine (better-sqlite3 compiles from source where no prebuilt binary downloads)"
  npm ci --no-fund --no-audit 2>&1 | quiet_known_engines
  return "${PIPESTATUS[0]}"
}

if ! npm_install; then
  echo "npm ci failed; trying once more" >&2
  sleep 5
  npm_install
fi
