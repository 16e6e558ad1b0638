# shellcheck shell=bash
# tests/mdasm_lib.sh: Linux md and fsvol open each other's arrays (issue 31).
# Sourced after tests/lib.sh (needs $T, $FSVOL, fsvol_mount). docs/mdguest.md.
#
# A case is one line: DIR META LEVEL LAYOUT N FLAG
#   DIR  fwd: fsvol creates the members (fsvol create -e META) and writes them
#             through its mount; md (in the guest) assembles them with
#             --assemble --run, reads every byte (md5), runs its own check
#             (mismatch_cnt), then assembles them again without their first
#             member and reads every byte once more; then fsvol mounts what md
#             left and reads every byte again.
#        rev: md creates the array in the guest (mdadm --create --metadata=META),
#             waits for its initial sync, writes it; fsvol mounts the members
#             on the host, reads every byte (md5) and scrubs it.
#   FLAG -     nothing more
#        degr  fwd: fsvol writes the volume with its second member left out
#              (mount --run); md gets all members and must leave that one out
#        ops   fwd: then fsvol fails, removes and re-adds the second member and
#              replaces the third by a blank file (fail, remove, add): md's
#              roles and the new device's superblock are fsvol's; md must
#              assemble them in sync (no recovery)
#        conv  fwd: created in fsvol's own format, written, then fsvol convert
#              (to md's 1.2) before md assembles it
#        midrec fwd: the re-add's recovery stopped at 50% (recovery_offset):
#              md must go on with it (one recovery) and end in sync
#        fail  rev: md fails the second member before the small writes
#              (fsvol mounts the others with --run)
#        bitmap rev: md's internal bitmap (--bitmap=internal), else none
#        refused rev: fsvol must refuse the array naming md's level (linear)
# Every array: the whole capacity from the pattern, then single 4 KiB writes
# at MDA_SMALL (read-modify-write / reconstruct-write paths). Members are
# MDA_DISK bytes; fsvol's data size per member MDA_DATA.
# The guest's disks: vda the pattern, then every case's members in order,
# several guests (boots) when the cases need more than MDA_DISKS disks.

MDA_DISK=$((4 * 1024 * 1024))
MDA_DATA=2M
MDA_CHUNK=64
MDA_PAT=$((16 * 1024 * 1024))  # the main pattern; the small writes' blocks after it
MDA_SMALL="3 5 17 40 100 257 511"
MDA_DISKS=${MDA_DISKS:-64}     # members per boot (mdguest.sh puts eight disks on a PCI slot past 24)

MDA_K=0                        # cases so far (names: f0, r1, ...)

mda_log() { echo "# $*"; }

# mda_vdname I: the guest's name of disk I (0 vda, 25 vdz, 26 vdaa)
mda_vdname() {
	local i=$1 a=abcdefghijklmnopqrstuvwxyz
	if ((i < 26)); then echo "vd${a:i:1}"; else echo "vd${a:i/26-1:1}${a:i%26:1}"; fi
}

mda_redundant() { [[ $1 == raid1 || $1 == raid4 || $1 == raid5 || $1 == raid6 || $1 == raid10 ]]; }

# mda_md_opts LEVEL LAYOUT N: mdadm's geometry options
mda_md_opts() {
	local o="--level=$1 --raid-devices=$3"
	[[ $2 == - ]] || o+=" --layout=$2"
	case $1 in raid1 | linear) ;; *) o+=" --chunk=$MDA_CHUNK" ;; esac
	echo "$o"
}

# mda_fsvol_write MNT EXPECT: the capacity from the pattern, then the small
# writes, through the mount; the same bytes into the file EXPECT
mda_fsvol_write() {
	local mnt=$1 exp=$2 cap k=0 b
	cap=$(size_of "$mnt/volume")
	head -c "$cap" "$T/pattern" >"$exp"
	dd if="$exp" of="$mnt/volume" bs=64k oflag=direct conv=notrunc status=none || fail "write $mnt"
	for b in $MDA_SMALL; do
		if ((b < cap / 4096)); then
			dd if="$T/pattern" of="$mnt/volume" bs=4k skip=$((MDA_PAT / 4096 + k)) seek="$b" count=1 \
				oflag=direct conv=notrunc status=none || fail "small write $b to $mnt"
			dd if="$T/pattern" of="$exp" bs=4k skip=$((MDA_PAT / 4096 + k)) seek="$b" count=1 conv=notrunc \
				status=none
		fi
		k=$((k + 1))
	done
}

