/* validate, dsparam, disksim: DiskSim's rms as its tool computes it (zero for
 * one sample against itself, the shift for a shifted one), the libparam
 * reader (blocks, lists, source as a value, errors at FILE:LINE), the drive
 * mapping (zones, seek table, overheads) and a validation replay that gives
 * the same times twice. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsvol/model/disksim.h"
#include "fsvol/model/dsparam.h"
#include "fsvol/model/spindle.h"
#include "fsvol/model/validate.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	strcpy(dir, "/tmp/test_validate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(rms_of_itself_and_of_a_shift)
{
	enum { N = 5000 };
	static double a[N], b[N];
	for (int i = 0; i < N; i++) {
		a[i] = 1 + 9.0 * i / N; /* uniform over 1..10 ms */
		b[i] = a[i] + 1;
	}
	ck_assert_double_eq_tol(validate_rms(a, N, a, N), 0, 1e-9);
	double r = validate_rms(a, N, b, N);
	ck_assert_msg(fabs(r - 1) < 0.02, "a 1 ms shift gives rms %f", r);
	/* a tenth of the requests 10 ms slower: sqrt(0.1 * 100) = 3.16 ms */
	for (int i = 0; i < N; i++)
		b[i] = a[i] + (i % 10 == 0 ? 10 : 0);
	r = validate_rms(a, N, b, N);
	ck_assert_msg(r > 1 && r < 5, "rms %f", r);
}
END_TEST

START_TEST(summary)
{
	double v[] = { 5, 1, 3, 2, 4, 6, 7, 8, 9, 10 }, mean, p50, p90;
	ck_assert_int_eq(validate_summary(v, 10, &mean, &p50, &p90), 0);
	ck_assert_double_eq_tol(mean, 5.5, 1e-9);
	ck_assert_double_eq_tol(p50, 5, 1e-9);
	ck_assert_double_eq_tol(p90, 9, 1e-9);
}
END_TEST

static const char *model_text =
	"# a small drive\n"
	"dm_disk D_model {\n"
	"   Number of data surfaces = 2,\n"
	"   Number of cylinders = 100,\n"
	"   Block count = 19000,\n"
	"   Layout Model = dm_layout_g1 {\n"
	"      LBN-to-PBN mapping scheme = 0,\n"
	"      Sparing scheme used = 0,\n"
	"      Zones = [\n"
	"         dm_layout_g1_zone { First cylinder number = 0, Last cylinder number = 49,\n"
	"            Blocks per track = 100, Offset of first block = 0,\n"
	"            Skew for track switch = 10, Skew for cylinder switch = 20, Number of spares = 0,\n"
	"            slips = [], defects = [] },\n"
	"         dm_layout_g1_zone { First cylinder number = 50, Last cylinder number = 99,\n"
	"            Blocks per track = 90, Offset of first block = 5,\n"
	"            Skew for track switch = 9, Skew for cylinder switch = 18, Number of spares = 0,\n"
	"            slips = [ 1, 2 ], defects = [] }\n"
	"      ]\n"
	"   },\n"
	"   Mechanical Model = dm_mech_g1 {\n"
	"      Access time type = trackSwitchPlusRotation,\n"
	"      Seek type = extracted,\n"
	"      Full seek curve = d.seek,\n"
	"      Add. write settling delay = 0.5,\n"
	"      Head switch time = 0.1,\n"
	"      Rotation speed (in rpms) = 6000,\n"
	"      Percent error in rpms = 0.0\n"
	"   }\n"
	"}\n";

static const char *disk_text =
	"disksim_disk D {\n"
	"   Model = source d.model,\n"
	"   Bulk sector transfer time = 0.01,\n"
	"   Number of buffer segments = 2,\n"
	"   Segment size (in blks) = 64,\n"
	"   Maximum read-ahead (blks) = 32,\n"
	"   Read-ahead over requested = 1,\n"
	"   Fast write level = 0,\n"
	"   Read hit over. after read = 0.1,\n"
	"   Read miss over. after read = 0.5,\n"
	"   Write miss over. after write = 0.7,\n"
	"   Never disconnect = 0\n"
	"}\n"
	"instantiate [ disk0 ] as D\n"
	"topology disksim_iodriver driver0 [ disksim_bus bus0 [ disksim_disk disk0 [] ] ]\n";

