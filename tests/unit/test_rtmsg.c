/* test_rtmsg.c: unit tests of lib/rtmsg.c (link news from a macOS routing socket's bytes). The messages are
 * built here in the layout of macOS's <net/if.h> and <net/route.h> (rtmsg.h), as one read() returns them. */
#include "tbm_check.h"
#include "rtmsg.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    unsigned index[8];
    int up[8];
    int n;
} seen_t;

static void on_link(void *ctx, unsigned index, int up)
{
    seen_t *s = ctx;

    ck_assert_int_lt(s->n, 8);
    s->index[s->n] = index;
    s->up[s->n++] = up;
}

/* Append one message of len bytes (version, type), its flags and index where an if_msghdr has them. */
static size_t put(unsigned char *buf, size_t off, uint16_t len, uint8_t version, uint8_t type, int32_t flags,
                  uint16_t index)
{
    memset(buf + off, 0xA5, len);   /* if_data and the rest: noise the reader must not look at */
    memcpy(buf + off, &len, 2);
    buf[off + 2] = version;
    buf[off + 3] = type;
    if (len >= TBM_IFM_INDEX_OFF + 2) {
        memcpy(buf + off + TBM_IFM_FLAGS_OFF, &flags, 4);
        memcpy(buf + off + TBM_IFM_INDEX_OFF, &index, 2);
    }
    return off + len;
}

#define UP_RUNNING (TBM_RTM_IFF_UP | TBM_RTM_IFF_RUNNING | 0x8800)   /* with IFF_SIMPLEX and IFF_MULTICAST */

START_TEST(links_up_and_down)
{
    unsigned char buf[1024];
    seen_t s = { 0 };
    tbm_err_t err = { { 0 } };
    size_t n = 0;

    n = put(buf, n, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 9);          /* en2: cable in */
    n = put(buf, n, 20, TBM_RTM_VERSION, 0x0c, UP_RUNNING, 9);                             /* RTM_NEWADDR */
    n = put(buf, n, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, TBM_RTM_IFF_UP | 0x8800, 10); /* no carrier */
    n = put(buf, n, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, TBM_RTM_IFF_RUNNING, 11); /* down by hand */
    n = put(buf, n, TBM_IFM_SIZE + 8, 4, TBM_RTM_IFINFO, UP_RUNNING, 12);                  /* another version */
    n = put(buf, n, TBM_IFM_SIZE + 16, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 13);   /* a longer one */
    ck_assert_int_eq(tbm_rtmsg_links(buf, n, on_link, &s, &err), 4);
    ck_assert_int_eq(s.n, 4);
    ck_assert_uint_eq(s.index[0], 9);
    ck_assert_int_eq(s.up[0], 1);
    ck_assert_uint_eq(s.index[1], 10);
    ck_assert_int_eq(s.up[1], 0);
    ck_assert_uint_eq(s.index[2], 11);
    ck_assert_int_eq(s.up[2], 0);
    ck_assert_uint_eq(s.index[3], 13);
    ck_assert_int_eq(s.up[3], 1);
    ck_assert(!tbm_erris(&err));
    ck_assert_int_eq(tbm_rtmsg_links(buf, 0, on_link, &s, &err), 0);
}
END_TEST

START_TEST(broken_lengths)
{
    unsigned char buf[1024];
    seen_t s = { 0 };
    tbm_err_t err = { { 0 } };
    size_t n;

    /* a read cut in the middle of its second message: the first is passed on, the rest said */
    n = put(buf, 0, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 9);
    n = put(buf, n, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 10);
    ck_assert_int_eq(tbm_rtmsg_links(buf, n - 50, on_link, &s, &err), -1);
    ck_assert_int_eq(s.n, 1);
    ck_assert_str_eq(err.msg, "routing message at byte 112 says it is 112 bytes long, with 62 bytes read; the "
                     "links' states are taken afresh");
    /* a length of 0 would never move on */
    s.n = 0;
    n = put(buf, 0, 4, TBM_RTM_VERSION, 0x0c, 0, 0);
    memset(buf, 0, 2);
    ck_assert_int_eq(tbm_rtmsg_links(buf, n, on_link, &s, &err), -1);
    ck_assert_str_eq(err.msg, "routing message at byte 0 says it is 0 bytes long, with 4 bytes read; the links' "
                     "states are taken afresh");
    /* 3 bytes left after a good message */
    n = put(buf, 0, 20, TBM_RTM_VERSION, 0x0c, 0, 0);
    ck_assert_int_eq(tbm_rtmsg_links(buf, n + 3, on_link, &s, &err), -1);
    ck_assert_str_eq(err.msg, "routing message at byte 20: 3 bytes left, under the 4 of a message's length, "
                     "version and type; the links' states are taken afresh");
    /* an interface message too short for its flags and index */
    n = put(buf, 0, 16, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 9);
    ck_assert_int_eq(tbm_rtmsg_links(buf, n, on_link, &s, &err), -1);
    ck_assert_str_eq(err.msg, "interface message (RTM_IFINFO) at byte 0 is 16 bytes long, under the 112 of its "
                     "header; the links' states are taken afresh");
    ck_assert_int_eq(s.n, 0);
}
END_TEST

START_TEST(no_callback)
{
    unsigned char buf[256];
    size_t n = put(buf, 0, TBM_IFM_SIZE, TBM_RTM_VERSION, TBM_RTM_IFINFO, UP_RUNNING, 9);

    ck_assert_int_eq(tbm_rtmsg_links(buf, n, NULL, NULL, NULL), 1);
    ck_assert_int_eq(tbm_rtmsg_links(buf, n - 1, NULL, NULL, NULL), -1);
}
END_TEST

static Suite *rtmsg_suite(void)
{
    Suite *s = suite_create("rtmsg");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, links_up_and_down);
    tcase_add_test(tc, broken_lengths);
    tcase_add_test(tc, no_callback);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(rtmsg_suite)
