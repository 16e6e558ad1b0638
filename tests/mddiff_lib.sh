# shellcheck shell=bash
# tests/mddiff_lib.sh: the same logical bytes written through Linux md (in the
# qemu guest of tests/tools/mdguest.sh) and through fsvol, member data areas
# compared byte for byte. Sourced after tests/lib.sh (needs $T, $FSVOL,
# fsvol_mount). Geometry of every case: members of 1 MiB data offset (md's
# --data-offset=1M, fsvol's default) + 2 MiB of data, 64 KiB chunks, no
# bitmap; docs/mdguest.md.

MDD_DATA=$((2 * 1024 * 1024))   # data bytes per member
MDD_OFF=$((1024 * 1024))        # data offset
MDD_CHUNK=64                    # KiB
MDD_SMALL="3 5 17 40 100 257 511" # 4 KiB blocks written again one by one (rmw / rcw paths)

# The cases, one a line: fsvol level, layout (- for none), members.
mddiff_cases() {
	echo "raid0 - 4"
	echo "raid1 - 2"
	echo "raid4 - 4"
	local l n
	for l in left-asymmetric right-asymmetric left-symmetric right-symmetric; do echo "raid5 $l 4"; done
	for n in 4 5 6; do
		for l in left-asymmetric right-asymmetric left-symmetric right-symmetric; do echo "raid6 $l $n"; done
	done
	for n in 3 4 5; do
		for l in n2 f2 o2; do echo "raid10 $l $n"; done
	done
	echo "linear - 3"
}

# mddiff_pattern FILE: 8 MiB of the main pattern, then 64 KiB for the small writes
mddiff_pattern() {
	python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(30).randbytes(8 * 2**20 + 2**16))' >"$1"
}

# mddiff_job FILE: the guest's job: every case one after the other on the
# scratch disks vda..vdf, the pattern on vdg, each member's data area copied
# to vdh at (first member of the case + k) * 2 MiB.
mddiff_job() {
	{
		cat <<JOB
SMALL="$MDD_SMALL"
DATA=$MDD_DATA
CHUNK=$MDD_CHUNK
JOB
		cat <<'JOB'
one() { # name mdlevel layout n base
	name=$1 level=$2 layout=$3 n=$4 base=$5
	devs="" i=0
	for l in a b c d e f; do
		[ $i -lt $n ] || break
		devs="$devs /dev/vd$l"
		dd if=/dev/zero of=/dev/vd$l bs=1M count=3 conv=fsync 2>/dev/null
		i=$((i + 1))
	done
	opts="--level=$level --raid-devices=$n"
	[ "$layout" = - ] || opts="$opts --layout=$layout"
	case $level in 1|linear) ;; *) opts="$opts --chunk=$CHUNK" ;; esac
	case $level in 0|linear) ;; *) opts="$opts --bitmap=none --assume-clean" ;; esac
	if ! mdadm --create /dev/md0 --run --metadata=1.2 --data-offset=1M $opts $devs >/tmp/log 2>&1; then
		echo "case $name: mdadm --create failed: $(cat /tmp/log)"
		return 1
	fi
	size=$(blockdev --getsize64 /dev/md0)
	echo "size $name $size"
	dd if=/dev/vdg of=/dev/md0 bs=64k count=$((size / 65536)) conv=fsync 2>/dev/null
	k=0
	for b in $SMALL; do
		[ $b -lt $((size / 4096)) ] && dd if=/dev/vdg of=/dev/md0 bs=4k skip=$((2048 + k)) seek=$b count=1 conv=notrunc,fsync 2>/dev/null
		k=$((k + 1))
	done
	mdadm --stop /dev/md0 >/dev/null 2>&1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	i=0
	for l in a b c d e f; do
		[ $i -lt $n ] || break
		blockdev --flushbufs /dev/vd$l
		dd if=/dev/vd$l of=/dev/vdh bs=64k skip=16 seek=$(((base + i) * (DATA / 65536))) count=$((DATA / 65536)) conv=notrunc,fsync 2>/dev/null
		i=$((i + 1))
	done
	echo "done $name"
}
JOB
		local lv lay n base=0 md
		while read -r lv lay n; do
			md=${lv#raid}
			echo "one $lv/$lay/$n $md $lay $n $base || exit 1"
			base=$((base + n))
		done < <(mddiff_cases)
		echo "exit 0"
	} >"$1"
}

