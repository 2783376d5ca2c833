/* test_parse_sysinfo.c: unit tests of lib/parse_sysinfo.c (sw_vers, sysctl). */
#include "tbm_fixture.h"

START_TEST(studio)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sw_vers.txt", tbm_parse_sw_vers, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(f.os_name, "macOS");
    ck_assert_str_eq(f.os_version, "26.2");
    ck_assert_str_eq(f.os_build, "25C56");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sysctl.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "Mac15,14");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_fixture_parse("macos/studio-a1/sysctl_perflevels.txt", tbm_parse_perflevels, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_int_eq(f.cores_performance, 24);
    ck_assert_int_eq(f.cores_efficiency, 8);
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(sw_vers_partial)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sw_vers_partial.txt", tbm_parse_sw_vers, &f, &fs), 0);
    ck_assert_str_eq(f.os_name, "macOS");
    ck_assert_str_eq(f.os_version, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-bad-value")->what,
                     "ProductVersion \"\" is empty, too long or not printable");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-garbage-line")->where, "sw_vers line 3");
    ck_assert_str_eq(tbm_findings_find(&fs, "sw-vers-missing")->what, "no usable ProductVersion line");
    ck_assert_uint_eq(fs.n, 4);   /* ProductVersion and BuildVersion both missing */
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(sysctl_bad)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_bad.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-bad-value")->what,
                     "hw.memsize \"lots\" is not a number of bytes; ignored");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-short")->what,
                     "only 2 of 3 lines (memsize, brand string, model)");
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("99999999999999999999\nM\nX\nextra\n", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "sysctl-extra-line"));
    tbm_findings_free(&fs);
    ck_assert_int_eq(tbm_text_parse("1125899906842625\nM\nX\n", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 0);   /* above 1 PiB */
    tbm_findings_free(&fs);
}
END_TEST

START_TEST(perflevels_bad)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_perflevels_bad.txt", tbm_parse_perflevels, &f, &fs),
                     0);
    ck_assert_int_eq(f.cores_performance, 0);
    ck_assert_int_eq(f.cores_efficiency, 0);
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-bad-value")->what,
                     "hw.perflevel0.physicalcpu \"many\" is not a core count from 1 to 4096; ignored");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-perflevel-bad-line")->what,
                     "\"sysctl: unknown oid 'hw.perflevel1.physi\" is not a \"name: value\" line like "
                     "\"hw.perflevel0.physicalcpu: ...\"; ignored");
    ck_assert_ptr_nonnull(tbm_findings_find(&fs, "sysctl-no-performance-cores"));
    ck_assert_uint_eq(fs.n, 3);
    tbm_findings_free(&fs);
    /* a Mac with one kind of core prints only perflevel0 */
    ck_assert_int_eq(tbm_text_parse("hw.perflevel0.physicalcpu: 8\n", tbm_parse_perflevels, &f, &fs), 0);
    ck_assert_int_eq(f.cores_performance, 8);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
}
END_TEST

/* The facts of one whole capture folder. */
static void parse_folder(const char *dir, tbm_host_facts_t *f, tbm_findings_t *fs)
{
    tbm_raw_outputs_t raw;

    tbm_fixture_host(dir, &raw);
    raw.hostname = "studio-a1";
    tbm_findings_init(fs);
    ck_assert_int_eq(tbm_facts_parse_all(&raw, f, fs), 0);
    tbm_fixture_host_free(&raw);
}

/* sysctl.txt as a person types it (`sysctl hw.model hw.memsize machdep.cpu.brand_string`: name: value lines,
 * in another order), the perflevels as `name = value`: the same facts as the probe's own capture. */
START_TEST(typed_by_hand)
{
    tbm_host_facts_t want, got;
    tbm_findings_t fs;

    parse_folder("macos/studio-a1", &want, &fs);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
    parse_folder("macos/studio-typed", &got, &fs);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_str_eq(got.chip, "Apple M3 Ultra");
    ck_assert_str_eq(got.model_id, "Mac15,14");
    ck_assert_uint_eq(got.memory_bytes, 274877906944ull);
    ck_assert_int_eq(got.cores_performance, 24);
    ck_assert_int_eq(got.cores_efficiency, 8);
    ck_assert_int_eq(memcmp(&want, &got, sizeof(want)), 0);
    tbm_findings_free(&fs);
}
END_TEST

