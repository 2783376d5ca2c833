/* test_hostlist.c: unit tests of lib/hostlist.c (expansion, compression, every refusal). */
#include "tbm_check.h"
#include <stdio.h>
#include <string.h>

#include "hostlist.h"
#include "strbuf.h"
#include "scalar.h"

/* Expand and join with spaces, or return the error message. */
static char *expand_joined(const char *expr, char *out, size_t len)
{
    tbm_err_t err = {{0}};
    char **names;
    size_t n, i, used = 0;

    if (tbm_hostlist_expand(expr, &names, &n, &err) < 0) {
        snprintf(out, len, "ERR %s", err.msg);
        return out;
    }
    out[0] = '\0';
    for (i = 0; i < n; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", i ? " " : "", names[i]);
    tbm_hostlist_free(names, n);
    return out;
}

#define EXPANDS(expr, want)                                          \
    do {                                                             \
        char buf_[4096];                                             \
        ck_assert_str_eq(expand_joined(expr, buf_, sizeof(buf_)), want); \
    } while (0)

START_TEST(expand_forms)
{
    EXPANDS("lnx01", "lnx01");
    EXPANDS("mac[01-04,07]", "mac01 mac02 mac03 mac04 mac07");
    EXPANDS("a[1-3]b", "a1b a2b a3b");
    EXPANDS("mac[08-11]", "mac08 mac09 mac10 mac11");
    EXPANDS("n[98-101]", "n98 n99 n100 n101");
    EXPANDS("n[098-101]", "n098 n099 n100 n101");
    EXPANDS("mac[01-02],lnx01,x[5]", "mac01 mac02 lnx01 x5");
    EXPANDS("[1-2]", "1 2");
    EXPANDS("studio-a.lab_1", "studio-a.lab_1");
    EXPANDS("m[3,1]", "m3 m1");
    EXPANDS("m1,m1", "m1 m1");
}
END_TEST

START_TEST(expand_refusals)
{
    EXPANDS("", "ERR hostlist is empty: name at least one host");
    EXPANDS("mac[01-04", "ERR hostlist 'mac[01-04': '[' without a matching ']': close the bracket");
    EXPANDS("mac01]", "ERR hostlist 'mac01]': ']' without a matching '[': remove it");
    EXPANDS("a[1-2]b[3-4]", "ERR hostlist 'a[1-2]b[3-4]': more than one bracket in 'a[1-2]b[3-4]': "
                            "write one bracket per name");
    EXPANDS("a[1[2]]", "ERR hostlist 'a[1[2]]': brackets inside brackets: write one bracket per name");
    EXPANDS("mac[04-01]", "ERR hostlist 'mac[04-01]': range 04-01 goes downwards: write the lower bound first");
    EXPANDS("mac[a-b]", "ERR hostlist 'mac[a-b]': 'a' is not a number of 1 to 9 digits: write ranges as N or N-M");
    EXPANDS("mac[1-]", "ERR hostlist 'mac[1-]': '' is not a number of 1 to 9 digits: write ranges as N or N-M");
    EXPANDS("mac[1,]", "ERR hostlist 'mac[1,]': '' is not a number of 1 to 9 digits: write ranges as N or N-M");
    EXPANDS("mac[]", "ERR hostlist 'mac[]': empty brackets: put ranges such as [01-04] in them");
    EXPANDS("mac[+1-2]", "ERR hostlist 'mac[+1-2]': '+1' is not a number of 1 to 9 digits: write ranges as N or N-M");
    EXPANDS("mac[ 1]", "ERR hostlist 'mac[ 1]': ' 1' is not a number of 1 to 9 digits: write ranges as N or N-M");
    EXPANDS("mac[1234567890]", "ERR hostlist 'mac[1234567890]': '1234567890' is not a number of 1 to 9 "
                               "digits: write ranges as N or N-M");
    EXPANDS("a,,b", "ERR hostlist 'a,,b': empty name: remove the extra ','");
    EXPANDS("a,", "ERR hostlist 'a,': empty name: remove the extra ','");
    EXPANDS("ma c", "ERR hostlist 'ma c': character ' ' is not allowed in a host name: use letters, digits, "
                    "'.', '-' and '_'");
    EXPANDS("a[1-2]b;", "ERR hostlist 'a[1-2]b;': character ';' is not allowed in a host name: use letters, "
                        "digits, '.', '-' and '_'");
}
END_TEST

START_TEST(expand_bounds)
{
    char **names;
    size_t n;
    tbm_err_t err = {{0}};
    char longname[200];

    ck_assert_int_eq(tbm_hostlist_expand("n[00001-65536]", &names, &n, &err), 0);
    ck_assert_uint_eq(n, 65536);
    ck_assert_str_eq(names[65535], "n65536");
    tbm_hostlist_free(names, n);
    EXPANDS("n[1-65537]", "ERR hostlist 'n[1-65537]' names more than 65536 hosts: split it into smaller lists");
    EXPANDS("n[1-65536],m1", "ERR hostlist 'n[1-65536],m1' names more than 65536 hosts: split it into "
                             "smaller lists");
    EXPANDS("n[0-999999999]", "ERR hostlist 'n[0-999999999]' names more than 65536 hosts: split it into "
                              "smaller lists");
    memset(longname, 'x', 64);
    longname[64] = '\0';
    EXPANDS(longname, "ERR hostlist 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx': host name "
                      "'xxxxxxxxxxxxxxxxxxxx...' is longer than 63 characters: use shorter names");
    memset(longname, 'x', 62);
    strcpy(longname + 62, "[1-10]");
    EXPANDS(longname, "ERR hostlist 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx[1-10]': a "
                      "host name would be longer than 63 characters: use shorter names");
    ck_assert_int_eq(tbm_hostlist_expand(NULL, &names, &n, &err), -1);
    ck_assert_ptr_null(names);
    ck_assert_uint_eq(n, 0);
}
END_TEST

static void compresses(const char *expr, const char *want)
{
    char **names;
    size_t n;
    tbm_err_t err = {{0}};
    char *s;

    ck_assert_int_eq(tbm_hostlist_expand(expr, &names, &n, &err), 0);
    s = tbm_hostlist_compress(names, n);
    ck_assert_str_eq(s, want);
    tbm_hostlist_free(names, n);
    free(s);
}

START_TEST(compress_forms)
{
    compresses("mac01,mac02,mac03,mac04,mac07", "mac[01-04,07]");
    compresses("mac07,mac03,mac01,mac02,mac04,mac03", "mac[01-04,07]");
    compresses("lnx01", "lnx01");
    compresses("a1b,a2b,a3b", "a[1-3]b");
    compresses("mac[08-11]", "mac[08-11]");
    compresses("n[98-101]", "n[98-101]");
    compresses("n[098-101]", "n[098-101]");
    compresses("a1,a05,a5,a2", "a[1-2,5,05]");
    compresses("mac[01-04],lnx01,mac[05-08],login", "mac[01-08],lnx01,login");
    compresses("x,y,x", "x,y");
    compresses("a1x,a2y", "a1x,a2y");
    compresses("m1,m1", "m1");
    compresses("n1234567890", "n1234567890");
}
END_TEST

START_TEST(compress_round_trip)
{
    const char *exprs[] = {"mac[01-04,07]", "n[0-9,10-12,099-101]", "a[1-3]b,c[7]", "s[1-2],t"};
    size_t k;

    for (k = 0; k < sizeof(exprs) / sizeof(exprs[0]); k++) {
        char **a, **b;
        size_t na, nb, i;
        tbm_err_t err = {{0}};
        char *s;

        ck_assert_int_eq(tbm_hostlist_expand(exprs[k], &a, &na, &err), 0);
        s = tbm_hostlist_compress(a, na);
        ck_assert_int_eq(tbm_hostlist_expand(s, &b, &nb, &err), 0);
        ck_assert_uint_eq(na, nb);
        for (i = 0; i < na; i++)
            ck_assert_str_eq(a[i], b[i]);
        tbm_hostlist_free(a, na);
        tbm_hostlist_free(b, nb);
        free(s);
    }
    {
        char *s = tbm_hostlist_compress(NULL, 0);
        ck_assert_str_eq(s, "");
        free(s);
    }
}
END_TEST

/* Names whose digits cannot be split stay whole, and the long list they make still reads back. */
START_TEST(compress_long_literal_list)
{
    char **names, **back;
    size_t n, m;
    tbm_err_t err = {{0}};
    char *s, *big;

    ck_assert_int_eq(tbm_hostlist_expand("mak0[07-61801]8949990598", &names, &n, &err), 0);
    ck_assert_uint_eq(n, 61795);
    s = tbm_hostlist_compress(names, n);
    ck_assert_uint_gt(strlen(s), 1u << 20);
    ck_assert_int_eq(tbm_hostlist_expand(s, &back, &m, &err), 0);
    ck_assert_uint_eq(m, n);
    ck_assert_str_eq(back[m - 1], "mak0618018949990598");
    tbm_hostlist_free(names, n);
    tbm_hostlist_free(back, m);
    free(s);
    big = malloc(65536 * 64 + 2);
    memset(big, 'a', 65536 * 64 + 1);
    big[65536 * 64 + 1] = '\0';
    ck_assert_int_eq(tbm_hostlist_expand(big, &back, &m, &err), -1);
    ck_assert_str_eq(err.msg, "hostlist is longer than 4194304 characters: split it");
    free(big);
}
END_TEST

START_TEST(hostname_valid)
{
    ck_assert_int_eq(tbm_hostname_valid("mac01"), 1);
    ck_assert_int_eq(tbm_hostname_valid("mac[01]"), 0);
    ck_assert_int_eq(tbm_hostname_valid(""), 0);
    ck_assert_int_eq(tbm_hostname_valid(NULL), 0);
    ck_assert_int_eq(tbm_hostname_valid("a b"), 0);
}
END_TEST

/* The small helpers the writers and parsers share. */
START_TEST(strbuf_and_values)
{
    tbm_strbuf_t sb;
    char *s;
    uint32_t ip;
    int v;

    tbm_sb_init(&sb);
    s = tbm_sb_take(&sb);
    ck_assert_str_eq(s, "");
    free(s);
    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "%s=%d", "AgentPort", 6830);
    tbm_sb_append(&sb, "\n", 1);
    s = tbm_sb_take(&sb);
    ck_assert_str_eq(s, "AgentPort=6830\n");
    free(s);
    tbm_sb_init(&sb);
    sb.failed = 1;                       /* out of memory is sticky */
    tbm_sb_printf(&sb, "x");
    ck_assert_ptr_null(tbm_sb_take(&sb));

    ck_assert_int_eq(tbm_parse_uint("65535", 65535, &v), 0);
    ck_assert_int_eq(v, 65535);
    ck_assert_int_eq(tbm_parse_uint("65536", 65535, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("0", 9, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("+1", 9, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("1234567890", 2000000000, &v), -1);
    ck_assert_int_eq(tbm_parse_uint("", 9, &v), -1);
    ck_assert_int_eq(tbm_iface_name_valid("en2"), 1);
    ck_assert_int_eq(tbm_iface_name_valid("rdma_en12"), 1);
    ck_assert_int_eq(tbm_iface_name_valid("2en"), 0);
    ck_assert_int_eq(tbm_iface_name_valid("en-2"), 0);
    ck_assert_int_eq(tbm_iface_name_valid("abcdefghijklmnop"), 0);
    ck_assert_int_eq(tbm_ipv4_parse("169.254.1.2", &ip), 0);
    ck_assert_uint_eq(ip, 0xa9fe0102u);
    ck_assert_int_eq(tbm_ipv4_parse("1.2.3", &ip), -1);
    ck_assert_int_eq(tbm_ipv4_parse("1.2.3.4.5", &ip), -1);
    ck_assert_int_eq(tbm_ipv4_parse("1.2.3.256", &ip), -1);
    ck_assert_int_eq(tbm_ipv4_parse(" 1.2.3.4", &ip), -1);
    ck_assert_int_eq(tbm_ipv4_parse("1.2.3.4 ", &ip), -1);
    ck_assert_int_eq(tbm_ipv4_parse("-1.2.3.4", &ip), -1);
}
END_TEST

static Suite *hostlist_suite(void)
{
    Suite *s = suite_create("hostlist");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, expand_forms);
    tcase_add_test(tc, expand_refusals);
    tcase_add_test(tc, expand_bounds);
    tcase_add_test(tc, compress_forms);
    tcase_add_test(tc, compress_round_trip);
    tcase_add_test(tc, compress_long_literal_list);
    tcase_add_test(tc, hostname_valid);
    tcase_add_test(tc, strbuf_and_values);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(hostlist_suite)
