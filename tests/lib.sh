# shellcheck shell=bash
# tests/lib.sh: sourced by every integration test (tests/integration/*.sh).
#   FSVOL_BUILD=build tests/run.sh tests/integration/02-roundtrip.sh
# Gives: strict mode, $FSVOL / $FSVOL_VERIFY, a temp dir $T on a real filesystem,
# one EXIT trap that undoes everything the test set up (newest first, ignoring
# its own failures), mount helpers that wait for readiness, and checks that
# fail the test on a sanitizer report in any daemon log.
set -euo pipefail

: "${FSVOL_BUILD:?set FSVOL_BUILD to the build directory (e.g. build)}"
FSVOL_BUILD=$(cd "$FSVOL_BUILD" && pwd)
FSVOL=$FSVOL_BUILD/bin/fsvol
FSVOL_VERIFY=$FSVOL_BUILD/bin/fsvol-verify
MiB=$((1024 * 1024))
TEST_NAME=$(basename "$0" .sh)

[[ -x $FSVOL ]] || { echo "FAIL: $FSVOL not built" >&2; exit 1; }

# Members must live on a filesystem with O_DIRECT (DESIGN.md: not tmpfs).
T=$(mktemp -d "${FSVOL_TEST_TMPDIR:-/var/tmp}/fsvol-$TEST_NAME.XXXXXX")
DAEMON_LOG=$T/daemon.log
: >"$DAEMON_LOG"

# Cleanup stack, one "kind<TAB>arg<TAB>arg" per entry, undone newest first.
_CLEANUP=()
_push_cleanup() { _CLEANUP+=("$(printf '%s\t' "$@")"); }
_drop_cleanup() { # remove the newest entry equal to the arguments
	local want i
	want=$(printf '%s\t' "$@")
	for ((i = ${#_CLEANUP[@]} - 1; i >= 0; i--)); do
		if [[ ${_CLEANUP[i]} == "$want" ]]; then
			unset '_CLEANUP[i]'
			_CLEANUP=("${_CLEANUP[@]}")
			return 0
		fi
	done
}

_is_mounted() { mountpoint -q "$1" 2>/dev/null; }

# A zombie counts as gone: a daemonised fsvol's parent is init, which may
# reap it late.
_alive() {
	local st
	kill -0 "$1" 2>/dev/null || return 1
	st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $st != Z && $st != X ]]
}

_kill_pid() {
	local pid=$1 i
	_alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	kill -CONT "$pid" 2>/dev/null # a stopped one (SIGSTOP) takes the TERM once running
	for ((i = 0; i < 50; i++)); do
		_alive "$pid" || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}

_undo() {
	local kind a b
	IFS=$'\t' read -r kind a b <<<"$1"
	case $kind in
	loopmnt)
		if _is_mounted "$a"; then umount "$a" || umount -l "$a"; fi ;;
	fsvol)
		# a = mount point, b = daemon pid
		if _is_mounted "$a"; then
			timeout 30 "$FSVOL" umount "$a" || umount -l "$a" || fusermount3 -uz "$a"
		fi
		[[ -n $b ]] && _kill_pid "$b" ;;
	pid) _kill_pid "$a" ;;
	loopdev) losetup -d "$a" ;;
	user) userdel "$a" ;;
	group) groupdel "$a" ;;
	netns) ip netns del "$a" ;; # its veth ends go with it
	netns-link) ip link del "$a" ;;
	sysparam) printf '%s\n' "$b" >"$a" ;; # a = /sys/... file, b = the value to restore
	path) rm -rf -- "$a" ;;                  # a directory made outside $T (e.g. on tmpfs)
	esac
}

