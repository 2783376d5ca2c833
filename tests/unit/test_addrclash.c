/* test_addrclash.c: unit tests of lib/addrclash.c: which cables' subnets collide with each other's or with a
 * management network. */
#include "tbm_check.h"

#include "addrclash.h"

#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

START_TEST(one_subnet_two_cables)
{
    /* cable 0 and cable 1 both on 10.0.0.0/30; cable 2 on its own /30; all in group 0 */
    const tbm_addr_net_t nets[] = {
        { IP(10, 0, 0, 1), 30, 0, 0 }, { IP(10, 0, 0, 2), 30, 0, 0 },
        { IP(10, 0, 0, 1), 30, 1, 0 }, { IP(10, 0, 0, 2), 30, 1, 0 },
        { IP(10, 0, 0, 5), 30, 2, 0 }, { IP(10, 0, 0, 6), 30, 2, 0 },
    };
    tbm_addr_clash_t *c;
    char text[24];

    ck_assert_int_eq(tbm_addr_clashes(nets, 6, &c), 1);
    ck_assert_int_eq(nets[c[0].a].owner, 0);
    ck_assert_int_eq(nets[c[0].b].owner, 1);
    tbm_addr_net_text(&nets[c[0].b], text, sizeof(text));
    ck_assert_str_eq(text, "10.0.0.0/30");
    free(c);
    /* the ends of one cable never collide with each other */
    ck_assert_int_eq(tbm_addr_clashes(nets + 4, 2, &c), 0);
    ck_assert_ptr_null(c);
}
END_TEST

START_TEST(overlapping_subnets)
{
    /* a /29 holding a /30 of another cable of the group; a /16 link-local on two cables of one group */
    const tbm_addr_net_t nets[] = {
        { IP(10, 0, 0, 1), 29, 0, 0 }, { IP(10, 0, 0, 2), 29, 0, 0 },
        { IP(10, 0, 0, 5), 30, 1, 0 }, { IP(10, 0, 0, 6), 30, 1, 0 },
        { IP(169, 254, 3, 7), 16, 2, 1 }, { IP(169, 254, 9, 1), 16, 2, 1 },
        { IP(169, 254, 80, 2), 16, 3, 1 }, { IP(169, 254, 200, 4), 16, 3, 1 },
    };
    tbm_addr_clash_t *c;

    ck_assert_int_eq(tbm_addr_clashes(nets, 8, &c), 2);
    ck_assert_int_eq(nets[c[0].a].owner, 0);
    ck_assert_int_eq(nets[c[0].b].owner, 1);
    ck_assert_int_eq(nets[c[1].a].owner, 2);
    ck_assert_int_eq(nets[c[1].b].owner, 3);
    free(c);
}
END_TEST

START_TEST(groups_and_management)
{
    /* two groups: overlapping subnets with different addresses do not meet; one address held twice does; a
     * management /24 collides with the cable inside it, and two management interfaces never collide */
    const tbm_addr_net_t nets[] = {
        { IP(169, 254, 0, 1), 16, 0, 0 }, { IP(169, 254, 0, 2), 16, 0, 0 },
        { IP(169, 254, 1, 1), 16, 1, 1 }, { IP(169, 254, 1, 2), 16, 1, 1 },
        { IP(10, 1, 0, 1), 30, 2, 0 }, { IP(10, 1, 0, 2), 30, 2, 0 },
        { IP(10, 1, 0, 2), 30, 3, 1 }, { IP(10, 1, 0, 1), 30, 3, 1 },
        { IP(10, 77, 0, 9), 30, 4, 1 }, { IP(10, 77, 0, 10), 30, 4, 1 },
        { IP(10, 77, 0, 1), 24, -1, -1 }, { IP(10, 77, 0, 2), 24, -2, -1 },
    };
    tbm_addr_clash_t *c;

    ck_assert_int_eq(tbm_addr_clashes(nets, 12, &c), 3);
    ck_assert_int_eq(nets[c[0].a].owner, -2);
    ck_assert_int_eq(nets[c[0].b].owner, 4);
    ck_assert_int_eq(nets[c[1].a].owner, -1);
    ck_assert_int_eq(nets[c[1].b].owner, 4);
    ck_assert_int_eq(nets[c[2].a].owner, 2);
    ck_assert_int_eq(nets[c[2].b].owner, 3);
    free(c);
}
END_TEST

START_TEST(net_text)
{
    tbm_addr_net_t n = { IP(192, 168, 7, 77), 24, 0, 0 };
    char text[24];

    tbm_addr_net_text(&n, text, sizeof(text));
    ck_assert_str_eq(text, "192.168.7.0/24");
    n.prefix = -1;
    tbm_addr_net_text(&n, text, sizeof(text));
    ck_assert_str_eq(text, "192.168.7.77/32");
    n.prefix = 0;
    tbm_addr_net_text(&n, text, sizeof(text));
    ck_assert_str_eq(text, "0.0.0.0/0");
}
END_TEST

static Suite *addrclash_suite(void)
{
    Suite *s = suite_create("addrclash");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_subnet_two_cables);
    tcase_add_test(tc, overlapping_subnets);
    tcase_add_test(tc, groups_and_management);
    tcase_add_test(tc, net_text);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(addrclash_suite)