mda_member_active() { grep -q "$2 active" "$1/status"; }

# mda_fsvol_ops MNT FLAG MEMBER...: md's states written by fsvol: the second
# member failed, removed and re-added; ops: recovered, then the third failed,
# removed, its file made blank and added back (a new device); midrec: the
# re-add's recovery held at 50% when the volume stops (md goes on from its
# recovery_offset)
mda_fsvol_ops() {
	local mnt=$1 flag=$2
	shift 2
	"$FSVOL" fail "$mnt" "$2" >/dev/null || fail "fail $2"
	"$FSVOL" remove "$mnt" "$2" >/dev/null || fail "remove $2"
	[[ $flag == ops ]] || sync_hold "$mnt" 50
	"$FSVOL" re-add "$mnt" "$2" >/dev/null || fail "re-add $2"
	if [[ $flag == midrec ]]; then
		sync_wait_held "$mnt" recovery
		return 0
	fi
	wait_for 120 "$2 recovered" mda_member_active "$mnt" "$2"
	"$FSVOL" fail "$mnt" "$3" >/dev/null || fail "fail $3"
	"$FSVOL" remove "$mnt" "$3" >/dev/null || fail "remove $3"
	rm -f "$3"
	truncate -s "$MDA_DISK" "$3"
	"$FSVOL" add "$mnt" "$3" >/dev/null || fail "add $3"
	wait_for 120 "$3 recovered" mda_member_active "$mnt" "$3"
}

vol_md5() { dd if="$1" bs=1M iflag=direct status=none | md5sum | cut -d' ' -f1; }

# mda_fwd_host NAME META LEVEL LAYOUT N FLAG DISK...: fsvol's side before the guest
mda_fwd_host() {
	local name=$1 meta=$2 lv=$3 lay=$4 n=$5 flag=$6
	shift 6
	local ms=("$@") p=() run=() d
	[[ $lay == - ]] || p=(-p "$lay")
	local e=(-e "$meta")
	[[ $flag != conv ]] || e=() # fsvol's own format, converted after the writes
	"$FSVOL" create -f "${e[@]}" -l "$lv" -c "${MDA_CHUNK}K" -z "$MDA_DATA" "${p[@]}" -N "$name" "${ms[@]}" \
		>/dev/null || fail "fsvol create ${e[*]} $lv $lay x$n"
	local mount_ms=("${ms[@]}")
	if [[ $flag == degr ]]; then
		mount_ms=("${ms[0]}" "${ms[@]:2}")
		run=(--run)
	fi
	fsvol_mount "${run[@]}" "$T/mnt" "${mount_ms[@]}"
	mda_fsvol_write "$T/mnt" "$T/exp.$name"
	[[ $flag != ops && $flag != midrec ]] || mda_fsvol_ops "$T/mnt" "$flag" "${ms[@]}"
	fsvol_umount "$T/mnt"
	if [[ $flag == conv ]]; then
		"$FSVOL" convert "${ms[@]}" >"$T/conv.out" 2>&1 || fail "fsvol convert $lv $lay x$n: $(cat "$T/conv.out")"
	fi
	echo "$(size_of "$T/exp.$name") $(md5sum <"$T/exp.$name" | cut -d' ' -f1)" >"$T/want.$name"
}

