# bench/core.sh: the asynchronous core's figures (sourced by bench/run.sh,
# which gives $T, $MNT, $FSVOL, $secs, fio_read, ratio, row, median, mounted).
#  - daemon memory under a deep parity write queue;
#  - the FUSE front end vs raw io_uring on the same file and vs libfuse's
#    passthrough_ll example (built here from Debian's libfuse3-dev);
#  - the in-process engine vs the best raw reference on the same files.
# Alternated three times where two set-ups compete; medians.

echo
echo "asynchronous core:"
bench_dir=$(dirname "${BASH_SOURCE[0]}")
BENCH=$here/$build/bin/fsvol-bench

# 1. memory: raid5 x4, fio 4K random writes at QD128
r5=()
for i in 0 1 2 3; do r5+=("$T/r5m$i"); done
"$FSVOL" create -l raid5 -c 64K -s 128M "${r5[@]}" >/dev/null
"$FSVOL" mount --log "$T/daemon.log" "$MNT" "${r5[@]}"
mounted+=("$MNT")
pid=$(awk '/^pid:/ { print $2 }' "$MNT/status")
# the daemon's own memory is RssAnon: tmpfs members are mapped (member_map.h),
# so VmRSS and VmHWM also count their pages (RssShmem), which are the files'
anon() { awk '/^RssAnon/ { print $2 }' "/proc/$pid/status"; }
rss0=$(anon) peak=$rss0
fio --name=r5rss --filename="$MNT/volume" --rw=randwrite --bs=4k --iodepth=128 --direct=1 \
	--ioengine=io_uring --time_based --runtime="$secs" --size=300M --output=/dev/null &
fpid=$!
while kill -0 "$fpid" 2>/dev/null; do # sampled: /proc keeps no peak of RssAnon
	a=$(anon)
	((a > peak)) && peak=$a
	sleep 0.2
done
wait "$fpid"
rss1=$(anon)
shm=$(awk '/^RssShmem/ { print $2 }' "/proc/$pid/status")
printf '%-44s %s\n' "raid5 x4, 4K randwrite QD128: daemon RssAnon" \
	"$((rss0 / 1024)) MB idle, peak $((peak / 1024)) MB, $((rss1 / 1024)) MB after (target peak <= 64 MB;" \
	"" "member pages mapped, RssShmem: $((shm / 1024)) MB)"
"$FSVOL" umount "$MNT"
mounted=()

# 2. FUSE single-member volume vs raw io_uring on its file vs passthrough_ll
"$FSVOL" create -l single -s 256M "$T/one" >/dev/null
pll=$T/passthrough_ll
mkdir -p "$T/pll_src" "$T/pll_mnt"
ln "$T/one" "$T/pll_src/one"
if cc -O2 -o "$pll" /usr/share/doc/libfuse3-dev/examples/passthrough_ll.c $(pkg-config --cflags --libs fuse3) 2>/dev/null &&
	"$pll" -o source="$T/pll_src",cache=never "$T/pll_mnt"; then
	have_pll=1
else
	have_pll=0
	echo "  (passthrough_ll could not be built or mounted: that comparison is skipped)"
fi
"$FSVOL" mount --log "$T/daemon.log" "$MNT" "$T/one"
mounted+=("$MNT")
: >"$T/c_raw" && : >"$T/c_fuse" && : >"$T/c_pll" && : >"$T/c_raw1m" && : >"$T/c_fuse1m"
for rep in 1 2 3; do
	fio_read "craw$rep" --filename="$T/one" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=200M | awk '{ print $1 }' >>"$T/c_raw"
	fio_read "cfuse$rep" --filename="$MNT/volume" --rw=randread --bs=4k --iodepth=32 --size=200M | awk '{ print $1 }' >>"$T/c_fuse"
	((have_pll)) && fio_read "cpll$rep" --filename="$T/pll_mnt/one" --rw=randread --bs=4k --iodepth=32 --offset=1M --size=200M |
		awk '{ print $1 }' >>"$T/c_pll"
	fio_read "craw1m$rep" --filename="$T/one" --rw=read --bs=1M --iodepth=8 --offset=1M --size=200M | awk '{ print $2 }' >>"$T/c_raw1m"
	fio_read "cfuse1m$rep" --filename="$MNT/volume" --rw=read --bs=1M --iodepth=8 --size=200M | awk '{ print $2 }' >>"$T/c_fuse1m"
done
a=$(median <"$T/c_fuse") b=$(median <"$T/c_raw")
row "FUSE single vs raw io_uring, 4K rand QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
if ((have_pll)); then
	c=$(median <"$T/c_pll")
	row "FUSE single vs passthrough_ll, 4K rand QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$c") IOPS" "$(ratio "$a" "$c")"
fi
a=$(median <"$T/c_fuse1m") b=$(median <"$T/c_raw1m")
row "FUSE single vs raw io_uring, 1M seq QD8" "$(awk -v x="$a" 'BEGIN{printf "%.0f MB/s", x/1e6}')" \
	"$(awk -v x="$b" 'BEGIN{printf "%.0f MB/s", x/1e6}')" "$(ratio "$a" "$b")"
"$FSVOL" umount "$MNT"
mounted=()
((have_pll)) && { fusermount3 -u "$T/pll_mnt" 2>/dev/null || umount -l "$T/pll_mnt"; }

# 3. in-process raid0 x4 (fsvol-bench --members) vs fio on the 4 raw files,
# io_uring (QD32 in all) and psync (32 threads: as many as I/Os in flight)
list=$(IFS=,; echo "${members[*]}")
: >"$T/i_vol" && : >"$T/i_uring" && : >"$T/i_psync"
for rep in 1 2 3; do
	"$BENCH" -q -b4K -r -o32 -t1 -d"$secs" -W1 -Su --json --members "$list" | jq '.results.total.read.iops' >>"$T/i_vol"
	fio_read "iuring$rep" --filename="$raw_files" --rw=randread --bs=4k --iodepth=8 --numjobs=4 --offset=1M --size=200M |
		awk '{ print $1 }' >>"$T/i_uring"
	fio --name="ipsync$rep" --output-format=json --time_based --runtime="$secs" --ramp_time=1 --direct=1 \
		--ioengine=psync --group_reporting --filename="$raw_files" --rw=randread --bs=4k --numjobs=32 \
		--offset=1M --size=200M >"$T/ipsync$rep.json"
	jq -r '.jobs[0].read.iops' "$T/ipsync$rep.json" >>"$T/i_psync"
done
a=$(median <"$T/i_vol") b=$(median <"$T/i_uring") c=$(median <"$T/i_psync")
best=$(awk -v x="$b" -v y="$c" 'BEGIN { print (x > y ? x : y) }')
row "in-process raid0 x4 vs fio io_uring, 4K QD32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$b") IOPS" "$(ratio "$a" "$b")"
row "in-process raid0 x4 vs fio psync x32" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$c") IOPS" "$(ratio "$a" "$c")"
row "in-process raid0 x4 vs the best raw reference" "$(printf %.0f "$a") IOPS" "$(printf %.0f "$best") IOPS" "$(ratio "$a" "$best")"
