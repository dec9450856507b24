#!/usr/bin/env bash
# Vendors the graph-layout library pinned in package.json into web/vendor/, where go:embed
# takes it. Run it after changing the pin; TestVendoredAssets (vendor_test.go) checks in CI
# that web/vendor matches the pinned version byte for byte.
#   tools/dashboard/vendor.sh            install the pin into a temporary prefix and copy it
#   tools/dashboard/vendor.sh PREFIX     copy from PREFIX/node_modules (already installed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pin=$(node -e 'process.stdout.write(require(process.argv[1]).dependencies["@dagrejs/dagre"])' "$here/package.json")
prefix=${1:-}
if [ -z "$prefix" ]; then
  prefix=$(mktemp -d)
  trap 'rm -rf "$prefix"' EXIT
  echo '{"private":true}' >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "@dagrejs/dagre@$pin"
fi
pkg="$prefix/node_modules/@dagrejs/dagre"
got=$(node -e 'process.stdout.write(require(process.argv[1]).version)' "$pkg/package.json")
[ "$got" = "$pin" ] || { echo "$pkg is @dagrejs/dagre $got, package.json pins $pin" >&2; exit 1; }
mkdir -p "$here/web/vendor"
cp "$pkg/dist/dagre.esm.js" "$here/web/vendor/dagre.esm.js"
cp "$pkg/LICENSE" "$here/web/vendor/dagre.LICENSE"
printf '@dagrejs/dagre %s dist/dagre.esm.js\n' "$pin" >"$here/web/vendor/VERSION"
echo "vendored @dagrejs/dagre $pin into $here/web/vendor"
