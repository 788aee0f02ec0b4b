#!/usr/bin/env bash
# Times README's first command (scripts/demo.sh) on a bare Debian 12: a minimal debootstrap of
# bookworm (what a "debian:12" container holds), this checkout copied in, the demo run as root in
# a chroot with nothing installed beforehand. Needs root, debootstrap (installed if missing) and
# Debian's mirror; the base system is kept in $BARE (default /tmp/potop-bare-bookworm) for the
# next run, and each run starts from a fresh copy of it.
#   sudo bash scripts/demo-bare.sh          # STEPS=... is passed to the demo
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "demo-bare: run as root (it builds a chroot)" >&2; exit 2; }
base=${BARE:-/tmp/potop-bare-bookworm}
root=$base.run
if [ ! -x "$base/bin/bash" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  rm -rf "$base.partial"
  debootstrap --variant=minbase bookworm "$base.partial" http://deb.debian.org/debian
  # The host's mirror settings and name resolution: the chroot installs through them.
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$base.partial/etc/apt/sources.list.d/" && rm -f "$base.partial/etc/apt/sources.list"
  fi
  cp /etc/resolv.conf "$base.partial/etc/"
  mv "$base.partial" "$base"
fi
unmount() { for m in dev/pts dev proc sys; do umount -R "$root/$m" 2>/dev/null || true; done; }
unmount
rm -rf "$root"
cp -a "$base" "$root"
trap 'unmount' EXIT
mkdir -p "$root/root/potop"
# The checkout's files as git sees them (committed or not), without what builds and runs wrote.
git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$root/root/potop"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
start=$SECONDS
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  STEPS="${STEPS:-2000}" bash -c 'cd /root/potop && bash scripts/demo.sh'
echo "demo-bare: README's first command on a bare Debian 12 took $((SECONDS - start)) s" \
  "($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