# The guest's job: functions first (busybox sh), then one call per case.
mda_job_head() {
	cat <<JOB
PAT=$MDA_PAT
SMALL="$MDA_SMALL"
JOB
	cat <<'JOB'
mkdir -p /run/mdadm
md5() { dd if=/dev/md0 bs=64k 2>/dev/null | md5sum | cut -d' ' -f1; }
size() { blockdev --getsize64 /dev/md0; }
mdstat() { sed -n '/^md0/{N;s/\n */ /;p}' /proc/mdstat | sed "s/^/$1: /"; }
fresh() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# idle: until md0's sync_action is idle (bounded: 6000 looks)
idle() {
	[ -e /sys/block/md0/md/sync_action ] || return 0 # raid0, linear: no sync
	i=0
	while [ "$(cat /sys/block/md0/md/sync_action)" != idle ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(cat /sys/block/md0/md/sync_action)" = idle ]
}
fwd() { # name redundant devs...
	name=$1 red=$2
	shift 2
	r0=$(dmesg | grep -c 'md: recovery of RAID array md0')
	if ! mdadm --assemble --run /dev/md0 "$@" >/tmp/log 2>&1; then
		echo "fwd $name: assemble failed: $(cat /tmp/log)"; return 1
	fi
	sed "s/^/asm $name: /" /tmp/log
	mdstat "mdstat $name"
	fresh
	echo "fwd $name $(size) $(md5)"
	if [ "$red" = 1 ]; then
		idle
		echo "rec $name $(($(dmesg | grep -c 'md: recovery of RAID array md0') - r0))"
		echo check >/sys/block/md0/md/sync_action
		idle || echo "fwd $name: check did not end"
		echo "chk $name $(cat /sys/block/md0/md/last_sync_action) $(cat /sys/block/md0/md/mismatch_cnt)"
	fi
	mdadm --stop /dev/md0 >/dev/null 2>&1
	if [ "$red" = 1 ]; then
		shift
		if ! mdadm --assemble --run /dev/md0 "$@" >/tmp/log 2>&1; then
			echo "fwd $name: degraded assemble failed: $(cat /tmp/log)"; return 1
		fi
		mdstat "mdstat-degraded $name"
		fresh
		echo "deg $name $(size) $(md5)"
		mdadm --stop /dev/md0 >/dev/null 2>&1
	fi
	return 0
}
rev() { # name meta flag mdadm-options... -- devs...
	name=$1 meta=$2 flag=$3
	shift 3
	opts=""
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	for d in "$@"; do dd if=/dev/zero of=$d bs=1M count=4 conv=fsync 2>/dev/null; done
	bm=none
	[ "$flag" = bitmap ] && bm=internal
	case "$opts" in *raid0*|*linear*) bmo= ;; *) bmo=--bitmap=$bm ;; esac
	if ! mdadm --create /dev/md0 --run --metadata=$meta $bmo $opts "$@" >/tmp/log 2>&1; then
		echo "rev $name: create failed: $(cat /tmp/log)"; return 1
	fi
	idle || echo "rev $name: initial sync did not end"
	s=$(size)
	head -c $s /dev/vda | dd of=/dev/md0 bs=64k conv=fsync 2>/dev/null
	[ "$flag" = fail ] && mdadm /dev/md0 --fail $2 >/dev/null 2>&1
	k=0
	for b in $SMALL; do
		[ $b -lt $((s / 4096)) ] && dd if=/dev/vda of=/dev/md0 bs=4k skip=$((PAT / 4096 + k)) seek=$b count=1 conv=notrunc,fsync 2>/dev/null
		k=$((k + 1))
	done
	fresh
	echo "rev $name $s $(md5)"
	mdstat "mdstat $name"
	mdadm --stop /dev/md0 >/dev/null 2>&1
	return 0
}
JOB
}

# mda_run_cases CASEFILE: every case of CASEFILE, as many boots as the disks need
mda_run_cases() {
	local cases=$1 batch=() used=0 line n boot=0
	while read -r line; do
		[[ -n $line ]] || continue
		n=$(awk '{ print $5 }' <<<"$line")
		if ((used + n > MDA_DISKS && used > 0)); then
			mda_boot "$boot" "${batch[@]}"
			boot=$((boot + 1)) batch=() used=0
		fi
		batch+=("$line")
		used=$((used + n))
	done <"$cases"
	((used == 0)) || mda_boot "$boot" "${batch[@]}"
}

