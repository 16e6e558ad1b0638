#!/usr/bin/env bash
# tests/tools/mdguest.sh: Linux md itself as an oracle. Boots Debian's kernel
# (6.1, md_mod and the raid personalities as modules) under qemu with TCG (no
# KVM here), runs a job script inside and powers off. docs/mdguest.md.
#
#   tests/tools/mdguest.sh build            build the guest (cached) and print its directory
#   tests/tools/mdguest.sh run JOB DISK...  boot it with DISK... as virtio disks
#                                           (/dev/vda, /dev/vdb, ... in order) and run JOB
#                                           (a busybox sh script); its output on stdout;
#                                           exit status: JOB's
#
# The cache (FSVOL_MDGUEST_DIR, default build/mdguest) holds the kernel
# package (apt-get download into deb/, unpacked with dpkg-deb -x while building:
# the host's /boot is never touched), vmlinuz and initrd.img (busybox-static, one link per applet;
# mdadm and the libraries ldd lists; the md modules in modprobe's dependency
# order). A run adds JOB as a second cpio archive after the cached one (the
# kernel unpacks both), so the cached image never changes.
# Needs: qemu-system-x86, busybox-static, mdadm, kmod, cpio (scripts/deps.sh).
set -euo pipefail

CACHE=${FSVOL_MDGUEST_DIR:-build/mdguest}
MODS=(md_mod raid0 raid1 raid10 raid456 linear virtio_blk virtio_pci)
TIMEOUT=${FSVOL_MDGUEST_TIMEOUT:-900}

die() { echo "mdguest: $*" >&2; exit 1; }

kernel_pkg() { # the versioned package linux-image-amd64 depends on
	apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1
}

build_initrd() { # $1 = unpacked kernel package, $2 = KVER, $3 = output
	local kp=$1 kver=$2 out=$3 root
	root=$(mktemp -d "$CACHE/root.XXXXXX")
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,dev,proc,sys,tmp,mods}
	# busybox: the binary as /bin/sh, every other applet a link to it (a link
	# named "busybox" would run busybox's own applet loop: error -40)
	cp /bin/busybox "$root/bin/sh"
	local a
	for a in $(/bin/busybox --list-full); do
		[[ $a == bin/sh || $a == */busybox ]] && continue
		mkdir -p "$root/$(dirname "$a")"
		ln -sf /bin/sh "$root/$a"
	done
	# mdadm and its libraries
	cp /sbin/mdadm "$root/sbin/mdadm"
	local lib
	for lib in $(ldd /sbin/mdadm | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	# modules, in the order modprobe would load them (dependencies first)
	local n=0 m ko
	: >"$root/mods/order"
	for m in "${MODS[@]}"; do
		while read -r _ ko _; do
			[[ -n $ko ]] || continue
			local base; base=$(basename "$ko")
			base=${base%.xz}
			grep -qx "$base" "$root/mods/order" && continue
			case $ko in
			*.xz) xz -dc "$ko" >"$root/mods/$base" ;;
			*) cp "$ko" "$root/mods/$base" ;;
			esac
			echo "$base" >>"$root/mods/order"
			n=$((n + 1))
		done < <(modprobe -d "$kp" -S "$kver" --show-depends "$m" 2>/dev/null | grep '^insmod ')
	done
	[[ $n -gt 0 ]] || die "no modules found for $kver under $kp"
	cat >"$root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod /mods/$m 2>/dev/null; done </mods/order
echo "mdguest: up ($(wc -l </mods/order) modules)"
rc=1
if [ -f /job.sh ]; then sh /job.sh; rc=$?; fi
sync
echo "mdguest: job exit $rc"
poweroff -f
INIT
	chmod +x "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$root"
}

