# shellcheck shell=bash
# tests/reshape_lib.sh: sourced by the reshape tests (73-75, 82, 86) after lib.sh.
# RESHAPE_MEMBER (32M) sets the members' data size, RESHAPE_ROUNDS (3) the
# number of crashes in reshape_crash: a smaller volume for a shorter test.
#
# reshape_crash NAME NMEMBERS NADD 'CREATE-ARGS' 'GROW-ARGS' NEW-CAPACITY:
# a volume of NMEMBERS members of RESHAPE_MEMBER (32 MiB) is filled (fsvol-ackwrite owns the
# first half of it, fio the second), then reshaped with `fsvol grow MNT
# GROW-ARGS` (NADD new members, given as $d/a0...), slowed by sync_speed_min
# and _max so that it can be hit. RESHAPE_ROUNDS times (3), at a random point of the
# reshape: a verifying fio (write then verify, crc32c) runs on its half and
# must pass, the acknowledging writer runs on its half, and the daemon is
# killed with -9; a plain `fsvol mount` of the same members resumes the
# reshape (never from the start), and every acknowledged write reads back.
# At the end: the reshape completes, the capacity is NEW-CAPACITY (the FUSE
# file), the writer's blocks and fio's (verify_only) read back, a scrub finds
# 0 mismatches and the offline checker (fsvol-verify) agrees.
# RESHAPE_CUT=powercut: every member has a volatile cache (--fault
# N=cache=volatile) and the daemon dies by `fsvol ctl MNT powercut` (what was
# not flushed is lost) instead of kill -9. The new members are then spares
# from the start (create --spares) and grow names the count (--raid-devices):
# `fsvol add` on a mount with volatile caches hangs (a bug of its own, seen
# here: member_flush from the ctl thread never completes).
requires fio
requires jq

ACKW=$FSVOL_BUILD/bin/fsvol-ackwrite
[[ -x $ACKW ]] || fail "$ACKW not built (make $ACKW)"
RESHAPE_SPEED=${RESHAPE_SPEED:-4000} # KiB/s: a 128 MiB reshape takes about 30 s

reshape_field() { jq -r ".reshape.$2 // empty" "$1/status.json"; }

# reshape_wait_past MNT PERCENT: a reshape runs and is at or past PERCENT, or
# held short of it by sync_max (sync_cap)
reshape_wait_past() {
	local i p
	for ((i = 0; i < 3000; i++)); do
		p=$(reshape_field "$1" percent)
		[[ -n $p ]] || fail "$1: no reshape under way (before $2%): $(cat "$1/status")"
		awk -v p="$p" -v w="$2" 'BEGIN { exit !(p >= w) }' && return 0
		jq_true '.sync.held' "$1/status.json" && return 0
		sleep 0.05
	done
	fail "$1: the reshape did not reach $2%: $(cat "$1/status")"
}

# reshape_wait_done MNT: no reshape any more, and no pass running or owed
reshape_wait_done() {
	local i s
	for ((i = 0; i < 6000; i++)); do
		s=$(jq -r '[.reshape == null, (.sync.state // "none") != "running", .resync_pending == false] | all' \
			"$1/status.json")
		[[ $s == true ]] && return 0
		sleep 0.05
	done
	fail "$1: the reshape (and the resync after it) did not end: $(cat "$1/status")"
}

_reshape_size_is() { [[ $(size_of "$1") -eq $2 ]]; }
_resumed() { tail -n +$(($1 + 1)) "$DAEMON_LOG" | grep -q "reshape resumes at window"; }

reshape_speed() { # MNT KIBS
	echo "sync_speed_max $2" >"$1/ctl"
	echo "sync_speed_min $2" >"$1/ctl"
}