# mda_boot B CASE...: the host's fsvol side, one guest boot, then the checks
mda_boot() {
	local b=$1 d=1 line dir meta lv lay n flag name i k=$MDA_K
	MDA_T=$SECONDS
	shift
	local disks=("$T/pattern") job=$T/job$b.sh
	mda_job_head >"$job"
	for line in "$@"; do
		read -r dir meta lv lay n flag <<<"$line"
		name=${dir:0:1}$MDA_K
		MDA_K=$((MDA_K + 1))
		echo "$dir $lv $lay x$n -e $meta$([[ $flag == - ]] || echo " $flag")" >"$T/label.$name"
		local ms=() vds=()
		for ((i = 0; i < n; i++)); do
			ms+=("$T/$name.m$i")
			vds+=("/dev/$(mda_vdname $((d + i)))")
			rm -f "$T/$name.m$i"
			truncate -s "$MDA_DISK" "$T/$name.m$i"
		done
		disks+=("${ms[@]}")
		d=$((d + n))
		echo "${ms[*]}" >"$T/ms.$name"
		if [[ $dir == fwd ]]; then
			mda_fwd_host "$name" "$meta" "$lv" "$lay" "$n" "$flag" "${ms[@]}"
			local red=0
			mda_redundant "$lv" && [[ $flag != degr ]] && red=1
			echo "fwd $name $red ${vds[*]} || exit 1" >>"$job"
		else
			echo "rev $name $meta $flag $(mda_md_opts "$lv" "$lay" "$n") -- ${vds[*]} || exit 1" >>"$job"
		fi
	done
	echo "exit 0" >>"$job"
	local log=$T/guest$b.log t0=$SECONDS
	mda_log "boot $b: $# cases on $((${#disks[@]} - 1)) disks, fsvol's side took $((SECONDS - MDA_T))s"
	if ! "$(dirname "${BASH_SOURCE[0]}")/tools/mdguest.sh" run "$job" "${disks[@]}" >"$log" 2>&1; then
		if ! grep -q "mdguest: up" "$log"; then
			tail -n 20 "$log"
			echo "SKIP: the qemu TCG guest did not boot (its console above)"
			exit 77
		fi
		grep -v '^mdguest' "$log" | tail -n 30
		fail "the md guest's job failed (boot $b, its console above)"
	fi
	mda_log "boot $b: the guest took $((SECONDS - t0))s (kernel: $(sed -n 's/^\[ *\([0-9.]*\)\] reboot.*/\1/p' "$log")s)"
	grep -E '^(asm|mdstat|mdstat-degraded) ' "$log" | sed 's/^/#   /'
	t0=$SECONDS
	for line in "$@"; do
		read -r dir meta lv lay n flag <<<"$line"
		name=${dir:0:1}$k
		k=$((k + 1))
		if [[ $dir == fwd ]]; then mda_fwd_check "$name" "$lv" "$flag" "$log"; else mda_rev_check "$name" "$lv" "$flag" "$log"; fi
	done
	mda_log "boot $b: the checks after it took $((SECONDS - t0))s"
}

guest_line() { sed -n "s/^$1 $2 //p" "$3" | tail -n 1; }

