#!/usr/bin/env bash
# Installs the Debian packages the peer benchmarks link or load, only those missing:
#   libuv1-dev (libuv), libglib2.0-dev (GLib), libgnustep-base-dev (GNUstep base, dlopen'ed),
#   util-linux (taskset), procps (uptime). SwiftNIO comes as a Swift package; CFRunLoop and
#   Foundation's RunLoop come with the toolchain.
set -euo pipefail
packages=(libuv1-dev libglib2.0-dev libgnustep-base-dev util-linux procps python3)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