# fio_half MNT FIRST SIZE [fio args]: fio's half, written then verified
fio_half() {
	local mnt=$1 off=$2 size=$3
	shift 3
	fio --name=reshape --filename="$mnt/volume" --rw=write --bs=64k --offset="$off" --size="$size" \
		--direct=1 --ioengine=psync --verify=crc32c --do_verify=1 --verify_state_save=0 --output="$T/fio.out" "$@"
}

# _cut_opts COUNT: mount options for RESHAPE_CUT=powercut (volatile caches on slots 0..COUNT-1)
_cut_opts() {
	local i
	[[ ${RESHAPE_CUT:-kill} == powercut ]] || return 0
	for ((i = 0; i < $1; i++)); do printf -- '--fault=%d=cache=volatile\n' "$i"; done
}

# _cut MNT PID: the crash
_cut() {
	if [[ ${RESHAPE_CUT:-kill} == powercut ]]; then
		"$FSVOL" ctl "$1" powercut >/dev/null 2>&1 || true
		wait_for 30 "the daemon $2 did not die at the power cut" _dead "$2"
	else
		kill -KILL "$2"
	fi
}
_dead() { ! _alive "$1"; }

reshape_crash() {
	local name=$1 n=$2 nadd=$3 create=$4 grow=$5 newcap=$6 d=$T/$1 mem=() add=() i r pid wpid cap half
	local pct target pos last_pos=0 out opts
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do mem+=("$d/m$i"); done
	for ((i = 0; i < nadd; i++)); do add+=("$d/a$i"); done
	local created=("${mem[@]}") grow_paths=("${add[@]}")
	if [[ ${RESHAPE_CUT:-kill} == powercut ]]; then
		created+=("${add[@]}")
		create="$create --spares $nadd"
		grow="$grow --raid-devices $((n + nadd))"
		grow_paths=()
	else
		for ((i = 0; i < nadd; i++)); do truncate -s 40M "$d/a$i"; done
	fi
	# shellcheck disable=SC2086 # the create arguments are words
	"$FSVOL" create -s "${RESHAPE_MEMBER:-32M}" $create "${created[@]}" >/dev/null || fail "$name: create"
	mapfile -t opts < <(_cut_opts "${#created[@]}")
	fsvol_mount "${opts[@]}" "$d/mnt" "${created[@]}"
	cap=$(size_of "$d/mnt/volume")
	half=$((cap / 2))
	fio_half "$d/mnt" "$half" $((cap - half)) || fail "$name: fio before the reshape: $(cat "$T/fio.out")"
	# the fill flushes every 16 writes (-f 16; each one acknowledged after its
	# flush, as with -f 1): a flush per write made it most of the test's time
	"$ACKW" write -F -f 16 -j 4 -n 5000 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w0.out" 2>&1 ||
		fail "$name: writer before the reshape: $(cat "$d/w0.out")"
	reshape_speed "$d/mnt" "$RESHAPE_SPEED"
	# shellcheck disable=SC2086 # the grow arguments are words
	out=$("$FSVOL" grow "$d/mnt" $grow "${grow_paths[@]}" 2>&1) || fail "$name: fsvol grow: $out"
	note "$name: $out"
	# md's sync_max keeps a part of the reshape for every round's cut, however
	# slow the test's own steps are on a loaded machine
	sync_cap "$d/mnt" 20
	for ((r = 1; r <= ${RESHAPE_ROUNDS:-3}; r++)); do
		pid=$(daemon_pid "$d/mnt")
		"$ACKW" write -j 4 -t 300 -L "$half" "$d/mnt/volume" "$d/log" >"$d/w$r.out" 2>&1 &
		wpid=$!
		track_pid "$wpid"
		# slow while fio runs (a loaded machine makes fio slow, not the
		# reshape), so that some of the reshape is left for this round's cut
		reshape_speed "$d/mnt" 500
		fio_half "$d/mnt" "$half" $((cap - half)) ||
			fail "$name: round $r: fio during the reshape: $(cat "$T/fio.out")"
		reshape_speed "$d/mnt" "$RESHAPE_SPEED"
		# a random point a little ahead of where it is now
		pct=$(reshape_field "$d/mnt" percent)
		[[ -n $pct ]] || fail "$name: round $r: the reshape ended before the kill (too fast): $(cat "$d/mnt/status")"
		target=$((${pct%.*} + 2 + RANDOM % 8))
		reshape_wait_past "$d/mnt" "$target"
		_cut "$d/mnt" "$pid"
		wait "$wpid" || fail "$name: round $r: writer failed: $(cat "$d/w$r.out")"
		"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "$name: umount of the dead mount failed"
		_drop_cleanup fsvol "$d/mnt" "$pid"
		_alive "$pid" && fail "$name: daemon $pid survived the ${RESHAPE_CUT:-kill}"
		# a plain mount resumes it where the superblocks say
		local lines
		lines=$(wc -l <"$DAEMON_LOG")
		mapfile -t opts < <(_cut_opts $((n + nadd)))
		# its speed, and a cap (md's sync_max) 20 points past the cut but for
		# the last round, from the start: a loaded machine cannot let it run away
		opts+=("--ctl=sync_speed_max $RESHAPE_SPEED" "--ctl=sync_speed_min $RESHAPE_SPEED")
		if ((r < ${RESHAPE_ROUNDS:-3})); then
			opts+=("--ctl=sync_max $((newcap / 512 * (target + 20 < 99 ? target + 20 : 99) / 100))")
		fi
		fsvol_mount "${opts[@]}" "$d/mnt" "${mem[@]}" "${add[@]}" 2>"$d/mount$r.err"
		wait_for 60 "$name: round $r: the reshape did not resume" _resumed "$lines"
		pos=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | sed -n 's/.*reshape resumes at window \([0-9]*\) .*/\1/p' | head -1)
		((pos > 0 && pos >= last_pos)) || fail "$name: round $r: resumed at window $pos (was at $last_pos)"
		note "$name: round $r: ${RESHAPE_CUT:-kill} past $target%, resumed at window $pos"
		last_pos=$pos
		out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") ||
			fail "$name: round $r: acknowledged writes lost: $out"
	done
	sync_release "$d/mnt"
	reshape_speed "$d/mnt" 200000
	reshape_wait_done "$d/mnt"
	# the FUSE file's size shows within its attribute timeout (1 s)
	wait_for 30 "$name: the capacity did not become $newcap after the reshape" \
		_reshape_size_is "$d/mnt/volume" "$newcap"
	out=$("$ACKW" verify -L "$half" "$d/mnt/volume" "$d/log") || fail "$name: acknowledged writes lost: $out"
	note "$name: writer: $out"
	fio_half "$d/mnt" "$half" $((cap - half)) --verify_only ||
		fail "$name: fio's data after the reshape: $(cat "$T/fio.out")"
	out=$("$FSVOL" scrub "$d/mnt")
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$name: scrub: $out"
	note "$name: $out"
	fsvol_umount "$d/mnt"
	out=$("$FSVOL_VERIFY" "${mem[@]}" "${add[@]}") || fail "$name: fsvol-verify: $out"
	note "$name: fsvol-verify: $out"
}