build() {
	mkdir -p "$CACHE"
	CACHE=$(cd "$CACHE" && pwd)
	# one builder at a time (make check starts two guest tests together on a
	# fresh clone): the others wait here, then find the cache built
	exec 9>"$CACHE/.lock"
	flock 9
	if [[ -s $CACHE/vmlinuz && -s $CACHE/initrd.img ]]; then
		echo "$CACHE"
		return 0
	fi
	for t in qemu-system-x86_64 modprobe cpio; do command -v "$t" >/dev/null || die "needs $t (scripts/deps.sh)"; done
	[[ -x /bin/busybox && -x /sbin/mdadm ]] || die "needs busybox-static and mdadm (scripts/deps.sh)"
	local pkg deb kp kver
	pkg=$(kernel_pkg)
	[[ -n $pkg ]] || die "cannot tell linux-image-amd64's kernel package (apt-get update first?)"
	mkdir -p "$CACHE/deb"
	deb=$(ls "$CACHE/deb/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
	if [[ -z $deb ]]; then
		(cd "$CACHE/deb" && apt-get download -q "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
		deb=$(ls "$CACHE/deb/${pkg}_"*.deb | head -n 1)
	fi
	kp=$CACHE/kernel
	rm -rf "$kp"
	dpkg-deb -x "$deb" "$kp"
	kver=$(ls "$kp/lib/modules" | head -n 1)
	[[ -n $kver ]] || die "no modules in $deb"
	depmod -b "$kp" "$kver"
	build_initrd "$kp" "$kver" "$CACHE/initrd.img"
	cp "$kp/boot/vmlinuz-$kver" "$CACHE/vmlinuz.tmp"
	mv "$CACHE/vmlinuz.tmp" "$CACHE/vmlinuz"
	echo "$kver" >"$CACHE/kver"
	rm -rf "$kp" # 400 MB unpacked; the .deb stays in deb/ for a rebuild
	echo "$CACHE"
}

run() {
	local job=$1
	shift
	[[ -f $job ]] || die "no job script $job"
	local dir; dir=$(build)
	tmp=$(mktemp -d) # not local: the EXIT trap below needs it
	trap 'rm -rf "$tmp"' RETURN
	mkdir -p "$tmp/root"
	cp "$job" "$tmp/root/job.sh"
	(cd "$tmp/root" && echo job.sh | cpio -o -H newc --quiet | gzip -1) >"$tmp/job.cpio"
	cat "$dir/initrd.img" "$tmp/job.cpio" >"$tmp/initrd"
	local drives=() d i=0
	if [[ $# -le 24 ]]; then
		for d in "$@"; do drives+=(-drive "file=$d,if=virtio,format=raw,cache=none"); done
	else
		# more disks than the PCI bus has slots: eight functions a slot from
		# slot 4 on (functions probe in slot.function order: vda, vdb, ...)
		((${#} <= 8 * 26)) || die "at most $((8 * 26)) disks"
		for d in "$@"; do
			drives+=(-drive "file=$d,if=none,id=d$i,format=raw,cache=none"
				-device "virtio-blk-pci,drive=d$i,serial=d$i,addr=$(printf '0x%x.%d' $((4 + i / 8)) $((i % 8)))$( ((i % 8)) || echo ,multifunction=on)")
			i=$((i + 1))
		done
	fi
	# qemu in the background so that a TERM to this script (a test's
	# timeout) stops the guest too; its console streamed as it comes (the
	# file made first: tail must not look before the background job opens it)
	: >"$tmp/raw"
	timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot -nic none \
		-kernel "$dir/vmlinuz" -initrd "$tmp/initrd" -append "console=ttyS0 quiet panic=-1" \
		"${drives[@]}" </dev/null >"$tmp/raw" 2>&1 &
	QPID=$!
	trap 'kill "$QPID" 2>/dev/null || true; exit 143' TERM INT
	trap 'kill "$QPID" 2>/dev/null || true; rm -rf "$tmp"' EXIT
	tail -n +1 -f --pid="$QPID" "$tmp/raw" | tr -d '\r' | tee "$tmp/out"
	wait "$QPID" || true
	local rc
	rc=$(sed -n 's/^mdguest: job exit \([0-9]*\)$/\1/p' "$tmp/out" | tail -n 1)
	[[ -n $rc ]] || die "the guest did not finish its job (no 'job exit' line)"
	return "$rc"
}

case ${1:-} in
build) build ;;
run) shift; [[ $# -ge 1 ]] || die "usage: mdguest.sh run JOB DISK..."; run "$@" ;;
*) echo "usage: tests/tools/mdguest.sh build | run JOB DISK..." >&2; exit 2 ;;
esac
