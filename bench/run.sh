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
	set +e # a server already gone is not a failure of the run
	for m in "${mounted[@]}"; do "$FSVOL" umount "$m" >/dev/null 2>&1 || umount -l "$m" 2>/dev/null || true; done
	umount "$T/bind" 2>/dev/null || true
	[ -s "$T/nbd.pid" ] && kill "$(cat "$T/nbd.pid")" 2>/dev/null
	for p in "$T"/nbdmem*.pid; do [ -s "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
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
# write the whole volume so reads hit written blocks, here and in-process (core.sh)
dd if=/dev/zero of="$MNT/volume" bs=1M count=$(($(stat -c %s "$MNT/volume") >> 20)) oflag=direct conv=notrunc status=none

read -r raw_iops _ < <(fio_read raw4k --filename="$raw_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=200M)
read -r vol_iops _ < <(fio_read vol4k --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 --numjobs=1 --size=800M)
row "4K random read QD32: volume vs raw members" "$(printf %.0f "$vol_iops") IOPS" "$(printf %.0f "$raw_iops") IOPS" "$(ratio "$vol_iops" "$raw_iops")"

read -r _ raw_bw < <(fio_read raw1m --filename="$raw_files" --rw=read --bs=1M --iodepth=2 --numjobs=4 --offset=1M --size=200M)
read -r _ vol_bw < <(fio_read vol1m --filename="$MNT/volume" --rw=read --bs=1M --iodepth=8 --numjobs=1 --size=800M)
row "1M sequential read QD8: volume vs raw" "$(awk -v b="$vol_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(awk -v b="$raw_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(ratio "$vol_bw" "$raw_bw")"

# Counters' own cost (the DISKPERF question): the same volume, stats all vs
# off, alternated three times; the ratio of the medians.
"$FSVOL" umount "$MNT"
mounted=()
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$T/stats_off" && : >"$T/stats_all"
for rep in 1 2 3; do
	for level in off all; do
		"$FSVOL" mount --stats "$level" --log "$T/daemon.log" "$MNT" "${members[@]}"
		mounted+=("$MNT")
		fio_read "stats_$level$rep" --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 \
			--numjobs=1 --size=800M | awk '{ print $1 }' >>"$T/stats_$level"
		"$FSVOL" umount "$MNT"
		mounted=()
	done
done
stats_off=$(median <"$T/stats_off")
stats_all=$(median <"$T/stats_all")
row "4K random read QD32: --stats all vs off" "$(printf %.0f "$stats_all") IOPS" "$(printf %.0f "$stats_off") IOPS" "$(ratio "$stats_all" "$stats_off")"

# The spindle model: its daemon CPU per 10k emulated I/Os and its release
# lateness at QD1024 over 8 members, next to this machine's own timer
# (bench/emul.sh; docs/bench.md, "The emulation row").
BENCH_SECS=$secs BENCH_DIR=$base FSVOL_BUILD=$build "$here/bench/emul.sh" hdd ssd

# How many emulated hdd members one core keeps at their modelled rate, live
# against virtual time (bench/scale.sh; docs/bench.md, "The scale row").
FSVOL_BUILD=$build "$here/bench/scale.sh"

# The FUSE front end against bindfs, a plain FUSE passthrough, over the same
# file: fsvol single-member volume vs bindfs exposing that member file.
"$FSVOL" create -l single -s 256M "$T/single" >/dev/null
mkdir -p "$T/bind" "$T/bindsrc"
mv "$T/single" "$T/bindsrc/single"
if command -v bindfs >/dev/null && bindfs -o direct_io "$T/bindsrc" "$T/bind" 2>/dev/null; then
	"$FSVOL" mount --log "$T/daemon.log" "$MNT" "$T/bindsrc/single"
	mounted+=("$MNT")
	read -r f_iops _ < <(fio_read fuse4k --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 --size=200M)
	read -r b_iops _ < <(fio_read bind4k --filename="$T/bind/single" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=200M)
	read -r _ f_bw < <(fio_read fuse1m --filename="$MNT/volume" --rw=read --bs=1M --iodepth=8 --size=200M)
	read -r _ b_bw < <(fio_read bind1m --filename="$T/bind/single" --rw=read --bs=1M --iodepth=8 --offset=1M --size=200M)
	row "FUSE front end vs bindfs, 4K random QD32" "$(printf %.0f "$f_iops") IOPS" "$(printf %.0f "$b_iops") IOPS" "$(ratio "$f_iops" "$b_iops")"
	row "FUSE front end vs bindfs, 1M sequential" "$(awk -v b="$f_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(awk -v b="$b_bw" 'BEGIN{printf "%.0f MB/s", b/1e6}')" "$(ratio "$f_bw" "$b_bw")"
	"$FSVOL" umount "$MNT"
	mounted=()
	umount "$T/bind" 2>/dev/null || fusermount3 -u "$T/bind"
else
	echo "bindfs not available: FUSE front end comparison skipped"
fi

# The NBD export against `nbdkit file` on the same member file (a single
# volume), fio's nbd engine, the same job; alternated three times (medians).
# fsvol serve --buffered reads through the page cache as nbdkit file does; the
# default (O_DIRECT members) is shown as well.
fio_nbd() { # name uri args... -> "read IOPS" "read bytes/s"
	local name=$1 uri=$2; shift 2
	fio --name="$name" --output-format=json --time_based --runtime="$secs" --ramp_time=1 \
		--ioengine=nbd --uri="$uri" --group_reporting --output="$T/$name.json" "$@" >/dev/null
	jq -r '.jobs[0].read | "\(.iops) \(.bw_bytes)"' "$T/$name.json"
}
nbd_uri() { echo "nbd+unix:///?socket=$1"; }
nbd_stop() { # pidfile: SIGTERM, wait (bounded) for the server to go
	local pid i
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
}
# nbd_up buffered|direct|nbdkit SOCK FILE: FILE exported on SOCK (`fsvol serve`
# with or without --buffered, or `nbdkit file`), its pid in $T/nbd.pid; waits for both
nbd_up() {
	local i
	case $1 in
	buffered) "$FSVOL" serve --buffered --nbd "unix:$2" --pidfile "$T/nbd.pid" "$3" ;;
	direct) "$FSVOL" serve --nbd "unix:$2" --pidfile "$T/nbd.pid" "$3" ;;
	nbdkit) nbdkit -U "$2" -P "$T/nbd.pid" file "$3" ;;
	esac
	for ((i = 0; i < 100; i++)); do [ -s "$T/nbd.pid" ] && [ -S "$2" ] && break; sleep 0.1; done
}
if command -v nbdkit >/dev/null && fio --enghelp=nbd >/dev/null 2>&1; then
	"$FSVOL" create -l single -s 256M "$T/nbdm" >/dev/null
	dd if=/dev/urandom of="$T/nbdm" bs=1M seek=1 count=256 conv=notrunc status=none
	for f in nbd_b4k nbd_b1m nbd_n4k nbd_n1m nbd_d4k nbd_d1m; do : >"$T/$f"; done
	for rep in 1 2 3; do
		for srv in buffered direct nbdkit; do
			sock=$T/nbd-$srv.sock
			nbd_up "$srv" "$sock" "$T/nbdm"
			k=${srv:0:1}
			fio_nbd "nbd4k$srv$rep" "$(nbd_uri "$sock")" --rw=randread --bs=4k --iodepth=32 --size=200M |
				awk '{ print $1 }' >>"$T/nbd_${k}4k"
			fio_nbd "nbd1m$srv$rep" "$(nbd_uri "$sock")" --rw=read --bs=1M --iodepth=8 --size=200M |
				awk '{ print $2 }' >>"$T/nbd_${k}1m"
			nbd_stop "$T/nbd.pid"
			rm -f "$T/nbd.pid" "$sock"
		done
	done
	mbs() { awk -v b="$1" 'BEGIN{printf "%.0f MB/s", b/1e6}'; }
	a=$(median <"$T/nbd_b4k") d=$(median <"$T/nbd_d4k") b=$(median <"$T/nbd_n4k")
	row "NBD export vs nbdkit file, 4K random QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
	row "  the same, O_DIRECT members (default)" "$(printf %.0f "$d") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$d" "$b")"
	a=$(median <"$T/nbd_b1m") d=$(median <"$T/nbd_d1m") b=$(median <"$T/nbd_n1m")
	row "NBD export vs nbdkit file, 1M seq QD8" "$(mbs "$a")" "$(mbs "$b")" "$(ratio "$a" "$b")"
	row "  the same, O_DIRECT members (default)" "$(mbs "$d")" "$(mbs "$b")" "$(ratio "$d" "$b")"