# reshape_cuts NAME NMEMBERS NADD 'CREATE-ARGS' 'GROW-ARGS' K...: power cuts
# placed inside windows: the members have volatile caches, the new ones are
# spares from the start, and for each K `powercut-after K` lets K more member
# writes land (a window's backup, its superblocks, its new stripes) before
# the power goes; each plain mount resumes, the data reads back the same, and
# at least one resume restores a window from its backup (its new rows were
# half written). At the end the reshape completes, the data is the same and a
# scrub finds 0 mismatches.
_moved() { [[ $(jq -r '.reshape.pos // 0' "$1/status.json") -gt 0 ]]; }

reshape_cuts() {
	local name=$1 n=$2 nadd=$3 create=$4 grow=$5 d mem opts k pid cap lines restored
	shift 5
	# shellcheck disable=SC2086 # the create arguments are words
	reshape_begin "$name" "$T/$name" "$n" "$nadd" "$grow" -s "${RESHAPE_MEMBER:-32M}" $create
	for k in "$@"; do
		pid=$(daemon_pid "$d/mnt")
		# armed between windows (the pass waits ~1 s after each at 1 MB/s), so
		# that K counts from a window's start
		wait_for 60 "$name: the reshape did not move" _moved "$d/mnt"
		echo "powercut-after $k" >"$d/mnt/ctl"
		wait_for 60 "$name: no power cut after $k member writes" _dead "$pid"
		"$FSVOL" umount "$d/mnt" >/dev/null 2>&1 || fail "$name: umount of the dead mount failed"
		_drop_cleanup fsvol "$d/mnt" "$pid"
		fsvol_mount "${opts[@]}" "$d/mnt" "${mem[@]}" 2>/dev/null
		vol_cmp "$d/data" "$d/mnt/volume" "$cap" || fail "$name: data differs after a cut $k writes into the reshape"
	done
	restored=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep -c "written back from its backup" || true)
	note "$name: $# cuts inside the reshape, $restored window(s) written back from the backup"
	((restored > 0)) || fail "$name: no cut landed in a critical section (K = $*)"
	echo "sync_speed_max 200000" >"$d/mnt/ctl"
	reshape_wait_done "$d/mnt"
	vol_cmp "$d/data" "$d/mnt/volume" "$cap" || fail "$name: data differs after the reshape"
	out=$("$FSVOL" scrub "$d/mnt")
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$name: scrub: $out"
	fsvol_umount "$d/mnt"
}