/* `name = value`, and a typed sysctl.txt may carry the core counts too. */
START_TEST(equals_form_with_cores)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_equals.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 0);
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);
    ck_assert_str_eq(f.chip, "Apple M3 Ultra");
    ck_assert_str_eq(f.model_id, "Mac15,14");
    ck_assert_int_eq(f.cores_performance, 24);
    ck_assert_int_eq(f.cores_efficiency, 8);
    tbm_findings_free(&fs);
    /* blank lines first, names it does not read, a name given twice */
    ck_assert_int_eq(tbm_text_parse("\n  hw.memsize:1024\nhw.ncpu: 32\nhw.model: Mac16,9\nhw.model: Mac15,14\n",
                                    tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 1024);
    ck_assert_str_eq(f.model_id, "Mac16,9");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-extra-line")->what, "hw.ncpu is not read here; ignored");
    ck_assert_int_eq(tbm_findings_find(&fs, "sysctl-extra-line")->severity, TBM_SEV_INFO);
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-duplicate")->what,
                     "hw.model is given again; the first value is kept");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-missing")->what, "no machdep.cpu.brand_string line");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-missing")->where,
                     "sysctl -n hw.memsize machdep.cpu.brand_string hw.model");
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-extra-line")->where,
                     "sysctl -n hw.memsize machdep.cpu.brand_string hw.model line 3");
    ck_assert_uint_eq(fs.n, 3);
    tbm_findings_free(&fs);
    /* several names it does not read: one note naming them all */
    ck_assert_int_eq(tbm_text_parse("hw.ncpu: 1\nhw.memsize: 2\nhw.pagesize: 3\nhw.model: Mac15,14\nkern.x: 4\n"
                                    "machdep.cpu.brand_string: Apple M3\n", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(fs.n, 1);
    ck_assert_str_eq(fs.items[0].what, "hw.ncpu, hw.pagesize and kern.x are not read here; ignored");
    ck_assert_str_eq(fs.items[0].where, "sysctl -n hw.memsize machdep.cpu.brand_string hw.model");
    ck_assert_int_eq(fs.items[0].severity, TBM_SEV_INFO);
    tbm_findings_free(&fs);
}
END_TEST

/* A value that is plainly another field's is never taken, and each says what is wrong. */
static void refused(const char *rel_or_text, int is_text, const char *what)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;
    size_t i;
    int found = 0;

    if (is_text)
        ck_assert_int_eq(tbm_text_parse(rel_or_text, tbm_parse_sysctl, &f, &fs), 0);
    else
        ck_assert_int_eq(tbm_fixture_parse(rel_or_text, tbm_parse_sysctl, &f, &fs), 0);
    for (i = 0; i < fs.n; i++) {
        found |= strcmp(fs.items[i].what, what) == 0;
        ck_assert_str_ne(fs.items[i].fix, "");
        ck_assert_int_eq(fs.items[i].severity, TBM_SEV_WARNING);
    }
    ck_assert_msg(found, "no finding \"%s\" (first: \"%s\")", what, fs.n ? fs.items[0].what : "none");
    ck_assert_msg(!strchr(f.chip, ':') && !strstr(f.chip, "hw.") && !strstr(f.chip, "machdep."), "chip \"%s\"",
                  f.chip);
    ck_assert_msg(!strchr(f.model_id, ':') && !strstr(f.model_id, "hw."), "model \"%s\"", f.model_id);
    tbm_findings_free(&fs);
}

