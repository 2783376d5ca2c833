/* test_agent_privdrop.c: the agent's drop to a task's user (libmacnoded): the account and its groups looked
 * up once (agent_user_lookup), then a child becoming the user with them (agent_as, agent_become), and the
 * reason given when the account is missing. As root, the child becomes "nobody"; otherwise, ourselves. */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_privdrop.h"
#include "tbm_check.h"

/* A uid without an account here. */
static uid_t unknown_uid(void)
{
    uid_t uid = 3999000;

    while (getpwuid(uid))
        uid++;
    return uid;
}

static int has_group(const agent_user_t *u, gid_t g)
{
    int i;

    for (i = 0; i < u->ngroups; i++)
        if (u->groups[i] == g)
            return 1;
    return 0;
}

START_TEST(root_is_looked_up_with_its_groups)
{
    agent_user_t u;
    tbm_err_t err = { { 0 } };

    ck_assert_int_eq(agent_user_lookup(0, 0, &u, &err), 0);
    ck_assert_str_eq(u.name, "root");
    ck_assert_str_eq(u.why, "");
    ck_assert_int_ge(u.ngroups, 1);
    ck_assert(has_group(&u, 0));
}
END_TEST

START_TEST(a_uid_without_an_account_is_refused_with_what_to_do)
{
    agent_user_t u;
    tbm_err_t err = { { 0 } }, e2 = { { 0 } };
    uid_t uid = unknown_uid();
    char want[128];

    snprintf(want, sizeof(want), "uid %u has no account on this node; create the user on the Mac with the same "
             "uid as on the bridge", (unsigned)uid);
    ck_assert_int_eq(agent_user_lookup(uid, 100, &u, &err), -1);
    ck_assert_str_eq(err.msg, want);
    ck_assert_str_eq(u.why, want);
    ck_assert_int_eq(agent_become(&u, &e2), -1);
    ck_assert_str_eq(e2.msg, want);
}
END_TEST

/* In the child: is this process the user, with the looked-up groups? */
static int check_identity(void *arg, tbm_err_t *err)
{
    const agent_user_t *u = arg;
    gid_t now[AGENT_GROUPS_MAX];
    int n = getgroups(AGENT_GROUPS_MAX, now), i;

    if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid || getegid() != u->gid)
        return tbm_errprintf(err, "uid %u/%u gid %u/%u, wanted %u %u", (unsigned)getuid(), (unsigned)geteuid(),
                             (unsigned)getgid(), (unsigned)getegid(), (unsigned)u->uid, (unsigned)u->gid);
    if (geteuid() == 0 || u->ngroups < 0)
        return 0;
    for (i = 0; i < n; i++)
        if (!has_group(u, now[i]))
            return tbm_errprintf(err, "group %u is not one of %s's", (unsigned)now[i], u->name);
    return 0;
}

START_TEST(the_helper_runs_as_the_user_with_its_groups)
{
    struct passwd *pw = geteuid() == 0 ? getpwnam("nobody") : getpwuid(geteuid());
    agent_user_t u;
    tbm_err_t err = { { 0 } };

    ck_assert_ptr_nonnull(pw);
    ck_assert_int_eq(agent_user_lookup(pw->pw_uid, pw->pw_gid, &u, &err), 0);
    ck_assert(has_group(&u, pw->pw_gid));
    ck_assert_msg(agent_as(&u, check_identity, &u, &err) == 0, "%s", err.msg);
    if (geteuid() == 0) {   /* the same drop in this process: root is gone for good */
        ck_assert_int_eq(agent_become(&u, &err), 0);
        ck_assert_int_eq(getuid(), pw->pw_uid);
        ck_assert_int_ne(setuid(0), 0);
    }
}
END_TEST

START_TEST(the_helper_says_why_it_could_not_become_the_user)
{
    agent_user_t u;
    tbm_err_t err = { { 0 } };

    agent_user_lookup(unknown_uid(), 100, &u, NULL);
    ck_assert_int_eq(agent_as(&u, check_identity, &u, &err), -1);
    ck_assert_str_eq(err.msg, u.why);
}
END_TEST

static Suite *agent_privdrop_suite(void)
{
    Suite *s = suite_create("agent_privdrop");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, root_is_looked_up_with_its_groups);
    tcase_add_test(tc, a_uid_without_an_account_is_refused_with_what_to_do);
    tcase_add_test(tc, the_helper_runs_as_the_user_with_its_groups);
    tcase_add_test(tc, the_helper_says_why_it_could_not_become_the_user);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(agent_privdrop_suite)