# reshape_begin NAME DIR N NADD GROW CREATE_ARGS...: members DIR/m0.. (N +
# NADD, each with a volatile cache), a volume of N of them (`fsvol create
# CREATE_ARGS --spares NADD`) filled with random data (DIR/data), throttled
# to 1 MB/s and grown by NADD members (`fsvol grow GROW`); sets d, mem, opts,
# cap and lines (the daemon log's before the grow).
reshape_begin() {
	local name=$1 n=$3 nadd=$4 grow=$5 i
	d=$2
	shift 5
	mkdir -p "$d"
	mem=() opts=()
	for ((i = 0; i < n + nadd; i++)); do mem+=("$d/m$i"); opts+=("--fault=$i=cache=volatile"); done
	# throttled from the start at every mount (a resumed reshape must not run
	# away before a ctl written after the mount)
	opts+=("--ctl=sync_speed_max 1000")
	"$FSVOL" create "$@" --spares "$nadd" "${mem[@]}" >/dev/null || fail "$name: create"
	fsvol_mount "${opts[@]}" "$d/mnt" "${mem[@]}"
	# dirty to the end (md with safe mode off): each cut leaves a dirty volume
	# (an idle one would be clean, and a degraded one then starts unforced)
	safe_mode_off "$d/mnt"
	cap=$(size_of "$d/mnt/volume")
	random_file "$d/data" "$cap"
	dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct conv=fsync status=none
	lines=$(wc -l <"$DAEMON_LOG")
	# shellcheck disable=SC2086 # the grow arguments are words
	"$FSVOL" grow "$d/mnt" $grow --raid-devices $((n + nadd)) >/dev/null || fail "$name: grow"
}

# reshape_deg_start NAME DIR CREATE_ARGS...: reshape_begin of 4 members
# grown to 5; also sets live and lopts: the members and options for a mount
# without member 1.
reshape_deg_start() {
	local i
	reshape_begin "$1" "$2" 4 1 "" "${@:3}"
	live=("$d"/m{0,2,3,4})
	lopts=()
	for i in 0 2 3 4; do lopts+=("--fault=$i=cache=volatile"); done
	lopts+=("--ctl=sync_speed_max 1000")
}
