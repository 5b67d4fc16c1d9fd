#!/bin/sh
# Install the Debian packages listed in tests/system-packages.txt that are missing.
# As root with apt-get: installs them (without starting their services on this
# machine: the lab runs its own daemons inside its UML hosts). Otherwise: says
# what is missing; the tests that need it then skip with that reason.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pkgs=$(grep -v '^\s*#' "$here/system-packages.txt" | grep -v '^\s*$')
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "system-deps: missing Debian packages:$missing" >&2
    echo "system-deps: as root run: apt-get install$missing" >&2
    exit 0
fi
echo "system-deps: installing$missing"
# Keep package scripts from starting sshd, rpcbind or nfsd on this machine.
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created_policy=1
fi
trap '[ "$created_policy" = 1 ] && rm -f "$policy"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
