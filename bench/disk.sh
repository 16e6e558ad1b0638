# bench/disk.sh: the FUSE path's ceiling, device-backed members, the engine's
# own cost (sourced by bench/run.sh after core.sh, which give $T, $MNT, $FSVOL,
# $BENCH, $secs, $here, $build, fio_read, fio_nbd, nbd_uri, nbd_up, nbd_stop, ratio,
# row, median, mounted, $pll/$have_pll). Every pair is measured side by side,
# alternated three times; the rows print medians. docs/bench.md explains each.
#   BENCH_DISK_DIR=/var/tmp   where the device-backed members live (O_DIRECT)

NULLFUSE=$here/$build/bin/null_fuse
iops() { printf '%.0f IOPS' "$1"; }
mbs_() { awk -v b="$1" 'BEGIN{printf "%.0f MB/s", b/1e6}'; }
# pair LABEL FMT A B: a row of A against B, each printed by FMT (iops, mbs_), and A/B
pair() { row "$1" "$($2 "$3")" "$($2 "$4")" "$(ratio "$3" "$4")"; }
# fio_add iops|bw FILE NAME ARGS...: fio_read's read IOPS or bytes/s appended to $T/FILE
fio_add() {
	local col=1 out=$2
	[ "$1" = bw ] && col=2
	shift 2
	fio_read "$@" | awk -v c="$col" '{ print $c }' >>"$T/$out"
}
uring_on=$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo "absent")

# null_up TRANSPORT DIR [FROM]: a null FUSE server on DIR (its file reads
# zeros, or FROM's bytes copied from a mapping)
null_up() {
	mkdir -p "$2"
	"$NULLFUSE" "$1" "$2" 1024 ${3:+"$3"} 2>>"$T/null.log" &
	echo $! >"$T/null.pid"
	for ((i = 0; i < 100; i++)); do [ -e "$2/file" ] && return 0; sleep 0.1; done
	echo "  (null_fuse $1 did not come up)" >&2
	return 1
}
null_down() { umount "$1" 2>/dev/null || umount -l "$1"; wait "$(cat "$T/null.pid")" 2>/dev/null || true; }

# The FUSE rows run under each transport the kernel offers, side by side:
# io_uring (when enable_uring is Y; `make bench` turns it on for the run)
# and /dev/fuse. Each transport's volume has members of its own (a member
# serves one mount at a time).
transports=(dev)
[ "$uring_on" = Y ] && transports=(uring dev)

# fuse_up MNT MEMBER...: a mount under $t (the caller's loop variable)
fuse_up() {
	local mnt=$1
	shift
	mkdir -p "$mnt"
	"$FSVOL" mount --fuse-transport "$t" --log "$T/daemon.log" "$mnt" "$@" && mounted+=("$mnt")
}

# vols_up DIR SIZE SRC: under $t, a single volume of SIZE (DIR/s0_$t) on
# $T/mnt1_$t and a raid0 x4 of 256M members (DIR/d0_$t..) on $T/mnt4_$t,
# both written in full from SRC so that reads hit written blocks
vols_up() {
	local dir=$1 r0=() i
	"$FSVOL" create -l single -s "$2" "$dir/s0_$t" >/dev/null
	for i in 0 1 2 3; do r0+=("$dir/d${i}_$t"); done
	"$FSVOL" create -l raid0 -c 64K -s 256M "${r0[@]}" >/dev/null
	fuse_up "$T/mnt1_$t" "$dir/s0_$t"
	fuse_up "$T/mnt4_$t" "${r0[@]}"
	dd if="$3" of="$T/mnt1_$t/volume" bs=1M count=$(($(stat -c %s "$T/mnt1_$t/volume") >> 20)) oflag=direct conv=notrunc status=none
	dd if="$3" of="$T/mnt4_$t/volume" bs=64K count=$(($(stat -c %s "$T/mnt4_$t/volume") >> 16)) oflag=direct conv=notrunc status=none
}

