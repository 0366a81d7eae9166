#!/bin/sh
# Installs what `make test` needs on a fresh Debian 12 that has only gcc and make.
# Installs nothing when everything is present, so repeated test runs stay offline.
set -eu

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

# wine64: the real .sys is loaded under Wine by `make wine-check`
for p in clang libclang-rt-14-dev llvm mingw-w64 gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 binutils make wine64; do
    have_pkg "$p" || need="$need $p"
done

if [ -z "$need" ]; then
    exit 0
fi

if [ "$(id -u)" != "0" ]; then
    SUDO=sudo
else
    SUDO=
fi

echo "ensure-deps: installing:$need" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086 # word splitting of the package list is intended
$SUDO apt-get install -y -q --no-install-recommends $need