else
	echo "nbdkit or fio's nbd engine missing: NBD export comparison skipped"
fi

# NBD members (members/member_nbd.c) against the same exports read directly:
# four `nbdkit memory` exports on unix sockets, a raid0 of them mounted (fio
# through FUSE, 4K random reads at QD32) vs fio's nbd engine on the four
# exports at once (4 jobs x QD8: the same total queue depth); then the same
# members in-process against fio again; alternated pairs, medians.
if command -v nbdkit >/dev/null && fio --enghelp=nbd >/dev/null 2>&1; then
	nu=()
	for i in 0 1 2 3; do
		nbdkit -U "$T/nbdmem$i.sock" -P "$T/nbdmem$i.pid" memory 256M
		nu+=("nbd+unix:///?socket=$T/nbdmem$i.sock")
	done
	"$FSVOL" create -l raid0 -c 64K "${nu[@]}" >/dev/null
	"$FSVOL" mount --log "$T/daemon.log" "$MNT" "${nu[@]}"
	mounted+=("$MNT")
	dd if=/dev/urandom of="$MNT/volume" bs=1M count=800 oflag=direct conv=notrunc status=none
	direct=()
	for i in 0 1 2 3; do direct+=(--name="d$i" --uri="${nu[i]}"); done
	fio_direct() { # OUT: fio's nbd engine on the four exports, read IOPS appended
		fio --output-format=json --time_based --runtime="$secs" --ramp_time=1 --ioengine=nbd \
			--rw=randread --bs=4k --iodepth=8 --size=199M --offset=1M --group_reporting \
			--output="$T/nbdmd.json" "${direct[@]}" >/dev/null
		jq -r '.jobs[0].read.iops' "$T/nbdmd.json" >>"$1"
	}
	# fio's figure swings widely from run to run here (four processes and four
	# servers on few cores): five alternated pairs per comparison
	: >"$T/nbdm_v" && : >"$T/nbdm_d"
	for rep in 1 2 3 4 5; do
		fio_read "nbdmv$rep" --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 --size=800M |
			awk '{ print $1 }' >>"$T/nbdm_v"
		fio_direct "$T/nbdm_d"
	done
	"$FSVOL" umount "$MNT"
	mounted=()
	a=$(median <"$T/nbdm_v") b=$(median <"$T/nbdm_d")
	row "NBD members (raid0 x4, FUSE) vs fio nbd, 4K QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
	# the same members in-process (fsvol-bench --members): no FUSE round trip
	if [ -x "$here/$build/bin/fsvol-bench" ]; then
		list=$(IFS=,; echo "${nu[*]}")
		: >"$T/nbdm_i" && : >"$T/nbdm_d2"
		for rep in 1 2 3 4 5; do
			"$here/$build/bin/fsvol-bench" -q -b4K -r -o32 -t1 -d"$secs" -W1 -Su --json --members "$list" |
				jq '.results.total.read.iops' >>"$T/nbdm_i"
			fio_direct "$T/nbdm_d2"
		done
		a=$(median <"$T/nbdm_i") b=$(median <"$T/nbdm_d2")
		row "  in-process (fsvol-bench) vs fio nbd" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
	fi
	for i in 0 1 2 3; do kill "$(cat "$T/nbdmem$i.pid")" 2>/dev/null || true; done