# ---- 1. tmpfs: fsvol's FUSE volume against the FUSE path's own ceiling ----
echo
echo "FUSE ceiling (tmpfs members; null servers answer every read with zeros; enable_uring=$uring_on):"
for f in n_dev n_uring n_dev1m n_uring1m c_dev c_uring c_dev1m c_uring1m; do : >"$T/$f"; done
# the copying null servers' source: 1 GiB of tmpfs, written like the volumes
dd if=/dev/zero of="$T/null_from" bs=1M count=1024 status=none
for t in "${transports[@]}"; do
	vols_up "$T" 1G /dev/zero
	echo "  fsvol --fuse-transport $t: $(sed -n 's/^fuse transport: //p' "$T/mnt1_$t/status")"
	for f in f_one f_r0 f_r01m; do : >"$T/${f}_$t"; done
done
for rep in 1 2 3; do
	for t in dev uring; do
		[ "$t" = uring ] && [ "$uring_on" != Y ] && continue
		null_up "$t" "$T/null" || continue
		fio_add iops "n_$t" "n$t$rep" --filename="$T/null/file" --rw=randread --bs=4k --iodepth=32 --size=900M
		fio_add bw "n_${t}1m" "n${t}1m$rep" --filename="$T/null/file" --rw=read --bs=1M --iodepth=8 --size=900M
		null_down "$T/null"
		null_up "$t" "$T/null" "$T/null_from" || continue
		fio_add iops "c_$t" "c$t$rep" --filename="$T/null/file" --rw=randread --bs=4k --iodepth=32 --size=900M
		fio_add bw "c_${t}1m" "c${t}1m$rep" --filename="$T/null/file" --rw=read --bs=1M --iodepth=8 --size=900M
		null_down "$T/null"
	done
	for t in "${transports[@]}"; do
		fio_add iops "f_one_$t" "fone$t$rep" --filename="$T/mnt1_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=900M
		fio_add iops "f_r0_$t" "fr0$t$rep" --filename="$T/mnt4_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=900M
		fio_add bw "f_r01m_$t" "fr01m$t$rep" --filename="$T/mnt4_$t/volume" --rw=read --bs=1M --iodepth=8 --size=900M
	done
done
for t in "${transports[@]}"; do
	"$FSVOL" umount "$T/mnt1_$t"
	"$FSVOL" umount "$T/mnt4_$t"
	rm -f "$T/s0_$t" "$T"/d[0-3]_"$t"
done
mounted=()
nd=$(median <"$T/n_dev") nd1=$(median <"$T/n_dev1m")
best=$nd best1=$nd1 bestname="null /dev/fuse"
if [ -s "$T/n_uring" ]; then
	nu=$(median <"$T/n_uring") nu1=$(median <"$T/n_uring1m")
	pair "null server: io_uring vs /dev/fuse, 4K QD32" iops "$nu" "$nd"
	pair "null server: io_uring vs /dev/fuse, 1M QD8" mbs_ "$nu1" "$nd1"
	best=$(awk -v x="$nu" -v y="$nd" 'BEGIN { print (x > y ? x : y) }')
	best1=$(awk -v x="$nu1" -v y="$nd1" 'BEGIN { print (x > y ? x : y) }')
	bestname="faster null"
fi
for t in "${transports[@]}"; do
	pair "FUSE ($t) single vs $bestname, 4K" iops "$(median <"$T/f_one_$t")" "$best"
	pair "FUSE ($t) raid0 x4 vs $bestname, 4K" iops "$(median <"$T/f_r0_$t")" "$best"
	pair "FUSE ($t) raid0 x4 vs $bestname, 1M" mbs_ "$(median <"$T/f_r01m_$t")" "$best1"
done
echo "  (targets: >= 0.85 each)"
# The same servers copying each read's bytes from a tmpfs file: what the copy
# of cold member pages costs any server that returns stored data (the kernel
# here has no zero-copy reply), and fsvol against that.
cbest=0 cbest1=0
for t in "${transports[@]}"; do
	[ -s "$T/c_$t" ] || continue
	c=$(median <"$T/c_$t") c1=$(median <"$T/c_${t}1m")
	pair "copying null ($t) vs zeros ($t), 4K" iops "$c" "$(median <"$T/n_$t")"
	pair "copying null ($t) vs zeros ($t), 1M" mbs_ "$c1" "$(median <"$T/n_${t}1m")"
	cbest=$(awk -v x="$c" -v y="$cbest" 'BEGIN { print (x > y ? x : y) }')
	cbest1=$(awk -v x="$c1" -v y="$cbest1" 'BEGIN { print (x > y ? x : y) }')
