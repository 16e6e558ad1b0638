#!/usr/bin/env bash
# 100-md-format: `fsvol create --metadata 1.0|1.1|1.2` writes Linux md's own
# superblock, internal bitmap and bad-block log (issue 31), checked by the
# real readers: mdadm --examine (every line fsvol examine prints equals
# mdadm's, the checksum correct), mdadm --examine-bitmap on the bitmap found
# where mdadm says it is, mdadm --examine --scan, blkid -p and GRUB's own md
# code (grub-fstest assembles the array from the member files). The data
# offset is recomputed here from mdadm's rule. (Mounting them: 101-md-mount.)
. "$(dirname "$0")/../lib.sh"
requires mdadm
requires blkid
requires grub-fstest
cd "$T"

host=$(hostname)
SIZE_MIB=24

# mdadm's data offset for 1.1/1.2 (super1.c validate_geometry1), in sectors
mdadm_doff() { # DEV_SECTORS CHUNK_SECTORS
	local dev=$1 chunk=$2 bm=0 head=$((128 * 1024 * 2))
	if ((dev < 128)); then bm=0
	elif ((dev - 128 >= 200 * 1024 * 1024 * 2)); then bm=256
	elif ((dev - 8 > 8 * 1024 * 1024 * 2)); then bm=128
	else bm=8; fi
	while (((head << 10) > dev && head / 2 >= chunk * 2)); do head=$((head >> 1)); done
	echo $(((24 + bm + head + 2047) / 2048 * 2048))
}

# parse FILE: "Name : value" lines into F[Name] (no process per field)
declare -A F
parse() {
	F=()
	local line
	while IFS= read -r line; do
		[[ $line =~ ^\ *([^ :][^:]*[^ :])\ :\ ?(.*)$ ]] && F[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done <"$1"
}
field() { parse "$2"; echo "${F[$1]-}"; }

# mdadm's words, the same on every member (the first is compared whole)
check_member() { # META LEVEL N BITMAP UUID LABEL INDEX MEMBER
	local meta=$1 level=$2 n=$3 bitmap=$4 uuid=$5 label=$6 i=$7 m=$8 what="$1 $2 $4 $8"
	mdadm --examine "$m" >md.txt 2>md.err || fail "mdadm --examine $what: $(cat md.err)"
	parse md.txt
	[[ ${F[Version]-} == "$meta" ]] || fail "$what: Version ${F[Version]-}"
	[[ ${F[Raid Level]-} == "$level" ]] || fail "$what: Raid Level ${F[Raid Level]-}"
	[[ ${F[Raid Devices]-} == "$n" ]] || fail "$what: Raid Devices ${F[Raid Devices]-}"
	[[ ${F[Array UUID]-} == "$uuid" ]] || fail "$what: Array UUID ${F[Array UUID]-}"
	[[ ${F[Name]-} == "$label"* ]] || fail "$what: Name ${F[Name]-}, expected $label"
	[[ ${F[State]-} == clean ]] || fail "$what: State ${F[State]-}"
	[[ ${F[Checksum]-} == *" - correct" ]] || fail "$what: Checksum ${F[Checksum]-}"
	[[ ${F[Device Role]-} == "Active device $i" ]] || fail "$what: Device Role ${F[Device Role]-}"
	local as=AAAAAAAA
	[[ ${F[Array State]-} == "${as:0:n} "* ]] || fail "$what: Array State ${F[Array State]-}"
	local dev=$(($(size_of "$m") / 512)) soff
	case $meta in
	1.0) soff=$(((dev - 16) & ~7))
		[[ -z ${F[Data Offset]-} ]] || fail "$what: 1.0 has its data at 0" ;;
	1.1) soff=0 ;;
	1.2) soff=8 ;;
	esac
	[[ ${F[Super Offset]-} == "$soff sectors" ]] || fail "$what: Super Offset ${F[Super Offset]-}, expected $soff"
	if [[ $meta != 1.0 ]]; then
		local want
		want=$(mdadm_doff "$dev" 128)
		[[ ${F[Data Offset]-} == "$want sectors" ]] ||
			fail "$what: Data Offset ${F[Data Offset]-}, mdadm's rule says $want"
	fi
	[[ ${F[Bad Block Log]-} == "512 entries available at offset "* ]] || fail "$what: no bad-block log"
	if [[ $bitmap == none ]]; then
		[[ -z ${F[Internal Bitmap]-} ]] || fail "$what: a bitmap that was not asked for"
	fi
	((i == 0)) || return 0
	# every line fsvol prints is mdadm's, but for what only mdadm can say
	"$FSVOL" examine "$m" >fs.txt 2>fs.err || fail "fsvol examine $what: $(cat fs.err)"
	grep -v -e '^   Unused Space :' md.txt | sed 's/  (local to host .*)$//' >md.cmp
	grep -v -e '^ *Bitmap Chunk :' -e '^ *Bitmap Events :' -e '^ *Write Behind :' fs.txt | sed '${/^$/d}' >fs.cmp
	diff md.cmp fs.cmp >diff.out || fail "$what: fsvol examine differs from mdadm --examine:"$'\n'"$(cat diff.out)"
	if [[ $bitmap == internal ]]; then
		local boff=${F[Internal Bitmap]-} used=${F[Used Dev Size]:-${F[Avail Dev Size]-}}
		boff=${boff%% *}
		used=${used%% *}
		dd if="$m" of=bm bs=512 skip=$((soff + boff)) count=8 status=none
		mdadm --examine-bitmap bm >bm.txt 2>bm.err || fail "$what: mdadm -X: $(cat bm.err)"
		parse bm.txt
		[[ ${F[Magic]-} == 6d746962 ]] || fail "$what: bitmap magic ${F[Magic]-}"
		[[ ${F[UUID]-} == "$uuid" ]] || fail "$what: bitmap UUID ${F[UUID]-}"
		[[ ${F[Bitmap]-} == *", 0 dirty (0.0%)" ]] || fail "$what: bitmap ${F[Bitmap]-}"
		[[ ${F[Sync Size]-} == "$((used / 2)) "* ]] ||
			fail "$what: bitmap Sync Size ${F[Sync Size]-}, component $used sectors"
	fi
	local blk dashed=${uuid//:/}
	dashed=${dashed:0:8}-${dashed:8:4}-${dashed:12:4}-${dashed:16:4}-${dashed:20}
	blk=$(blkid -p -o export "$m") || fail "$what: blkid found nothing"
	for want in TYPE=linux_raid_member "UUID=$dashed" "LABEL=$label" "VERSION=$meta"; do
		[[ $'\n'$blk$'\n' == *$'\n'"$want"$'\n'* ]] || fail "$what: blkid lacks $want: $blk"
	done
}