START_TEST(dsparam_reads_blocks_lists_and_sources)
{
	char p[128], err[256];
	struct dsp_file f;
	put("d.model", model_text);
	put("d.parv", disk_text);
	snprintf(p, sizeof(p), "%s/d.parv", dir);
	ck_assert_int_eq(dsp_load(p, &f, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.ninst, 1);
	ck_assert_str_eq(f.inst_name[0], "disk0");
	ck_assert_str_eq(f.inst_type[0], "D");
	struct dsp_block *d = NULL;
	for (size_t i = 0; i < f.nblock; i++)
		if (!strcmp(f.block[i]->type, "disksim_disk"))
			d = f.block[i];
	ck_assert_ptr_nonnull(d);
	struct dsp_param *m = dsp_get(d, "Model");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->v.kind, DSP_BLOCK);
	ck_assert_str_eq(m->v.block->name, "D_model");
	struct dsp_param *lay = dsp_get(m->v.block, "Layout Model");
	struct dsp_param *z = dsp_get(lay->v.block, "Zones");
	ck_assert_int_eq(z->v.kind, DSP_LIST);
	ck_assert_uint_eq(z->v.nitem, 2);
	struct dsp_param *spt = dsp_get(z->v.item[1].block, "Blocks per track");
	ck_assert_double_eq(spt->v.num, 90);
	ck_assert_int_eq(spt->v.line, 15);
	ck_assert_int_eq(dsp_get(z->v.item[1].block, "slips")->v.nitem, 2);
	ck_assert_ptr_null(dsp_get(d, "No such thing"));
	dsp_free(&f);
}
END_TEST

static const struct {
	const char *text, *want;
} bad[] = {
	{ "disksim_disk D {\n  a = 1,\n  b = 2 3\n}\n", "d.parv:3: expected ',' or '}' after the value of 'b'" },
	{ "disksim_disk D {\n  a = [ 1, 2\n}\n", "d.parv:3: expected ',' or ']' in a list" },
	{ "disksim_disk D {\n  a = 1\n", "d.parv:3: expected ',' or '}' after the value of 'a'" },
	{ "disksim_disk D {\n  a = 1,\n", "d.parv:3: expected '}' to close disksim_disk D (opened at line 1)" },
	{ "disksim_disk D = {\n}\n", "d.parv:1: expected a block (TYPE NAME { ... })" },
	{ "source nothere.diskspecs\n", "d.parv:1: source nothere.diskspecs: " },
	{ "disksim_disk D {\n  just words\n}\n", "d.parv:2: expected 'Parameter name = value'" },
	{ "instantiate disk0 as D\n", "d.parv:1: expected 'instantiate [ NAME, ... ] as TYPE'" },
};

START_TEST(dsparam_errors_name_file_and_line)
{
	char p[128], err[256] = "";
	struct dsp_file f;
	put("d.parv", bad[_i].text);
	snprintf(p, sizeof(p), "%s/d.parv", dir);
	ck_assert_int_lt(dsp_load(p, &f, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, bad[_i].want), "'%s' lacks '%s'", err, bad[_i].want);
	snprintf(p, sizeof(p), "%s/none.parv", dir);
	ck_assert_int_eq(dsp_load(p, &f, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "none.parv: No such file"), "%s", err);
	ck_assert_int_lt(dsp_load("/dev/zero", &f, err, sizeof(err)), 0); /* never ends */
	ck_assert_msg(strstr(err, "/dev/zero: not a regular file"), "%s", err);
}
END_TEST