done
for t in "${transports[@]}"; do
	pair "FUSE ($t) single vs copying null, 4K" iops "$(median <"$T/f_one_$t")" "$cbest"
	pair "FUSE ($t) raid0 x4 vs copying null, 4K" iops "$(median <"$T/f_r0_$t")" "$cbest"
	pair "FUSE ($t) raid0 x4 vs copying null, 1M" mbs_ "$(median <"$T/f_r01m_$t")" "$cbest1"
done
rm -f "$T/null_from"

# ---- 2. members on a real disk (the root filesystem), O_DIRECT ----
D=$(mktemp -d "${BENCH_DISK_DIR:-/var/tmp}/fsvol-bench-disk.XXXXXX")
disk_cleanup() { # passthrough_ll's mount first: the rest lies under and beside it
	mountpoint -q "$T/dpll_mnt" 2>/dev/null && { fusermount3 -u "$T/dpll_mnt" 2>/dev/null || umount -l "$T/dpll_mnt"; }
	cleanup
	rm -rf "$D"
}
trap disk_cleanup EXIT INT TERM
echo
echo "device-backed members ($(df --output=source,fstype "$D" | tail -1 | tr -s ' '), O_DIRECT, 4K random reads QD32):"
for t in "${transports[@]}"; do
	vols_up "$D" 512M /dev/urandom
	for f in d_one d_r0 d_r01; do : >"$T/${f}_$t"; done
done
# the raw references: the first transport's members, written the same way
t0=${transports[0]}
d4=()
for i in 0 1 2 3; do d4+=("$D/d${i}_$t0"); done
dpll=0
mkdir -p "$D/pll_src" "$T/dpll_mnt"
ln "$D/s0_$t0" "$D/pll_src/s0"
ln "$D/s0_$t0" "$D/s0" # the NBD rows' member
((have_pll)) && "$pll" -o source="$D/pll_src",cache=never "$T/dpll_mnt" && dpll=1
d_files=$(IFS=:; echo "${d4[*]}")
d_list=$(IFS=,; echo "${d4[*]}")
for f in d_raw d_pll d_raw4 d_raw1a d_inp d_raw4b d_raw1 d_inp1; do : >"$T/$f"; done
for rep in 1 2 3; do
	fio_add iops d_raw "draw$rep" --filename="$D/s0_$t0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M
	for t in "${transports[@]}"; do
		fio_add iops "d_one_$t" "done$t$rep" --filename="$T/mnt1_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=500M
	done
	((dpll)) && fio_add iops d_pll "dpll$rep" --filename="$T/dpll_mnt/s0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M
	# raid0 x4 through FUSE under the reference's own load (4 jobs x QD8),
	# and one job at QD32 against one fio job on the 4 files
	fio_add iops d_raw4 "draw4$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=250M
	for t in "${transports[@]}"; do
		fio_add iops "d_r0_$t" "dr0$t$rep" --filename="$T/mnt4_$t/volume" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --size=1000M
	done
	fio_add iops d_raw1a "draw1a$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=250M
	for t in "${transports[@]}"; do
		fio_add iops "d_r01_$t" "dr01$t$rep" --filename="$T/mnt4_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=1000M
	done
done
for t in "${transports[@]}"; do "$FSVOL" umount "$T/mnt4_$t"; done
# In-process: the same threads and depths as fio's (4 x QD8), alternated with
# it; and one thread at QD32 against fio's one job at QD32. On a loaded
# machine each thread gets a share of the CPUs: a single thread against
# fio's four measures the scheduler, not the engine (docs/bench.md).
for rep in 1 2 3; do # the members are free of the mount now
	fio_add iops d_raw4b "draw4b$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=250M
	"$BENCH" -q -b4K -r -t4 -o8 -d"$secs" -W1 -Su --json --members "$d_list" | jq '.results.total.read.iops' >>"$T/d_inp"
	fio_add iops d_raw1 "draw1$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=250M
	"$BENCH" -q -b4K -r -t1 -o32 -d"$secs" -W1 -Su --json --members "$d_list" | jq '.results.total.read.iops' >>"$T/d_inp1"
