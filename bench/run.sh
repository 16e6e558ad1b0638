#!/usr/bin/env bash
# make bench: side-by-side comparisons in one run, printed as ratios.
# Absolute numbers on this class of machine are noisy (shared VMs); the
# reference is always measured in the same run, on the same files.
#   BENCH_SECS=5 (per fio job)  BENCH_DIR=/dev/shm (tmpfs: stable ratios)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FSVOL_BUILD:-build}
FSVOL=$here/$build/bin/fsvol
secs=${BENCH_SECS:-5}
base=${BENCH_DIR:-/dev/shm}
T=$(mktemp -d "$base/fsvol-bench.XXXXXX")
MNT=$T/mnt
mounted=()
cleanup() {
	for m in "${mounted[@]}"; do "$FSVOL" umount "$m" >/dev/null 2>&1 || umount -l "$m" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
mkdir -p "$MNT"

# fio JSON -> "read IOPS" and "read bytes/s" summed over jobs
fio_read() { # name args...
	local name=$1; shift
	fio --name="$name" --output-format=json --time_based --runtime="$secs" --ramp_time=1 \
		--direct=1 --ioengine=io_uring --group_reporting "$@" > "$T/$name.json"
	jq -r '.jobs[0].read | "\(.iops) \(.bw_bytes)"' "$T/$name.json"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }'; }
row() { printf '%-44s %14s %14s %8s\n' "$@"; }

n=4 size=256M
members=()
for i in $(seq 0 $((n - 1))); do members+=("$T/m$i"); done
"$FSVOL" create -l raid0 -c 64K -s "$size" "${members[@]}" >/dev/null
# raw reference: the same 4 files (past the superblock area), same total QD
raw_files=$(IFS=:; echo "${members[*]}")
echo "fsvol bench: $n-member raid0, chunk 64K, members on $(df --output=fstype "$T" | tail -1) ($base), ${secs}s per job"
row "comparison" "fsvol" "reference" "ratio"

"$FSVOL" mount --log "$T/daemon.log" "$MNT" "${members[@]}"
mounted+=("$MNT")
# preallocate the volume so reads hit written blocks
dd if=/dev/zero of="$MNT/volume" bs=1M count=512 oflag=direct conv=notrunc status=none

read -r raw_iops _ < <(fio_read raw4k --filename="$raw_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=200M)
read -r vol_iops _ < <(fio_read vol4k --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=800M)
row "4K random read QD32: volume vs raw members" "$(printf %.0f "$vol_iops") IOPS" "$(printf %.0f "$raw_iops") IOPS" "$(ratio "$vol_iops" "$raw_iops")"

read -r _ raw_bw < <(fio_read raw1m --filename="$raw_files" --rw=read --bs=1M --iodepth=2 --numjobs=4 --offset=1M --size=200M)
read -r _ vol_bw < <(fio_read vol1m --filename="$MNT/volume" --rw=read --bs=1M --iodepth=8 --numjobs=1 --size=800M)
row "1M sequential read QD8: volume vs raw" "$(awk -v b="$vol_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(awk -v b="$raw_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(ratio "$vol_bw" "$raw_bw")"

if [ -x "$here/$build/bin/parity_bench" ]; then
	echo
	echo "parity kernels vs memcpy (64 KiB chunks):"
	"$here/$build/bin/parity_bench" 200
fi
