# bench/disk.sh: the FUSE path's ceiling, device-backed members, the engine's
# own cost (sourced by bench/run.sh after core.sh, which give $T, $MNT, $FSVOL,
# $BENCH, $secs, $here, $build, fio_read, fio_nbd, nbd_uri, nbd_stop, ratio,
# row, median, mounted, $pll/$have_pll). Every pair is measured side by side,
# alternated three times; the rows print medians. docs/bench.md explains each.
#   BENCH_DISK_DIR=/var/tmp   where the device-backed members live (O_DIRECT)

NULLFUSE=$here/$build/bin/null_fuse
iops() { printf '%.0f IOPS' "$1"; }
mbs_() { awk -v b="$1" 'BEGIN{printf "%.0f MB/s", b/1e6}'; }
uring_on=$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo "absent")

# null_up TRANSPORT DIR: a null FUSE server on DIR (its file reads zeros)
null_up() {
	mkdir -p "$2"
	"$NULLFUSE" "$1" "$2" 1024 2>>"$T/null.log" &
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

# ---- 1. tmpfs: fsvol's FUSE volume against the FUSE path's own ceiling ----
echo
echo "FUSE ceiling (tmpfs members; null servers answer every read with zeros; enable_uring=$uring_on):"
for f in n_dev n_uring n_dev1m n_uring1m; do : >"$T/$f"; done
for t in "${transports[@]}"; do
	"$FSVOL" create -l single -s 1G "$T/c1_$t" >/dev/null
	c4=()
	for i in 0 1 2 3; do c4+=("$T/c4m${i}_$t"); done
	"$FSVOL" create -l raid0 -c 64K -s 256M "${c4[@]}" >/dev/null
	fuse_up "$T/mnt1_$t" "$T/c1_$t"
	fuse_up "$T/mnt4_$t" "${c4[@]}"
	dd if=/dev/zero of="$T/mnt1_$t/volume" bs=1M count=1024 oflag=direct conv=notrunc status=none
	dd if=/dev/zero of="$T/mnt4_$t/volume" bs=64K count=$(($(stat -c %s "$T/mnt4_$t/volume") >> 16)) oflag=direct conv=notrunc status=none
	echo "  fsvol --fuse-transport $t: $(sed -n 's/^fuse transport: //p' "$T/mnt1_$t/status")"
	for f in f_one f_r0 f_r01m; do : >"$T/${f}_$t"; done
done
for rep in 1 2 3; do
	for t in dev uring; do
		[ "$t" = uring ] && [ "$uring_on" != Y ] && continue
		null_up "$t" "$T/null" || continue
		fio_read "n$t$rep" --filename="$T/null/file" --rw=randread --bs=4k --iodepth=32 --size=900M | awk '{ print $1 }' >>"$T/n_$t"
		fio_read "n${t}1m$rep" --filename="$T/null/file" --rw=read --bs=1M --iodepth=8 --size=900M | awk '{ print $2 }' >>"$T/n_${t}1m"
		null_down "$T/null"
	done
	for t in "${transports[@]}"; do
		fio_read "fone$t$rep" --filename="$T/mnt1_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=900M | awk '{ print $1 }' >>"$T/f_one_$t"
		fio_read "fr0$t$rep" --filename="$T/mnt4_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=900M | awk '{ print $1 }' >>"$T/f_r0_$t"
		fio_read "fr01m$t$rep" --filename="$T/mnt4_$t/volume" --rw=read --bs=1M --iodepth=8 --size=900M | awk '{ print $2 }' >>"$T/f_r01m_$t"
	done
done
for t in "${transports[@]}"; do
	"$FSVOL" umount "$T/mnt1_$t"
	"$FSVOL" umount "$T/mnt4_$t"
	rm -f "$T/c1_$t" "$T"/c4m*_"$t"
done
mounted=()
nd=$(median <"$T/n_dev") nd1=$(median <"$T/n_dev1m")
best=$nd best1=$nd1 bestname="null /dev/fuse"
if [ -s "$T/n_uring" ]; then
	nu=$(median <"$T/n_uring") nu1=$(median <"$T/n_uring1m")
	row "null server: io_uring vs /dev/fuse, 4K QD32" "$(iops "$nu")" "$(iops "$nd")" "$(ratio "$nu" "$nd")"
	row "null server: io_uring vs /dev/fuse, 1M QD8" "$(mbs_ "$nu1")" "$(mbs_ "$nd1")" "$(ratio "$nu1" "$nd1")"
	best=$(awk -v x="$nu" -v y="$nd" 'BEGIN { print (x > y ? x : y) }')
	best1=$(awk -v x="$nu1" -v y="$nd1" 'BEGIN { print (x > y ? x : y) }')
	bestname="faster null"
fi
for t in "${transports[@]}"; do
	a=$(median <"$T/f_one_$t")
	row "FUSE ($t) single vs $bestname, 4K" "$(iops "$a")" "$(iops "$best")" "$(ratio "$a" "$best")"
	a=$(median <"$T/f_r0_$t")
	row "FUSE ($t) raid0 x4 vs $bestname, 4K" "$(iops "$a")" "$(iops "$best")" "$(ratio "$a" "$best")"
	a=$(median <"$T/f_r01m_$t")
	row "FUSE ($t) raid0 x4 vs $bestname, 1M" "$(mbs_ "$a")" "$(mbs_ "$best1")" "$(ratio "$a" "$best1")"
done
echo "  (targets: >= 0.85 each)"

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
	"$FSVOL" create -l single -s 512M "$D/s0_$t" >/dev/null
	d4=()
	for i in 0 1 2 3; do d4+=("$D/d${i}_$t"); done
	"$FSVOL" create -l raid0 -c 64K -s 256M "${d4[@]}" >/dev/null
	fuse_up "$T/mnt1_$t" "$D/s0_$t"
	fuse_up "$T/mnt4_$t" "${d4[@]}"
	dd if=/dev/urandom of="$T/mnt1_$t/volume" bs=1M count=512 oflag=direct conv=notrunc status=none
	dd if=/dev/urandom of="$T/mnt4_$t/volume" bs=64K count=$(($(stat -c %s "$T/mnt4_$t/volume") >> 16)) oflag=direct conv=notrunc status=none
	for f in d_one d_r0; do : >"$T/${f}_$t"; done
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
for f in d_raw d_pll d_raw4 d_inp d_raw4b d_raw1 d_inp1; do : >"$T/$f"; done
for rep in 1 2 3; do
	fio_read "draw$rep" --filename="$D/s0_$t0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M | awk '{ print $1 }' >>"$T/d_raw"
	for t in "${transports[@]}"; do
		fio_read "done$t$rep" --filename="$T/mnt1_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=500M | awk '{ print $1 }' >>"$T/d_one_$t"
	done
	((dpll)) && fio_read "dpll$rep" --filename="$T/dpll_mnt/s0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M |
		awk '{ print $1 }' >>"$T/d_pll"
	fio_read "draw4$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=250M |
		awk '{ print $1 }' >>"$T/d_raw4"
	for t in "${transports[@]}"; do
		fio_read "dr0$t$rep" --filename="$T/mnt4_$t/volume" --rw=randread --bs=4k --iodepth=32 --size=1000M | awk '{ print $1 }' >>"$T/d_r0_$t"
	done
done
for t in "${transports[@]}"; do "$FSVOL" umount "$T/mnt4_$t"; done
# In-process: the same threads and depths as fio's (4 x QD8), alternated with
# it; and one thread at QD32 against fio's one job at QD32. On a loaded
# machine each thread gets a share of the CPUs: a single thread against
# fio's four measures the scheduler, not the engine (docs/bench.md).
for rep in 1 2 3; do # the members are free of the mount now
	fio_read "draw4b$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=250M |
		awk '{ print $1 }' >>"$T/d_raw4b"
	"$BENCH" -q -b4K -r -t4 -o8 -d"$secs" -W1 -Su --json --members "$d_list" | jq '.results.total.read.iops' >>"$T/d_inp"
	fio_read "draw1$rep" --filename="$d_files" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=250M |
		awk '{ print $1 }' >>"$T/d_raw1"
	"$BENCH" -q -b4K -r -t1 -o32 -d"$secs" -W1 -Su --json --members "$d_list" | jq '.results.total.read.iops' >>"$T/d_inp1"
done
for t in "${transports[@]}"; do "$FSVOL" umount "$T/mnt1_$t"; done
mounted=()
((dpll)) && { fusermount3 -u "$T/dpll_mnt" 2>/dev/null || umount -l "$T/dpll_mnt"; }
r=$(median <"$T/d_raw") r4=$(median <"$T/d_raw4")
for t in "${transports[@]}"; do
	a=$(median <"$T/d_one_$t")
	row "FUSE ($t) single vs raw file" "$(iops "$a")" "$(iops "$r")" "$(ratio "$a" "$r")"
done
if ((dpll)); then
	p=$(median <"$T/d_pll")
	row "passthrough_ll vs raw file" "$(iops "$p")" "$(iops "$r")" "$(ratio "$p" "$r")"
fi
for t in "${transports[@]}"; do
	a=$(median <"$T/d_r0_$t")
	row "FUSE ($t) raid0 x4 vs 4 raw files (4 x QD8)" "$(iops "$a")" "$(iops "$r4")" "$(ratio "$a" "$r4")"
done
a=$(median <"$T/d_inp") b=$(median <"$T/d_raw4b")
row "in-process raid0 x4 vs 4 raw files (4 x QD8)" "$(iops "$a")" "$(iops "$b")" "$(ratio "$a" "$b")"
a=$(median <"$T/d_inp1") b=$(median <"$T/d_raw1")
row "  one thread QD32 vs fio one job QD32" "$(iops "$a")" "$(iops "$b")" "$(ratio "$a" "$b")"
# The NBD export on the same member file: nbdkit 1.32's file plugin has no
# O_DIRECT, so the like-for-like pair is `fsvol serve --buffered` against
# `nbdkit file`, both from the page cache; the default O_DIRECT export is
# set against fio's io_uring on the file itself (the disk's own figure).
if command -v nbdkit >/dev/null && fio --enghelp=nbd >/dev/null 2>&1; then
	for f in d_nb d_nd d_nn d_nr; do : >"$T/$f"; done
	for rep in 1 2 3; do
		for srv in buffered direct nbdkit raw; do
			if [ "$srv" = raw ]; then
				fio_read "dnraw$rep" --filename="$D/s0" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=500M |
					awk '{ print $1 }' >>"$T/d_nr"
				continue
			fi
			sock=$T/dnbd-$srv.sock
			case $srv in
			buffered) "$FSVOL" serve --buffered --nbd "unix:$sock" --pidfile "$T/nbd.pid" "$D/s0" ;;
			direct) "$FSVOL" serve --nbd "unix:$sock" --pidfile "$T/nbd.pid" "$D/s0" ;;
			nbdkit) nbdkit -U "$sock" -P "$T/nbd.pid" file "$D/s0" ;;
			esac
			for ((i = 0; i < 100; i++)); do [ -s "$T/nbd.pid" ] && [ -S "$sock" ] && break; sleep 0.1; done
			fio_nbd "dnbd$srv$rep" "$(nbd_uri "$sock")" --rw=randread --bs=4k --iodepth=32 --size=500M |
				awk '{ print $1 }' >>"$T/d_n${srv:0:1}"
			nbd_stop "$T/nbd.pid"
			rm -f "$T/nbd.pid" "$sock"
		done
	done
	a=$(median <"$T/d_nb") b=$(median <"$T/d_nn")
	row "NBD export --buffered vs nbdkit file" "$(iops "$a")" "$(iops "$b")" "$(ratio "$a" "$b")"
	a=$(median <"$T/d_nd") b=$(median <"$T/d_nr")
	row "  NBD export (O_DIRECT) vs fio on the file" "$(iops "$a")" "$(iops "$b")" "$(ratio "$a" "$b")"
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