check_one() { # META LEVEL N BITMAP(internal|none)
	local meta=$1 level=$2 n=$3 bitmap=$4
	local name=t${level}x${meta/./}$bitmap
	local ms=() i
	for ((i = 0; i < n; i++)); do ms+=("$name.m$i"); done
	"$FSVOL" create -e "$meta" -l "$level" -n "$n" -c 64K -z ${SIZE_MIB}M --bitmap "$bitmap" -N "$name" \
		"${ms[@]}" >create.out 2>create.err || fail "create $meta $level: $(cat create.err)"
	local uuid=$(<create.out) label="$host:$name"
	uuid=${uuid#*UUID }
	uuid=${uuid%%)*}
	[[ $uuid =~ ^[0-9a-f]{8}(:[0-9a-f]{8}){3}$ ]] || fail "no UUID in: $(cat create.out)"
	((${#label} < 32)) || label=$name
	for ((i = 0; i < n; i++)); do
		check_member "$meta" "$level" "$n" "$bitmap" "$uuid" "$label" "$i" "${ms[i]}"
	done
	mdadm --examine --scan "${ms[@]}" >scan.txt 2>&1 || true
	grep -q "UUID=$uuid" scan.txt || fail "$meta $level: mdadm --examine --scan: $(cat scan.txt)"
	# GRUB's md code assembles the array from the files
	timeout 60 grub-fstest -c "$n" "${ms[@]}" -- ls >grub.txt 2>&1 || fail "$meta $level: grub-fstest: $(cat grub.txt)"
	grep -qF "(md/$name)" grub.txt || fail "$meta $level: GRUB lists no (md/$name): $(cat grub.txt)"
	rm -f "${ms[@]}"
}

# raid1 and raid5 with and without a bitmap on every version; raid6 and
# raid10 one each way across the versions; raid0 once
other=none
for meta in 1.0 1.1 1.2; do
	for spec in raid1:2 raid5:4; do
		for bitmap in internal none; do
			check_one "$meta" "${spec%:*}" "${spec#*:}" "$bitmap"
		done
	done
	check_one "$meta" raid6 4 "$([[ $other == none ]] && echo internal || echo none)"
	check_one "$meta" raid10 4 "$other"
	other=$([[ $other == none ]] && echo internal || echo none)
done
check_one 1.2 raid0 3 none
note "mdadm, blkid and GRUB read 1.0/1.1/1.2 raid0/1/5/6/10 members, with and without a bitmap"

# linear (mdadm's level name), write-mostly (md's devflags), a spare
"$FSVOL" create -e 1.2 -l linear -z 8M -N lin l0 l1 >/dev/null || fail "create linear"
mdadm --examine l1 >md.txt || fail "mdadm --examine linear"
[[ $(field "Raid Level" md.txt) == linear ]] || fail "linear: $(field "Raid Level" md.txt)"
"$FSVOL" create -e 1.2 -l raid1 -n 2 -x 1 -z 8M --write-mostly w1 -N wm w0 w1 w2 >/dev/null || fail "create raid1 + spare"
mdadm --examine w1 >md.txt || fail "mdadm --examine w1"
[[ $(field Flags md.txt) == write-mostly ]] || fail "w1: Flags $(field Flags md.txt)"
mdadm --examine w2 >md.txt || fail "mdadm --examine w2"
[[ $(field "Device Role" md.txt) == spare ]] || fail "w2: Device Role $(field "Device Role" md.txt)"
[[ $(field "Checksum" md.txt) == *" - correct" ]] || fail "w2: checksum"

# refusals: an md member is not overwritten without --force; formats and levels md has not
expect_fail_msg "already a member of md array" "$FSVOL" create -e 1.2 -l raid1 -n 2 -z 8M w0 w1
"$FSVOL" create -f -e 1.1 -l raid1 -n 2 -z 8M w0 w1 >/dev/null || fail "create --force over md members"
expect_fail_msg "metadata 0.90: give fsvol, 1.0, 1.1 or 1.2" "$FSVOL" create -e 0.90 -l raid1 -z 8M x0 x1
expect_fail_msg "md has no level single" "$FSVOL" create -e 1.2 -l single -z 8M x0
[[ ! -e x0 ]] || fail "a refused create left x0 behind"
note "refusals name md's members and formats"