# mddiff_total_members: members over every case
mddiff_total_members() {
	local lv lay n t=0
	while read -r lv lay n; do t=$((t + n)); done < <(mddiff_cases)
	echo "$t"
}

# mddiff_md DIR PATTERN: run every case through md; DIR/out holds the member
# data areas, DIR/md.log the guest's console. 0, or 1 when the guest failed.
mddiff_md() {
	local dir=$1 pat=$2 i
	mkdir -p "$dir"
	for i in 0 1 2 3 4 5; do truncate -s $((MDD_OFF + MDD_DATA)) "$dir/d$i"; done
	truncate -s $(($(mddiff_total_members) * MDD_DATA)) "$dir/out"
	mddiff_job "$dir/job.sh"
	"$(dirname "${BASH_SOURCE[0]}")/tools/mdguest.sh" run "$dir/job.sh" "$dir"/d{0,1,2,3,4,5} "$pat" "$dir/out" \
		>"$dir/md.log" 2>&1
}

# mddiff_fsvol DIR PATTERN: every case through fsvol: DIR/LEVEL-LAYOUT-N/m*
mddiff_fsvol() {
	local dir=$1 pat=$2 lv lay n c p k b cap
	while read -r lv lay n; do
		c=$dir/$lv-$lay-$n
		mkdir -p "$c"
		p=()
		[[ $lay == - ]] || p=(-p "$lay")
		"$FSVOL" create -l "$lv" -c "${MDD_CHUNK}K" -z "$((MDD_DATA / 1024))" "${p[@]}" --data-offset 1M \
			--bitmap none --bad-block-log none $(members "$c/m" "$n") >/dev/null ||
			fail "fsvol create $lv $lay x$n"
		fsvol_mount "$c/mnt" $(members "$c/m" "$n")
		cap=$(size_of "$c/mnt/volume")
		echo "$cap" >"$c/size"
		dd if="$pat" of="$c/mnt/volume" bs=64k count=$((cap / 65536)) oflag=direct conv=notrunc status=none
		k=0
		for b in $MDD_SMALL; do
			((b < cap / 4096)) && dd if="$pat" of="$c/mnt/volume" bs=4k skip=$((2048 + k)) seek="$b" count=1 \
				oflag=direct conv=notrunc status=none
			k=$((k + 1))
		done
		fsvol_umount "$c/mnt"
	done < <(mddiff_cases)
}

# mddiff_compare DIR TABLE: each case's members against md's; one line per
# case in TABLE ("raid6 left-asymmetric x5: identical" or what differs:
# member, first byte and stripe). The number of cases that differ on stdout.
mddiff_compare() {
	local dir=$1 table=$2 lv lay n c base=0 k out bad=0 msg mdsize
	: >"$table"
	while read -r lv lay n; do
		c=$dir/fsvol/$lv-$lay-$n
		msg=""
		mdsize=$(sed -n "s|^size $lv/$lay/$n \([0-9]*\)$|\1|p" "$dir/md/md.log")
		[[ $mdsize == "$(cat "$c/size")" ]] || msg="sizes differ: md $mdsize, fsvol $(cat "$c/size")"
		for ((k = 0; k < n; k++)); do
			[[ $msg != sizes* ]] || break
			out=$(cmp -n "$MDD_DATA" -i "$MDD_OFF:$(((base + k) * MDD_DATA))" "$c/m$k" "$dir/md/out" 2>&1) && continue
			local byte
			byte=$(sed -n 's/.* differ: byte \([0-9]*\),.*/\1/p' <<<"$out")
			[[ -n $msg ]] && msg+="; "
			if [[ -n $byte ]]; then
				msg+="member $k differs, first at data byte $((byte - 1)) (stripe $(((byte - 1) / (MDD_CHUNK * 1024))))"
			else
				msg+="member $k: $out"
			fi
		done
		[[ -n $msg ]] && bad=$((bad + 1))
		printf '%-7s %-17s x%s: %s\n' "$lv" "$lay" "$n" "${msg:-identical}" >>"$table"
		base=$((base + n))
	done < <(mddiff_cases)
	echo "$bad"
}