_cleanup() {
	local rc=$? i
	set +e
	trap - EXIT
	# a second signal must not cut the cleanup short (timeout(1) sends its
	# TERM to the script and then to its whole process group: twice); a
	# handler, not '': the commands the cleanup runs keep the default
	trap : TERM INT HUP
	for ((i = ${#_CLEANUP[@]} - 1; i >= 0; i--)); do
		_undo "${_CLEANUP[i]}" >/dev/null 2>&1
	done
	# Anything still mounted under $T (e.g. a mount that was expected to be
	# refused but succeeded): deepest last in /proc/mounts, so undo in reverse.
	local mp
	while read -r mp; do
		timeout 30 "$FSVOL" umount "$mp" >/dev/null 2>&1 || umount -l "$mp" >/dev/null 2>&1
	done < <(awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | tac)
	# Daemons have exited now, so leak reports are in the logs.
	if ! check_sanitizer_logs; then
		[[ $rc -eq 0 ]] && rc=1
	fi
	if [[ $rc -ne 0 && $rc -ne 77 && -s $DAEMON_LOG ]]; then
		echo "--- $DAEMON_LOG (last 30 lines)"
		tail -n 30 "$DAEMON_LOG"
	fi
	rm -rf "$T"
	exit "$rc"
}
trap _cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

note() { echo "# $*"; }

# requires TOOL: skip (exit 77) only when the tool cannot be found at all.
requires() {
	command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 not installed"; exit 77; }
}

requires_root() {
	[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root (${1:-mount})"; exit 77; }
}

SAN_PATTERN='AddressSanitizer|runtime error|LeakSanitizer|UndefinedBehaviorSanitizer'

# Fails (returns 1) when any log under $T carries a sanitizer report.
check_sanitizer_logs() {
	local f bad=0
	for f in "$T"/*.log; do
		[[ -f $f ]] || continue
		if grep -Eq "$SAN_PATTERN" "$f"; then
			echo "FAIL: sanitizer report in $(basename "$f"):" >&2
			grep -E -A5 "$SAN_PATTERN" "$f" | head -n 40 >&2
			bad=1
		fi
	done
	return $bad
}

# Daemon pid of an fsvol mount, from MNT/status ("pid: N").
daemon_pid() { sed -n 's/^pid: *\([0-9][0-9]*\).*/\1/p' "$1/status" | head -n 1; }

# fsvol_mount [mount options...] MNT MEMBER...: options are the arguments that
# start with '-' before MNT. Mounts with --log, registers the cleanup, checks
# the volume is there. With MOUNT_NETNS=NAME the daemon runs in the network
# namespace NAME (ip netns add NAME); its mount is this one's.
# FSVOL_FUSE_TRANSPORT=auto|dev|uring runs it under that FUSE transport (--fuse-transport).
fsvol_mount() {
	local opts=() mnt pid
	while [[ $# -gt 0 && $1 == -* ]]; do opts+=("$1"); shift; done
	if [[ -n ${FSVOL_FUSE_TRANSPORT:-} && " ${opts[*]} " != *" --nbd"* ]]; then
		opts+=(--fuse-transport "$FSVOL_FUSE_TRANSPORT")
	fi
	mnt=$1
	shift
	mkdir -p "$mnt"
	local in_ns=() # MOUNT_NETNS=NS: the daemon runs in that network namespace
	[[ -n ${MOUNT_NETNS:-} ]] && in_ns=(nsenter "--net=/run/netns/$MOUNT_NETNS")
	"${in_ns[@]}" "$FSVOL" mount --log "$DAEMON_LOG" "${opts[@]}" "$mnt" "$@" ||
		fail "fsvol mount $mnt $* failed (the daemon log ends: $(tail -n 3 "$DAEMON_LOG" 2>/dev/null))"
	_is_mounted "$mnt" || fail "fsvol mount returned but $mnt is not a mount point"
	pid=$(daemon_pid "$mnt")
	_push_cleanup fsvol "$mnt" "$pid"
	[[ -e $mnt/volume ]] || fail "$mnt/volume missing after mount"
	[[ -n $pid ]] || fail "$mnt/status has no 'pid:' line"
	kill -0 "$pid" 2>/dev/null || fail "daemon pid $pid of $mnt not running"
	# a run over io_uring that quietly fell back to /dev/fuse would test the wrong path
	if [[ ${FSVOL_FUSE_TRANSPORT:-} == uring && " ${opts[*]} " != *" --nbd"* ]]; then
		wait_for 10 "$mnt's ring registered" _not_registering "$mnt"
		[[ $(_fuse_transport "$mnt") == uring* ]] ||
			fail "FSVOL_FUSE_TRANSPORT=uring, but $mnt is served by: $(_fuse_transport "$mnt")"
	fi
}
_fuse_transport() { sed -n 's/^fuse transport: //p' "$1/status"; }
_not_registering() { [[ $(_fuse_transport "$1") != *"being registered"* ]]; }

# fsvol_umount MNT: fsvol umount must succeed and leave no daemon behind.
fsvol_umount() {
	local mnt=$1 pid
	pid=$(_daemon_of "$mnt")
	"$FSVOL" umount "$mnt" || fail "fsvol umount $mnt failed"
	! _is_mounted "$mnt" || fail "$mnt still mounted after fsvol umount"
	if [[ -n $pid ]] && _alive "$pid"; then
		fail "daemon $pid of $mnt still running after fsvol umount returned"
	fi
	_drop_cleanup fsvol "$mnt" "$pid"
}

# fsvol_umount_all MNT...: fsvol umount of several mounts at once (each
# daemon takes a moment to exit), with fsvol_umount's checks on each.
fsvol_umount_all() {
	local mnt pids=() i=0 rc
	for mnt in "$@"; do
		( fsvol_umount "$mnt" ) &
		pids+=($!)
	done
	for mnt in "$@"; do
		rc=0
		wait "${pids[i]}" || rc=$?
		i=$((i + 1))
		[[ $rc -eq 0 ]] || fail "fsvol umount of $mnt failed (see above)"
		_drop_cleanup fsvol "$mnt" "$(_daemon_of "$mnt")"
	done
}

# _daemon_of MNT: the daemon pid registered for MNT.
_daemon_of() {
	local entry kind a b
	for entry in "${_CLEANUP[@]}"; do
		IFS=$'\t' read -r kind a b <<<"$entry"
		[[ $kind == fsvol && $a == "$1" ]] && { echo "$b"; return 0; }
	done
}

# loop_mount IMAGE DIR [mount options]: mount -o loop, registered for cleanup.
loop_mount() {
	local img=$1 dir=$2
	mkdir -p "$dir"
	mount -o "loop${3:+,$3}" "$img" "$dir" || fail "mount -o loop $img $dir failed"
	_push_cleanup loopmnt "$dir"
}

loop_umount() {
	umount "$1" || fail "umount $1 failed"
	_drop_cleanup loopmnt "$1"
}

# loop_attach FILE: a loop block device over FILE (direct I/O), detached at
# exit; the device path is left in $LOOP (a $(...) would lose the cleanup).
# Returns 1 when the machine has no free loop device.
loop_attach() {
	LOOP=$(losetup -f --show --direct-io=on "$1" 2>/dev/null) || return 1
	_push_cleanup loopdev "$LOOP"
}

# add_test_user NAME / add_test_group NAME: a throwaway account (no home, no
# login) or group, deleted at exit.
add_test_user() {
	useradd -M -N -s /usr/sbin/nologin "$1" || fail "useradd $1 failed"
	_push_cleanup user "$1"
}
add_test_group() {
	groupadd "$1" || fail "groupadd $1 failed"
	_push_cleanup group "$1"
}

# Register a background process to kill at exit.
track_pid() { _push_cleanup pid "$1"; }

# wait_for SECS WHAT CMD...: until CMD succeeds, polled; after SECS the test
# fails with WHAT. SECS is a safety net against a hang, not a timing: make it
# generous (a loaded machine is slow, never wrong).
# sigterm_under_load MNT LOADPID MEMBER...: SIGTERM to MNT's daemon while
# LOADPID (an application on the volume) runs: the daemon ends, the load gets
# its errors and ends, the mount goes and every member is left clean.
_gone() { ! _alive "$1"; }
sigterm_under_load() {
	local mnt=$1 lpid=$2 pid m
	shift 2
	pid=$(daemon_pid "$mnt")
	kill -TERM "$pid"
	wait_for 60 "daemon $pid still running after SIGTERM under load" _gone "$pid"
	wait_for 60 "the load still running after its daemon ended" _gone "$lpid"
	! _is_mounted "$mnt" || fail "SIGTERM under load left the mount"
	_drop_cleanup fsvol "$mnt" "$pid"
	_drop_cleanup pid "$lpid"
	for m in "$@"; do
		"$FSVOL" examine "$m" | grep -q "State : clean" || fail "$m not clean after SIGTERM under load"
	done
}

# jq_true FILTER FILE: the filter holds on FILE (for wait_for)
jq_true() { jq -e "$@" >/dev/null; }

wait_for() {
	local secs=$1 what=$2 end
	shift 2
	end=$((SECONDS + secs))
	until "$@"; do
		((SECONDS < end)) || fail "$what (waited ${secs}s)"
		sleep 0.05
	done
}

# nbdkit_start PIDFILE [PREFIX...] nbdkit ARGS...: nbdkit (after an optional
# prefix that execs it, e.g. `ip netns exec NS`) as a background job in the
# foreground (-f): its pid is $! and its kill is registered before it can
# leak (a daemonising nbdkit writes its pid file after its parent returned, so
# a pid file read then may not exist yet), and --exit-with-parent ends it with
# the test, even on SIGKILL. Returns when it listens (nbdkit writes PIDFILE
# then), its pid in $NBDKIT_PID; its stderr goes to PIDFILE's .log.
nbdkit_start() {
	local pidfile=$1 args=() a log added=0
	shift
	log=${pidfile%.pid}.log
	for a in "$@"; do
		args+=("$a")
		if [[ $a == nbdkit && $added == 0 ]]; then
			args+=(-f --exit-with-parent -P "$pidfile")
			added=1
		fi
	done
	rm -f "$pidfile"
	"${args[@]}" 2>"$log" &
	NBDKIT_PID=$!
	track_pid "$NBDKIT_PID"
	wait_for 120 "nbdkit ($*) not listening, see $log" _nbdkit_ready "$pidfile" "$NBDKIT_PID"
}
_nbdkit_ready() {
	_alive "$2" || fail "nbdkit exited before it listened: $(cat "${1%.pid}.log")"
	[[ $(cat "$1" 2>/dev/null) == "$2" ]]
}

# netns_prefix: the start of every network namespace name this test makes,
# unique per run ($T's own suffix): run.sh's sweep removes a killed test's.
netns_prefix() { echo "fsv-${T##*.}-"; }

# expect_fail_msg SUBSTRING CMD...: CMD must exit non-zero (not by a signal),
# its stderr must contain SUBSTRING and no sanitizer report. Stderr is kept
# in $LAST_ERR.
LAST_ERR=""
expect_fail_msg() {
	local want=$1 rc=0
	shift
	"$@" >"$T/expect.out" 2>"$T/expect.err" || rc=$?
	LAST_ERR=$(cat "$T/expect.err")
	if [[ $rc -eq 0 ]]; then
		fail "expected failure, but succeeded: $*"$'\n'"stderr: $LAST_ERR"
	fi
	if [[ $rc -ge 128 ]]; then
		fail "killed by signal $((rc - 128)) (crash?): $*"$'\n'"stderr: $LAST_ERR"
	fi
	if grep -Eq "$SAN_PATTERN" "$T/expect.err"; then
		fail "sanitizer report from: $*"$'\n'"$LAST_ERR"
	fi
	if [[ $LAST_ERR != *"$want"* ]]; then
		fail "stderr of '$*' lacks '$want'; got: $LAST_ERR"
	fi
}

# member_stat MNT INDEX FIELD: one member's counter from MNT/stats.json.
member_stat() { jq ".members[] | select(.index == $2) | .$3" "$1/stats.json"; }

# wait_member_writes MNT INDEX N: until member INDEX has seen N more writes
# than when called (a background workload is under way on it); 30 s at most.
wait_member_writes() {
	local w0 i
	w0=$(member_stat "$1" "$2" writes)
	for ((i = 0; i < 600; i++)); do
		(($(member_stat "$1" "$2" writes) >= w0 + $3)) && return 0
		sleep 0.05
	done
	fail "$1: member $2 did not see $3 writes"
}

# random_file PATH BYTES: reference data from /dev/urandom.
random_file() {
	head -c "$2" /dev/urandom >"$1"
	[[ $(stat -c %s "$1") -eq $2 ]] || fail "could not make $2 random bytes in $1"
}

# members PREFIX COUNT: prints the member paths PREFIX0 .. PREFIX(COUNT-1).
members() {
	local i
	for ((i = 0; i < $2; i++)); do printf '%s%d ' "$1" "$i"; done
}

# size_of FILE
size_of() { stat -c %s "$1"; }

# vol_cmp A VOLUME [BYTES]: A equals the first BYTES (default: A's size, a
# whole number of 4 KiB) of VOLUME, read with 1 MiB O_DIRECT reads (cmp's own
# 4 KiB reads cost a FUSE request each: ten times slower); cmp's message on a
# difference (VOLUME named "-")
vol_cmp() {
	local n=${3:-$(size_of "$1")}
	dd if="$2" bs=1M count="$n" iflag=direct,count_bytes status=none | cmp -n "$n" "$1" -
}

# cmp_at A B OFFSET LENGTH: bytes OFFSET..OFFSET+LENGTH of A equal B's first LENGTH.
cmp_at() {
	cmp -n "$4" -i "$3:0" "$1" "$2" || fail "$1 at $3 (+$4) differs from $2"
}

# ---- waits shared by the crash tests (31-crash, 38-powercut) ----

wait_resync() { # MNT: until a resync that a dirty mount started is done
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "resync done" "$1/status" && return 0
		grep -q "resync stopped" "$1/status" && fail "resync stopped: $(cat "$1/status")"
		sleep 0.1
	done
	fail "resync did not finish: $(cat "$1/status")"
}

# safe_mode_off MNT: md's safe mode off (safe_mode_delay 0) and the volume
# marked dirty now (its first block read and written back as it is), so no
# superblock is written from here to the umount: member counters then show
# the data path alone (with --bitmap none, no bitmap writes either), and a
# kill -9 leaves the volume dirty, as in md with safe mode off.
safe_mode_off() {
	echo "safe_mode_delay 0" >"$1/ctl"
	if [[ $(jq -r .array_state "$1/status.json") != active ]]; then
		dd if="$1/volume" of="$T/.block0" bs=4K count=1 iflag=direct status=none
		dd if="$T/.block0" of="$1/volume" bs=4K count=1 oflag=direct conv=notrunc status=none
	fi
	jq_true '.array_state == "active"' "$1/status.json" || fail "$1: still $(jq -r .array_state "$1/status.json")"
}

# sb_set FILE OFFSET VALUE: the little-endian u64 at OFFSET of FILE's
# superblock, checksum fixed (docs/format.md): a forged field
sb_set() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/tools/sb_set.py" "$@"; }

# ---- trace recording (50-trace-record, 51-replay) ----

# trace_requests LOG: action offset length per line of a fio iolog, in log
# order (no time, no file)
trace_requests() { awk '$3 ~ /^(read|write|sync)$/ { print $3, $4, $5 }' "$1"; }

# trace_record MNT LOG [ARGS...]: start `fsvol trace --record`; returns once
# its header is out, its pid in $REC_PID
trace_record() {
	local mnt=$1 log=$2 i
	shift 2
	"$FSVOL" trace --record "$log" "$@" "$mnt" 2>>"$T/record.err" &
	REC_PID=$!
	track_pid "$REC_PID"
	for ((i = 0; i < 300; i++)); do
		grep -q ' open$' "$log" 2>/dev/null && return 0
		_alive "$REC_PID" || fail "the recorder of $mnt exited: $(cat "$T/record.err")"
		sleep 0.1
	done
	fail "the recorder of $mnt wrote no header"
}

# sync_field MNT FIELD: a field of status.json's "sync" object (action, state, percent, ...)
sync_field() { jq -r ".sync.$2 // empty" "$1/status.json"; }

# wait_sync_past MNT ACTION PERCENT: a pass ACTION (recovery, resync, check,
# reshape, ...) runs and is past PERCENT, or held short of it by sync_max
wait_sync_past() {
	local i p
	for ((i = 0; i < 1200; i++)); do
		if [[ $(sync_field "$1" action) == "$2" ]]; then
			[[ $(sync_field "$1" state) == running ]] || fail "$1: the $2 ended before $3%: $(cat "$1/status")"
			p=$(sync_field "$1" percent)
			awk -v p="$p" -v w="$3" 'BEGIN { exit !(p >= w) }' && return 0
			[[ $(sync_field "$1" held) == true ]] && return 0
		fi
		sleep 0.05
	done
	fail "$1: no $2 past $3%: $(cat "$1/status")"
}
wait_recovery_past() { wait_sync_past "$1" recovery "$2"; }

# sync_hold MNT PERCENT: md's sync_max (MNT/ctl) at PERCENT of the volume's
# capacity, in 512-byte sectors (a resync's, check's or recovery's span is
# the capacity): a pass stops before a unit that ends past it, however fast
# or slow the machine is, until sync_release. Set it before the pass starts.
sync_hold() { echo "sync_max $(($(size_of "$1/volume") / 512 * $2 / 100))" >"$1/ctl"; }
sync_release() { echo "sync_max max" >"$1/ctl"; }
# sync_cap MNT PERCENT: md's sync_max PERCENT of the running pass's span past
# where it is now, and before its end: the pass cannot end before a test cuts it
sync_cap() {
	local done total max
	wait_for 60 "$1: no pass running to cap: $(cat "$1/status")" \
		jq_true '.sync.state == "running" and .sync.sync_completed[1] > 0' "$1/status.json"
	read -r done total < <(jq -r '.sync.sync_completed | "\(.[0]) \(.[1])"' "$1/status.json")
	max=$((done + total * $2 / 100))
	((max < total)) || max=$((total - 1))
	echo "sync_max $max" >"$1/ctl"
}
# sync_wait_held MNT ACTION: the pass ACTION runs and waits at sync_max
sync_wait_held() {
	wait_for 120 "$1: no $2 held at sync_max: $(cat "$1/status")" \
		jq_true --arg a "$2" '.sync.action == $a and .sync.state == "running" and .sync.held' "$1/status.json"
}

# wait_acked LOG N WPID: until LOG holds N acknowledged writes, the writer running
wait_acked() {
	local i
	for ((i = 0; i < 1200; i++)); do
		[[ $(grep -c '^A' "$1" 2>/dev/null) -ge $2 ]] && return 0
		_alive "$3" || fail "the writer stopped before $2 acknowledged writes: $(grep -c '^A' "$1")"
		sleep 0.05
	done
	fail "the writer did not reach $2 acknowledged writes: $(grep -c '^A' "$1")"
}

# free_port: a loopback TCP port free now (a daemon may take it before it is used: retry)
free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# fsvol_mount_http MNT MEMBER...: fsvol mount --http on a free loopback port,
# its cleanup registered; the port in HTTP_PORT (one taken meanwhile is
# refused by name: another, 5 tries)
fsvol_mount_http() {
	local mnt=$1 try
	shift
	mkdir -p "$mnt"
	for try in 1 2 3 4 5; do
		HTTP_PORT=$(free_port)
		"$FSVOL" mount --log "$DAEMON_LOG" --http "127.0.0.1:$HTTP_PORT" "$mnt" "$@" 2>"$T/mount.err" && break
		grep -q "Address already in use" "$T/mount.err" || fail "mount --http $HTTP_PORT: $(cat "$T/mount.err")"
		[[ $try == 5 ]] && fail "no free port for --http in 5 tries"
	done
	_push_cleanup fsvol "$mnt" "$(daemon_pid "$mnt")"
}
