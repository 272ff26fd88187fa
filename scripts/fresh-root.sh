#!/bin/sh
# Prove set-up on a clean Debian 12: debootstrap a minbase root, clone this
# repository into it, and run the README's two commands there as a new user
# would, so that a missing install step shows here before a user finds it.
#   usage: scripts/fresh-root.sh [ROOTDIR] [--demo-only]
# ROOTDIR (default /var/tmp/heteroopt-fresh) is made anew each run.  The
# mirror is the one this machine's apt uses.  The times of both commands are
# printed at the end and the logs kept in ROOTDIR/root/*.log.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=/var/tmp/heteroopt-fresh
ONLY=""
for a in "$@"; do
	case $a in
	--demo-only) ONLY=demo ;;
	-*) echo "fresh-root: unknown option $a" >&2; exit 2 ;;
	*) DIR=$a ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-root: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null 2>&1 || {
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}
# The first Debian mirror apt is set up with, deb822 or one-line style.
MIRROR=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v security | head -1)
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null)
[ -n "$MIRROR" ] || { echo "fresh-root: no Debian mirror in /etc/apt" >&2; exit 1; }

umount_all() {
	for m in dev/pts dev proc sys; do
		mountpoint -q "$DIR/$m" 2>/dev/null && umount -l "$DIR/$m"
	done
	return 0
}
trap umount_all EXIT
umount_all
rm -rf "$DIR"
echo "fresh-root: debootstrap minbase bookworm into $DIR"
debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" >"$DIR.debootstrap.log" 2>&1 ||
	{ tail -20 "$DIR.debootstrap.log"; exit 1; }
# Security updates as a real install has them; the kernel headers must match
# the kernel image apt installs.
if [ -e /etc/apt/sources.list.d/debian.sources ]; then
	cp /etc/apt/sources.list.d/debian.sources "$DIR/etc/apt/sources.list.d/"
	rm -f "$DIR/etc/apt/sources.list"
fi
# The network's own certificate authorities, as this machine has them: part of
# the site's set-up (a proxy that inspects TLS), not of the project's.
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$DIR/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$DIR/usr/local/share/ca-certificates/"
fi
git clone -q "$ROOT" "$DIR/root/heteroopt"
mount -t proc proc "$DIR/proc"
mount -t sysfs sys "$DIR/sys"
mount --bind /dev "$DIR/dev"
mount --bind /dev/pts "$DIR/dev/pts"
# A user who cloned has git; the root gets it as such a machine would.
chroot "$DIR" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends git ca-certificates' \
	>"$DIR.git.log" 2>&1 || { tail -20 "$DIR.git.log"; exit 1; }

run_in_root() { # NAME COMMAND
	start=$(date +%s)
	rc=0
	chroot "$DIR" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
		/bin/sh -c "cd /root/heteroopt && $2" >"$DIR/root/$1.log" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	echo "fresh-root: '$2' exit $rc in $secs s (log $DIR/root/$1.log)"
	tail -5 "$DIR/root/$1.log" | sed 's/^/    /'
	return $rc
}
status=0
run_in_root demo "sh scripts/demo.sh" || status=1
[ "$ONLY" = demo ] || run_in_root check "sh scripts/check.sh" || status=1
exit $status
