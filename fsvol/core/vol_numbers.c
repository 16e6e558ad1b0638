/* vol_numbers: md's device Numbers. A slot is a role (0..members-1) or a
 * place for a spare or a member that failed out of its role; the Number
 * stays with the device across fail, remove, re-add, replace and a spare
 * taking over (the slot entry moves, its number with it), and names it:
 * "mN" in status, stats, metrics and events, N for fail/remove/replace. A
 * new device gets the lowest Number no slot entry holds (md does this). */
#include <stdlib.h>
#include <string.h>

#include "fsvol/core/vol_int.h"
#include "fsvol/core/volume.h"

/* An entry that stands for a device: a member is there, or the table still
 * records one (failed, or missing until re-added or forgotten). */
static int entry_used(const struct vol *v, unsigned s)
{
	return v->slot[s] || v->sb.slots[s].state != SB_EMPTY;
}

unsigned vol_number_free(const struct vol *v, int except)
{
	uint64_t taken = 0;
	for (unsigned s = 0; s < v->nslots; s++)
		if ((int)s != except && entry_used(v, s) && v->sb.slots[s].number < SB_MAX_SLOTS)
			taken |= 1ull << v->sb.slots[s].number;
	for (unsigned n = 0; n < SB_MAX_SLOTS; n++)
		if (!(taken & (1ull << n)))
			return n;
	return SB_NO_NUMBER; /* cannot happen: at most SB_MAX_SLOTS entries */
}

void vol_numbers_fix(struct vol *v)
{
	for (unsigned s = 0; s < SB_MAX_SLOTS; s++) {
		struct sb_slot *sl = &v->sb.slots[s];
		if (s >= v->nslots || !entry_used(v, s))
			sl->number = SB_NO_NUMBER;
		else if (sl->number == SB_NO_NUMBER)
			sl->number = (uint16_t)vol_number_free(v, (int)s);
	}
}

int vol_slot_number(const struct vol *v, unsigned slot)
{
	if (slot >= v->nslots || !entry_used(v, slot) || v->sb.slots[slot].number == SB_NO_NUMBER)
		return -1;
	return v->sb.slots[slot].number;
}

int vol_slot_of_number(const struct vol *v, unsigned number)
{
	for (unsigned s = 0; s < v->nslots; s++)
		if (vol_slot_number(v, s) == (int)number)
			return (int)s;
	return -1;
}

void vol_slot_name(const struct vol *v, unsigned slot, char out[VOL_NAME_LEN])
{
	int n = vol_slot_number(v, slot);
	/* n < SB_MAX_SLOTS; the %hu bound lets gcc -O1 (SAN=1) see "mN" fits */
	if (n >= 0)
		snprintf(out, VOL_NAME_LEN, "m%hu", (unsigned short)n);
	else
		snprintf(out, VOL_NAME_LEN, "m-");
}

int vol_parse_number(const char *which)
{
	char *end;
	if (which[0] == 'm')
		which++;
	if (which[0] < '0' || which[0] > '9')
		return -1;
	unsigned long n = strtoul(which, &end, 10);
	return !*end && n < SB_MAX_SLOTS ? (int)n : -1;
}