else
	echo "nbdkit or fio's nbd engine missing: NBD members comparison skipped"
fi

# fsvol-bench against fio: the same raw file, the same job, alternated
# three times (medians); the generator must not be the bottleneck.
if [ -x "$here/$build/bin/fsvol-bench" ]; then
	raw=$T/raw.dat
	# written, not fallocated: tmpfs reports fallocated pages as holes (fsvol-bench warns)
	dd if=/dev/zero of="$raw" bs=1M count=256 status=none
	: >"$T/fio4k" && : >"$T/fb4k" && : >"$T/fio1m" && : >"$T/fb1m"
	for rep in 1 2 3; do
		fio_read "f4k$rep" --filename="$raw" --rw=randread --bs=4k --iodepth=32 --size=256M | awk '{ print $1 }' >>"$T/fio4k"
		"$here/$build/bin/fsvol-bench" -q -b4K -r -o32 -d"$secs" -W1 -Sh --json "$raw" |
			jq '.results.total.read.iops' >>"$T/fb4k"
		fio_read "f1m$rep" --filename="$raw" --rw=read --bs=1M --iodepth=2 --size=256M | awk '{ print $2 }' >>"$T/fio1m"
		"$here/$build/bin/fsvol-bench" -q -b1M -s -o2 -d"$secs" -W1 -Sh --json "$raw" |
			jq '.results.total.read.bytes / .results.total.read.ios * .results.total.read.iops' >>"$T/fb1m"
	done
	a=$(median <"$T/fb4k") b=$(median <"$T/fio4k")
	row "fsvol-bench vs fio, raw file, 4K random QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
	a=$(median <"$T/fb1m") b=$(median <"$T/fio1m")
	row "fsvol-bench vs fio, raw file, 1M seq QD2" "$(awk -v x="$a" 'BEGIN{printf "%.0f MB/s", x/1e6}')" "$(awk -v x="$b" 'BEGIN{printf "%.0f MB/s", x/1e6}')" "$(ratio "$a" "$b")"
fi

# The asynchronous core: memory, the FUSE front end, the in-process engine.
. "$here/bench/core.sh"
# The FUSE path's ceiling (null servers), members on a real disk, the engine's cost.
. "$here/bench/disk.sh"

if [ -x "$here/$build/bin/parity_bench" ]; then
	echo
	echo "parity and CRC32C kernels, fsvol beside ISA-L (alternated rounds, medians; docs/parity.md):"
	"$here/$build/bin/parity_bench" 30 7
fi
