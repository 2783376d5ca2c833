/* tbm_check.h: what every Check unit test program shares: its main() and the fixtures folder. */
#ifndef TBM_CHECK_H
#define TBM_CHECK_H

#include <check.h>
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

#endif