# mda_fwd_check NAME LEVEL FLAG LOG: md read what fsvol wrote, its check
# found nothing, and fsvol reads back what md left
mda_fwd_check() {
	local name=$1 lv=$2 flag=$3 log=$4 want got lab
	lab="$name ($(cat "$T/label.$name"))"
	want=$(cat "$T/want.$name")
	got=$(guest_line fwd "$name" "$log")
	[[ $got == "$want" ]] || fail "$lab: md read '$got' (size md5), fsvol wrote '$want'"
	local ms
	read -ra ms <"$T/ms.$name"
	if [[ $flag == degr ]]; then
		grep -q "^mdstat $name: .*\[$((${#ms[@]}))/$((${#ms[@]} - 1))\]" "$log" ||
			fail "$lab: md did not leave the stale member out: $(grep "^mdstat $name" "$log")"
		ms=("${ms[0]}" "${ms[@]:2}")
		mda_log "$lab: md assembled fsvol's degraded volume (stale member left out), same bytes"
	else
		if mda_redundant "$lv"; then
			local chk deg
			chk=$(guest_line chk "$name" "$log")
			[[ $chk == "check 0" ]] || fail "$lab: md's check: '$chk' (last_sync_action mismatch_cnt)"
			deg=$(guest_line deg "$name" "$log")
			[[ $deg == "$want" ]] || fail "$lab: md degraded (first member out) read '$deg', fsvol wrote '$want'"
			ms=("${ms[@]:1}")
			local rec
			rec=$(guest_line rec "$name" "$log")
			if [[ $flag == midrec ]]; then
				[[ $rec == 1 ]] || fail "$lab: md ran $rec recoveries; it should have gone on with fsvol's (recovery_offset)"
			else
				[[ $rec == 0 ]] || fail "$lab: md ran $rec recoveries on a volume fsvol left in sync"
			fi
			mda_log "$lab: md read the same bytes, recoveries $rec, check mismatch_cnt 0, degraded read the same bytes"
		else
			mda_log "$lab: md read the same bytes"
		fi
	fi
	# what md left (events, roles) fsvol mounts again
	fsvol_mount --run "$T/mnt" "${ms[@]}"
	[[ "$(size_of "$T/mnt/volume") $(vol_md5 "$T/mnt/volume")" == "$want" ]] ||
		fail "$lab: fsvol read other bytes from what md left"
	fsvol_umount "$T/mnt"
}

# mda_rev_check NAME LEVEL FLAG LOG: fsvol reads what md wrote, scrubs it clean
mda_rev_check() {
	local name=$1 lv=$2 flag=$3 log=$4 want ms run=() got lab
	lab="$name ($(cat "$T/label.$name"))"
	want=$(guest_line rev "$name" "$log")
	[[ -n $want ]] || fail "$lab: no md sum in the guest's output"
	read -ra ms <"$T/ms.$name"
	if [[ $flag == fail ]]; then
		ms=("${ms[0]}" "${ms[@]:2}")
		run=(--run)
	fi
	local ex=$T/ex.$name
	mdadm --examine "${ms[0]}" >"$ex" 2>&1 || fail "$lab: mdadm --examine: $(cat "$ex")"
	if [[ $flag == refused ]]; then
		expect_fail_msg "md $lv" "$FSVOL" mount "$T/mnt" "${ms[@]}"
		mda_log "$lab: fsvol refuses it, naming md $lv"
		return 0
	fi
	fsvol_mount "${run[@]}" "$T/mnt" "${ms[@]}"
	got="$(size_of "$T/mnt/volume") $(vol_md5 "$T/mnt/volume")"
	[[ $got == "$want" ]] || fail "$lab: fsvol read '$got' (size md5), md wrote '$want'"
	local scrubbed=""
	if mda_redundant "$lv" && [[ $flag != fail ]]; then
		scrubbed=", scrub clean"
		"$FSVOL" scrub "$T/mnt" >"$T/scrub.$name" 2>&1 || fail "$lab: scrub: $(cat "$T/scrub.$name")"
		grep -q " 0 mismatches" "$T/scrub.$name" || fail "$lab: scrub: $(cat "$T/scrub.$name")"
	fi
	fsvol_umount "$T/mnt"
	mdadm --examine "${ms[0]}" >"$ex" 2>&1 || fail "$lab: mdadm --examine after fsvol: $(cat "$ex")"
	grep -q "Checksum : .* - correct" "$ex" || fail "$lab: after fsvol, $(grep Checksum "$ex")"
	mda_log "$lab: fsvol read the bytes md wrote$([[ $flag == fail ]] && echo ' (degraded)')$scrubbed, md's superblock still correct"
}

# mda_setup: the guest built, the pattern made
mda_setup() {
	requires qemu-system-x86_64
	requires mdadm
	requires cpio
	export FSVOL_MDGUEST_DIR=${FSVOL_MDGUEST_DIR:-$FSVOL_BUILD/mdguest}
	"$(dirname "${BASH_SOURCE[0]}")/tools/mdguest.sh" build >/dev/null || fail "the md guest could not be built"
	head -c $((MDA_PAT + 65536)) /dev/urandom >"$T/pattern"
}
