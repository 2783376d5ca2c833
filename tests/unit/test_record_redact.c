/* test_record_redact.c: unit tests of lib/record_redact.c (what never reaches a record). */
#include "tbm_check.h"

#include <string.h>

#include "record.h"

START_TEST(secret_names)
{
    const char *yes[] = { "HF_TOKEN", "hf_token", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "API-KEY", "GITHUB_PAT",
                          "WANDB_API_KEY", "MyPassphrase", "GOOGLE_APPLICATION_CREDENTIALS", "--password", "session",
                          "PRIVATE_KEY_FILE", "x.auth", "OPENAI_APIKEY" };
    const char *no[] = { "PATH", "HOME", "MLX_RANK", "KEYBOARD", "MONKEY", "PWD", "SLURM_JOB_ID", "PASSES",
                         "MLX_IBV_DEVICES", "", "COMPASS" };
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        ck_assert_msg(tbm_secret_name(yes[i]), "%s should look secret", yes[i]);
    for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        ck_assert_msg(!tbm_secret_name(no[i]), "%s should not look secret", no[i]);
}
END_TEST

static void redacts(const char *in, const char *want)
{
    const char *secrets[] = { "s3cr3t-value-123", "short" };
    char *got = tbm_redact_text(in, secrets, 2);

    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(texts)
{
    redacts("https://alice:hunter2@github.com/lab/x.git", "https://github.com/lab/x.git");
    redacts("https://ghp_abcdef@github.com/lab/x.git", "https://github.com/lab/x.git");
    redacts("git@github.com:lab/x.git", "git@github.com:lab/x.git");
    redacts("ssh://git@host/x a@b.c", "ssh://host/x a@b.c");
    redacts("sbatch --export=ALL,HF_TOKEN=hf_xyz,FOO=1 job.sh", "sbatch --export=ALL,HF_TOKEN=[redacted],FOO=1 job.sh");
    redacts("train --api-key=abc --lr=3 --password hunter2 --epochs 2",
            "train --api-key=[redacted] --lr=3 --password [redacted] --epochs 2");
    redacts("https://h/x?user=a&token=zzz&n=1", "https://h/x?user=a&token=[redacted]&n=1");
    redacts("echo s3cr3t-value-123; short", "echo [redacted]; short");
    redacts("MLX_RANK=0 PATH=/usr/bin", "MLX_RANK=0 PATH=/usr/bin");
    redacts("", "");
}
END_TEST

START_TEST(trees)
{
    const char *secrets[] = { "topsecretvalue" };
    json_object *o = json_tokener_parse("{\"a\": \"x topsecretvalue y\", \"WANDB_API_KEY\": \"k\", "
                                        "\"list\": [\"https://u:p@h/\", {\"HF_TOKEN\": \"t\"}], \"n\": 1}");

    ck_assert_uint_eq(tbm_redact_tree(o, secrets, 1), 4);
    ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     "{\"a\":\"x [redacted] y\",\"WANDB_API_KEY\":\"[redacted]\",\"list\":[\"https://h/\","
                     "{\"HF_TOKEN\":\"[redacted]\"}],\"n\":1}");
    ck_assert_uint_eq(tbm_redact_tree(o, secrets, 1), 0);
    json_object_put(o);
}
END_TEST

static Suite *redact_suite(void)
{
    Suite *s = suite_create("record_redact");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, secret_names);
    tcase_add_test(tc, texts);
    tcase_add_test(tc, trees);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(redact_suite)