START_TEST(disksim_maps_the_drive)
{
	char p[128], err[256];
	struct spindle_params sp;
	put("d.model", model_text);
	put("d.parv", disk_text);
	put("d.seek", "Seek distances measured: 3\n1, 1.0\n10, 2.0\n99, 5.0\n");
	snprintf(p, sizeof(p), "%s/d.parv", dir);
	FILE *log = tmpfile();
	ck_assert_int_eq(disksim_load(p, &sp, log, err, sizeof(err)), 0);
	const struct spindle_table *t = sp.tab;
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(sp.rpm, 6000);
	ck_assert_uint_eq(sp.heads, 2);
	ck_assert_uint_eq(t->nzones, 2);
	ck_assert_uint_eq(t->zone[0].lbns + t->zone[1].lbns, 19000);
	ck_assert_uint_eq(t->zone[0].lbns, 10000);
	ck_assert_double_eq(t->zone[1].tskew, 9);
	ck_assert_uint_eq(t->nseek, 3);
	ck_assert_double_eq_tol(spindle_table_seek_ns(t, 5.5), 1.5e6, 1);
	ck_assert_double_eq_tol(spindle_table_seek_ns(t, 99), 5e6, 1);
	ck_assert_uint_eq(t->ovh_ns[SPINDLE_OVH_RMISS][0], 500000);
	ck_assert_uint_eq(t->ovh_ns[SPINDLE_OVH_WMISS][1], 700000);
	ck_assert_uint_eq(t->rsect_ns, 10000);
	ck_assert_uint_eq(t->segments, 2);
	ck_assert_uint_eq(t->seg_bytes, 64 * 512);
	ck_assert_int_eq(t->settle_ns, 500000);
	ck_assert_int_eq(sp.wcache, 0);
	/* what was ignored is listed, once each */
	rewind(log);
	char all[4096] = "";
	size_t n = fread(all, 1, sizeof(all) - 1, log);
	all[n] = 0;
	fclose(log);
	ck_assert_msg(strstr(all, "ignored: Percent error in rpms"), "%s", all);
	ck_assert_ptr_null(strstr(all, "ignored: Never disconnect")); /* a write reselects */
	ck_assert_uint_eq(t->nslips, 2); /* zone 1's slips, kept for the map */
	ck_assert_uint_eq(t->zone[1].slip0, 0);
	ck_assert_uint_eq(t->zone[1].nslip, 2);
	ck_assert_msg(strstr(all, "ignored: defects"), "%s", all);
	ck_assert_ptr_null(strstr(strstr(all, "ignored: defects") + 1, "ignored: defects"));
	ck_assert_ptr_null(strstr(all, "ignored: slips")); /* where they are is mapped */
	/* the spec form gives the same drive back */
	char spec[256];
	snprintf(spec, sizeof(spec), "disksim:%s", p);
	struct spindle_params q;
	ck_assert_int_eq(spindle_parse(spec, &q, err, sizeof(err)), 0);
	ck_assert_ptr_eq(q.tab, sp.tab);
	char back[300];
	spindle_format(&q, back, sizeof(back));
	ck_assert_str_eq(back, spec);

	/* a replay in virtual time: the same times twice, each request served */
	struct tracefile tr = { 0 };
	for (unsigned i = 0; i < 200; i++) {
		struct tracefile_rec r = { .t_ns = i * 20000000ull, .off = (i * 7919ull % 18000) * 512,
					   .len = 8 * 512, .service_ns = 10000000, .line = i + 1,
					   .op = i % 3 ? TRACEFILE_READ : TRACEFILE_WRITE };
		ck_assert_int_eq(tracefile_push(&tr, &r), 0);
	}
	uint64_t *x = calloc(tr.n, sizeof(*x)), *y = calloc(tr.n, sizeof(*y));
	ck_assert_int_eq(validate_run(&sp, &tr, x, err, sizeof(err)), 0);
	ck_assert_int_eq(validate_run(&sp, &tr, y, err, sizeof(err)), 0);
	for (size_t i = 0; i < tr.n; i++) {
		ck_assert_uint_eq(x[i], y[i]);
		ck_assert_uint_gt(x[i], 500000); /* at least an overhead */
		ck_assert_uint_lt(x[i], 40000000); /* at most seek + a turn + a transfer */
	}
	/* a request beyond the drive is refused before anything runs */
	tr.rec[5].off = 19000ull * 512;
	ck_assert_int_eq(validate_run(&sp, &tr, x, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "line 6: blocks 19000..19007 are beyond the drive's 19000 blocks"), "%s", err);
	free(x);
	free(y);
	tracefile_free(&tr);
}
END_TEST

/* DiskSim's map with slips (layout_g1's g1_ltop_*): a slipped track is
 * skipped under track sparing; a slipped sector moves the later blocks of its
 * cylinder on, and pushes the angle of the later tracks a sector each. */
