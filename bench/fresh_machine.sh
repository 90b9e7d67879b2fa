#!/usr/bin/env bash
# Time from a fresh Debian 12 machine to the first `simulate` answer: a minimal Debian
# (debootstrap --variant=minbase: no compiler, no python3) in a folder, a clone of this
# repository inside it, then the README's first command, timed as a whole. Needs root,
# debootstrap and the network to a Debian mirror (the host's /etc/apt sources are copied in).
# Prints the seconds for the packages, the build and the whole; the folder is removed after.
#
#   sudo bench/fresh_machine.sh [FOLDER]    (default: a new folder under /tmp)
set -euo pipefail
repository=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$(mktemp -d /tmp/trainsim-fresh.XXXXXX)}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

cleanup() {
  for mount in dev/pts dev proc; do umount "$root/$mount" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
cp /etc/resolv.conf "$root/etc/"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
  rm -f "$root/etc/apt/sources.list"
fi
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
git clone -q "$repository" "$root/root/trainsim"

# The README's first command, with the clock read before it, after the packages (dpkg's
# status file is written last), and after it.
chroot "$root" /bin/bash -c '
  cd /root/trainsim
  export HOME=/root
  start=$(date +%s.%N)
  bash scripts/build.sh > /root/build.log 2>&1 && ./build/trainsim simulate gpt3-175b-selene > /root/answer.txt
  end=$(date +%s.%N)
  packages=$(stat -c %Y /var/lib/dpkg/status)
  echo "$start $packages $end" > /root/times.txt
'
read -r start packages end < "$root/root/times.txt"
head -3 "$root/root/answer.txt"
awk -v s="$start" -v p="$packages" -v e="$end" 'BEGIN {
  printf "packages %.0f s, configure and build %.0f s, fresh machine to first answer %.0f s\n", p - s, e - p, e - s
}'