done
for t in "${transports[@]}"; do "$FSVOL" umount "$T/mnt1_$t"; done
mounted=()
((dpll)) && { fusermount3 -u "$T/dpll_mnt" 2>/dev/null || umount -l "$T/dpll_mnt"; }
r=$(median <"$T/d_raw") r4=$(median <"$T/d_raw4")
for t in "${transports[@]}"; do
	pair "FUSE ($t) single vs raw file" iops "$(median <"$T/d_one_$t")" "$r"
done
((dpll)) && pair "passthrough_ll vs raw file" iops "$(median <"$T/d_pll")" "$r"
for t in "${transports[@]}"; do
	pair "FUSE ($t) raid0 x4 vs 4 raw files (4 x QD8)" iops "$(median <"$T/d_r0_$t")" "$r4"
	pair "  one job QD32 vs fio one job QD32" iops "$(median <"$T/d_r01_$t")" "$(median <"$T/d_raw1a")"
done
pair "in-process raid0 x4 vs 4 raw files (4 x QD8)" iops "$(median <"$T/d_inp")" "$(median <"$T/d_raw4b")"
pair "  one thread QD32 vs fio one job QD32" iops "$(median <"$T/d_inp1")" "$(median <"$T/d_raw1")"
# The NBD export on the same member file: nbdkit 1.32's file plugin has no
# O_DIRECT, so the like-for-like pair is `fsvol serve --buffered` against
# `nbdkit file`, both from the page cache; the default O_DIRECT export is
# set against fio's io_uring on the file itself (the disk's own figure).
if command -v nbdkit >/dev/null && fio --enghelp=nbd >/dev/null 2>&1; then
	for f in d_nb d_nd d_nn d_nr; do : >"$T/$f"; done
	for rep in 1 2 3; do
		for srv in buffered direct nbdkit raw; do
			if [ "$srv" = raw ]; then
				fio_add iops d_nr "dnraw$rep" --filename="$D/s0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M
				continue
			fi
			sock=$T/dnbd-$srv.sock
			nbd_up "$srv" "$sock" "$D/s0"
			fio_nbd "dnbd$srv$rep" "$(nbd_uri "$sock")" --rw=randread --bs=4k --iodepth=32 --size=500M |
				awk '{ print $1 }' >>"$T/d_n${srv:0:1}"
			nbd_stop "$T/nbd.pid"
			rm -f "$T/nbd.pid" "$sock"
		done
	done
	pair "NBD export --buffered vs nbdkit file" iops "$(median <"$T/d_nb")" "$(median <"$T/d_nn")"
	pair "  NBD export (O_DIRECT) vs fio on the file" iops "$(median <"$T/d_nd")" "$(median <"$T/d_nr")"
fi
echo "  (targets: FUSE single >= 0.7, FUSE raid0 x4 >= 0.6, in-process (4 x QD8) >= 0.9, NBD --buffered >= 0.9)"

# ---- 3. the engine's own cost: memory members, one thread, QD32 ----
echo
echo "engine CPU per I/O (fsvol-bench --create on mem: members, one thread, QD32; user + system):"
for spec in "raid0 -w0" "raid5 -w100"; do
	set -- $spec
	: >"$T/e_cpu"
	for rep in 1 2 3; do
		"$BENCH" -q -b4K -r "$2" -o32 -d"$secs" -W1 --json --create "$1,64K" \
			--members mem:e0:64M,mem:e1:64M,mem:e2:64M,mem:e3:64M | jq '.results.process_cpu.per_io_us' >>"$T/e_cpu"
	done
	what=$([ "$1" = raid0 ] && echo "4K read" || echo "4K write")
	target=$([ "$1" = raid0 ] && echo 3 || echo 10)
	printf '%-44s %14s %14s\n' "$1 x4 $what" "$(printf '%.2f us' "$(median <"$T/e_cpu")")" "(target <= $target us)"
done