START_TEST(map_steps_over_slips)
{
	static struct spindle_table t; /* large */
	struct spindle_pbn p;
	memset(&t, 0, sizeof(t));
	t.nzones = 1;
	t.zone[0].cyl0 = 10;
	t.zone[0].cyl1 = 19;
	t.zone[0].spt = 100;
	t.zone[0].nslip = 2;
	t.slip[0] = 3;
	t.slip[1] = 5;
	t.nslips = 2;
	t.scheme = 1; /* track sparing: slips 3 and 5 are tracks */
	spindle_map_ltop(&t, 4, 0, 250, &p); /* track 2 */
	ck_assert_uint_eq(p.cyl, 10);
	ck_assert_uint_eq(p.head, 2);
	ck_assert_uint_eq(p.sector, 50);
	spindle_map_ltop(&t, 4, 0, 350, &p); /* logical track 3: physical 4 */
	ck_assert_uint_eq(p.cyl, 11);
	ck_assert_uint_eq(p.head, 0);
	spindle_map_ltop(&t, 4, 0, 450, &p); /* logical 4: physical 6 (5 slipped too) */
	ck_assert_uint_eq(p.cyl, 11);
	ck_assert_uint_eq(p.head, 2);
	ck_assert_uint_eq(p.slipoffs, 0);
	ck_assert_uint_eq(spindle_map_run(&t, 4, 0, 250, 1000), 50);
	t.scheme = 2; /* sectors per cylinder, 10 spares each; slips 3 and 5 are sectors */
	t.zone[0].spares = 10;
	spindle_map_ltop(&t, 4, 0, 2, &p);
	ck_assert_uint_eq(p.sector, 2);
	spindle_map_ltop(&t, 4, 0, 3, &p); /* sector 3 slipped: on to 4 */
	ck_assert_uint_eq(p.sector, 4);
	spindle_map_ltop(&t, 4, 0, 4, &p); /* and 5: on to 6 */
	ck_assert_uint_eq(p.sector, 6);
	ck_assert_uint_eq(spindle_map_run(&t, 4, 0, 0, 1000), 3);
	spindle_map_ltop(&t, 4, 0, 390, &p); /* the next cylinder, angle pushed 2 sectors */
	ck_assert_uint_eq(p.cyl, 11);
	ck_assert_uint_eq(p.head, 0);
	ck_assert_uint_eq(p.sector, 0);
	ck_assert_uint_eq(p.slipoffs, 2);
}
END_TEST

/* A write-through write goes on the media block by block as its data comes
 * in (0.2 ms a block on this bus, 0.1 ms a sector on the media): a 40-block
 * write whose first sector (block 3 of the track) passes the head at 0.3 ms,
 * block 0 in at 0.2 ms, writes sectors 3 and 4, finds block 2 not yet in
 * when sector 5 passes, and waits a turn (10 ms): the rest goes at 10.5 ms,
 * done at 14.3 ms, where the bus alone would take 8 ms. */
START_TEST(write_outrunning_its_data_waits_a_turn)
{
	char p[128], err[256];
	static struct spindle sp; /* large */
	struct spindle_params prm;
	char slow[2048];
	snprintf(slow, sizeof(slow), "%s", disk_text);
	char *b = strstr(slow, "Bulk sector transfer time = 0.01");
	ck_assert_ptr_nonnull(b);
	memcpy(b, "Bulk sector transfer time = 0.20", 32);
	put("d.model", model_text);
	put("d.parv", slow);
	put("d.seek", "Seek distances measured: 3\n1, 1.0\n10, 2.0\n99, 5.0\n");
	snprintf(p, sizeof(p), "%s/d.parv", dir);
	FILE *log = tmpfile();
	ck_assert_int_eq(disksim_load(p, &prm, log, err, sizeof(err)), 0);
	fclose(log);
	spindle_init(&sp, &prm, prm.capacity_bytes);
	struct spindle_req w = { .offset = 3 * 512, .length = 40 * 512, .write = 1 };
	uint64_t tw = spindle_service_ns(&sp, &w, 0, NULL);
	ck_assert_msg(tw >= 14290000 && tw <= 14310000, "the write took %llu ns", (unsigned long long)tw);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rms_of_itself_and_of_a_shift);
	tcase_add_test(tc, summary);
	tcase_add_test(tc, dsparam_reads_blocks_lists_and_sources);
	tcase_add_loop_test(tc, dsparam_errors_name_file_and_line, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, disksim_maps_the_drive);
	tcase_add_test(tc, map_steps_over_slips);
	tcase_add_test(tc, write_outrunning_its_data_waits_a_turn);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
