#!/usr/bin/env bash
# 03-ext4: a real filesystem on the volume: mkfs.ext4, loop-mount, copy a tree
# of random files in, fsck clean, fsvol umount/mount cycle, files cmp equal.
. "$(dirname "$0")/../lib.sh"
requires mkfs.ext4
requires fsck.ext4
requires_root "mount -o loop"

# A tree of random files of awkward sizes, made once.
SRC=$T/src
mkdir -p "$SRC/a/b" "$SRC/c"
i=0
for sz in 0 1 511 4097 65535 $((300 * 1024 + 7)) $((1 * MiB)) $((3 * MiB + 123)); do
	random_file "$SRC/f$i" "$sz"
	random_file "$SRC/a/g$i" $((sz / 2))
	i=$((i + 1))
done
random_file "$SRC/a/b/big" $((6 * MiB + 4095))
for j in $(seq 1 40); do random_file "$SRC/c/small$j" $((j * 333)); done

ext4_case() {
	local name=$1 d=$T/$1 m
	shift
	mkdir -p "$d"
	m=$(members "$d/m" "$2")
	# shellcheck disable=SC2086
	"$FSVOL" create -l "$1" -c 64K -s 24M $m >/dev/null || fail "$name: create"
	# shellcheck disable=SC2086
	fsvol_mount "$d/mnt" $m
	mkfs.ext4 -q -F "$d/mnt/volume" >"$d/mkfs.out" 2>&1 || fail "$name: mkfs.ext4: $(cat "$d/mkfs.out")"
	loop_mount "$d/mnt/volume" "$d/fs"
	cp -a "$SRC" "$d/fs/tree" || fail "$name: copying the tree failed"
	sync -f "$d/fs/tree" 2>/dev/null || sync
	diff -r "$SRC" "$d/fs/tree" >/dev/null || fail "$name: tree differs right after the copy"
	loop_umount "$d/fs"
	fsck.ext4 -fn "$d/mnt/volume" >"$d/fsck.out" 2>&1 || fail "$name: fsck.ext4 -fn: $(cat "$d/fsck.out")"
	fsvol_umount "$d/mnt"
	if [[ $1 != raid0 ]]; then
		# shellcheck disable=SC2086
		"$FSVOL_VERIFY" $m >"$d/verify.out" 2>&1 || fail "$name: fsvol-verify: $(cat "$d/verify.out")"
	fi
	# shellcheck disable=SC2086
	fsvol_mount "$d/mnt" $m
	fsck.ext4 -fn "$d/mnt/volume" >"$d/fsck2.out" 2>&1 || fail "$name: fsck.ext4 after remount: $(cat "$d/fsck2.out")"
	loop_mount "$d/mnt/volume" "$d/fs" ro
	local f n=0
	while IFS= read -r -d '' f; do
		cmp "$SRC/$f" "$d/fs/tree/$f" || fail "$name: $f differs after remount"
		n=$((n + 1))
	done < <(cd "$SRC" && find . -type f -print0)
	[[ $n -eq $(find "$d/fs/tree" -type f | wc -l) ]] || fail "$name: file count differs"
	loop_umount "$d/fs"
	fsvol_umount "$d/mnt"
	note "$name: $n files ok"
}

ext4_case raid0 raid0 4
ext4_case raid1 raid1 2
ext4_case raid5 raid5 4
ext4_case raid6 raid6 5