START_TEST(wrong_fields_refused)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    /* a name: value line among the values of sysctl -n */
    refused("macos/malformed/sysctl_mixed.txt", 0,
            "machdep.cpu.brand_string: line 2 is \"hw.model: Mac15,14\", a \"name: value\" line among the bare "
            "values of `sysctl -n`; ignored");
    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_mixed.txt", tbm_parse_sysctl, &f, &fs), 0);
    ck_assert_uint_eq(f.memory_bytes, 274877906944ull);   /* the one value in its place is kept */
    ck_assert_str_eq(f.chip, "");
    ck_assert_str_eq(f.model_id, "");
    ck_assert_uint_eq(fs.n, 2);
    tbm_findings_free(&fs);
    /* the values of sysctl -n in another order: each is plainly not the field of its line */
    refused("macos/malformed/sysctl_wrong_order.txt", 0, "hw.memsize \"Mac15,14\" is not a number of bytes; ignored");
    refused("macos/malformed/sysctl_wrong_order.txt", 0,
            "machdep.cpu.brand_string \"274877906944\" has no letter: it is a number, not a name; ignored");
    refused("macos/malformed/sysctl_wrong_order.txt", 0,
            "hw.model \"Apple M3 Ultra\" is not a model identifier like \"Mac15,14\"; ignored");
    /* a chip holding a sysctl name or a colon, a model that is not one */
    refused("1024\nApple M3 Ultra hw.model\nMac15,14\n", 1,
            "machdep.cpu.brand_string \"Apple M3 Ultra hw.model\" holds the sysctl name hw.model: a \"name: "
            "value\" line was read as a value; ignored");
    refused("1024\nApple: M3\nMac15,14\n", 1,
            "machdep.cpu.brand_string \"Apple: M3\" holds a colon, which no chip name or model identifier has; "
            "ignored");
    refused("1024\nApple M3\nMac15\n", 1, "hw.model \"Mac15\" is not a model identifier like \"Mac15,14\"; ignored");
    refused("hw.memsize: 96 GB\nmachdep.cpu.brand_string: Apple M3\nhw.model: Mac15,14\n", 1,
            "hw.memsize \"96 GB\" is not a number of bytes; ignored");
    refused("hw.memsize: 0\nmachdep.cpu.brand_string: Apple M3\nhw.model: Mac15,14\n", 1,
            "hw.memsize \"0\" is not a memory size from 1 byte to 1 PiB; ignored");
    refused("hw.memsize: 1024\nmachdep.cpu.brand_string:\nhw.model: Mac15,14\n", 1,
            "machdep.cpu.brand_string \"\" is empty; ignored");
    refused("hw.memsize: 1024\nmachdep.cpu.brand_string: Apple M3\nhw.model: Mac15,14\nhw.perflevel0.physicalcpu: 0\n",
            1, "hw.perflevel0.physicalcpu \"0\" is not a core count from 1 to 4096; ignored");
    refused("hw.memsize: 1024\nmachdep.cpu.brand_string: Apple M3\nhw.model: Mac15,14\nApple M3\n", 1,
            "\"Apple M3\" is not a \"name: value\" line like \"hw.memsize: ...\"; ignored");
}
END_TEST

START_TEST(zero_cores_refused)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    ck_assert_int_eq(tbm_fixture_parse("macos/malformed/sysctl_perflevels_zero.txt", tbm_parse_perflevels, &f, &fs),
                     0);
    ck_assert_int_eq(f.cores_performance, 0);
    ck_assert_int_eq(f.cores_efficiency, 0);
    ck_assert_str_eq(fs.items[0].what, "hw.perflevel0.physicalcpu \"0\" is not a core count from 1 to 4096; ignored");
    ck_assert_str_eq(fs.items[0].where, "sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu line 1");
    ck_assert_str_eq(fs.items[1].what, "hw.perflevel1.physicalcpu \"0\" is not a core count from 1 to 4096; ignored");
    ck_assert_str_eq(fs.items[2].code, "sysctl-no-performance-cores");
    ck_assert_uint_eq(fs.n, 3);
    tbm_findings_free(&fs);
    /* sysctl -n hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu: bare counts in that order */
    ck_assert_int_eq(tbm_text_parse("16\n4\n", tbm_parse_perflevels, &f, &fs), 0);
    ck_assert_int_eq(f.cores_performance, 16);
    ck_assert_int_eq(f.cores_efficiency, 4);
    ck_assert_uint_eq(fs.n, 0);
    tbm_findings_free(&fs);
    /* a name perflevels does not read is a bad line there */
    ck_assert_int_eq(tbm_text_parse("hw.perflevel0.physicalcpu: 8\nhw.memsize: 1024\n", tbm_parse_perflevels, &f,
                                    &fs), 0);
    ck_assert_int_eq(f.cores_performance, 8);
    ck_assert_str_eq(tbm_findings_find(&fs, "sysctl-perflevel-bad-line")->what,
                     "hw.memsize is not read here; ignored");
    tbm_findings_free(&fs);
}
END_TEST

static Suite *sysinfo_suite(void)
{
    Suite *s = suite_create("parse_sysinfo");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, studio);
    tcase_add_test(tc, sw_vers_partial);
    tcase_add_test(tc, sysctl_bad);
    tcase_add_test(tc, perflevels_bad);
    tcase_add_test(tc, typed_by_hand);
    tcase_add_test(tc, equals_form_with_cores);
    tcase_add_test(tc, wrong_fields_refused);
    tcase_add_test(tc, zero_cores_refused);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(sysinfo_suite)
