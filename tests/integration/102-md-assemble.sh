#!/usr/bin/env bash
# 102-md-assemble: Linux md (Debian's kernel in one qemu TCG boot,
# tests/tools/mdguest.sh) assembles volumes fsvol created in md's format
# (create -e 1.2 / 1.0) and wrote through its mount: raid1, raid5, raid6,
# raid10; md reads the same bytes, its own check finds mismatch_cnt 0, it
# reads the same bytes degraded, and takes a volume fsvol wrote degraded
# (its stale member left out), and the states fsvol wrote into md's fields:
# a member failed, removed and re-added, a blank one added (md assembles them
# in sync), a recovery stopped half way (md goes on from recovery_offset);
# and a volume in fsvol's own format after fsvol convert.
# The reverse: arrays md created and wrote in the
# guest (with a bitmap; one with a member failed mid-write) fsvol mounts on the
# host and reads the same bytes. Every level and layout: 103-md-assemble-all.
# tests/mdasm_lib.sh says what each case does.
# fsvol-test: timeout 900 (one qemu TCG boot: about a minute idle, several under a loaded make check)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../mdasm_lib.sh"
mda_setup
cat >"$T/cases" <<'CASES'
fwd 1.2 raid1 - 2 -
fwd 1.2 raid5 left-symmetric 4 -
fwd 1.0 raid6 left-symmetric 4 -
fwd 1.2 raid10 n2 4 -
fwd 1.2 raid5 left-symmetric 3 degr
fwd 1.2 raid5 left-symmetric 4 ops
fwd 1.2 raid6 left-symmetric 4 midrec
fwd 1.2 raid6 left-asymmetric 4 conv
rev 1.2 raid5 left-symmetric 3 bitmap
rev 1.0 raid6 left-symmetric 4 fail
CASES
mda_run_cases "$T/cases"
note "Linux md $(cat "$FSVOL_MDGUEST_DIR/kver") and fsvol open each other's arrays ($(wc -l <"$T/cases") cases)"
