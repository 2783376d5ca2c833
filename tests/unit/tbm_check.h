/* tbm_check.h: what every Check unit test program shares: its main() and the fixtures folder. */
#ifndef TBM_CHECK_H
#define TBM_CHECK_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

/* The folder of captured outputs (tests/fixtures), set by `make check`; "." when run by hand. */
static inline const char *tbm_fixtures_dir(void)
{
    const char *d = getenv("TBM_FIXTURES");
    return d && *d ? d : ".";
}

/* main() of a test program made of one suite. */
#define TBM_CHECK_MAIN(suite_fn)                               \
    int main(void)                                             \
    {                                                          \
        SRunner *sr = srunner_create(suite_fn());              \
        int failed;                                            \
        srunner_run_all(sr, CK_NORMAL);                        \
        failed = srunner_ntests_failed(sr);                    \
        srunner_free(sr);                                      \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;           \
    }

/* A scratch folder for a test (mkdtemp from a "/tmp/NAME-XXXXXX" pattern in dir), a file written in it, and
 * its removal. */
static inline void tbm_scratch_make(char *dir, size_t len, const char *name)
{
    snprintf(dir, len, "/tmp/%s-XXXXXX", name);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void tbm_scratch_put(const char *dir, const char *rel, const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static inline void tbm_scratch_remove(const char *dir)
{
    char cmd[600];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

#endif
