#!/usr/bin/env bash
# tests/tools/with_fuse_uring.sh CMD [ARG...]: run CMD with the kernel's FUSE
# over io_uring on (the fuse module's enable_uring = Y), then put the old
# value back, on failure and Ctrl-C too. Where the parameter is absent or not
# writable (no root, a kernel before 6.14) CMD runs as it is.
#
# enable_uring is one setting for the whole machine: runs that overlap (two
# `make integration` at once) register their pids in a list under a lock;
# the first one saves the old value, the last one to leave restores it, and a
# run that died without its trap (SIGKILL) is pruned by the next one.
set -uo pipefail
param=${FSVOL_URING_PARAM:-/sys/module/fuse/parameters/enable_uring}
state=${FSVOL_URING_STATE:-/run/fsvol-enable-uring}

[[ $# -gt 0 ]] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }
if [[ ! -w $param ]] || ! mkdir -p "$state" 2>/dev/null; then
	exec "$@"
fi

# locked CMD...: CMD under the state's lock
locked() { ( flock 9 && "$@" ) 9>"$state/lock"; }

# the pids in the list that still run
live_users() {
	local p
	[[ -f $state/users ]] || return 0
	while read -r p; do
		[[ -n $p ]] && kill -0 "$p" 2>/dev/null && echo "$p"
	done <"$state/users"
}

enter() {
	local users
	users=$(live_users)
	# nobody holds it and no run died holding it: the present value is the
	# machine's own
	[[ -n $users || -s $state/saved ]] || cat "$param" >"$state/saved"
	printf '%s\n' "$users" $$ >"$state/users"
	echo Y >"$param"
}

leave() {
	local users
	users=$(live_users | grep -vx "$$")
	if [[ -n $users ]]; then
		printf '%s\n' "$users" >"$state/users"
		return 0
	fi
	rm -f "$state/users"
	[[ -s $state/saved ]] && cat "$state/saved" >"$param"
	rm -f "$state/saved"
}

locked enter || { echo "$0: cannot set $param" >&2; exec "$@"; }
echo "FUSE over io_uring on for this run ($param = Y; restored after)"
# CMD in the foreground: Ctrl-C reaches it (its process group) and the
# traps run once it has ended, so the value stays Y while it cleans up
trap 'locked leave' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$@"
