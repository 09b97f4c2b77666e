#!/bin/sh
# Install the Debian packages tschunk builds, tests and fuzzes with, when missing, and those named as
# arguments (scripts/check-cross.sh's cross compilers and emulator).
# As root it runs apt-get; otherwise it prints the command to run and fails.
set -eu
PKGS="make gcc pkgconf libroaring-dev libxxhash-dev libcriterion-dev clang libclang-rt-14-dev gzip $*"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: missing Debian packages:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: run as root:  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing
