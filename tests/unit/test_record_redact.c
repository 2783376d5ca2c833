/* test_record_redact.c: unit tests of lib/record_redact.c (what never reaches a record). */
#include "tbm_check.h"

#include <string.h>

#include "record.h"

START_TEST(secret_names)
{
    const char *yes[] = { "HF_TOKEN", "hf_token", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "API-KEY", "GITHUB_PAT",
                          "WANDB_API_KEY", "MyPassphrase", "GOOGLE_APPLICATION_CREDENTIALS", "--password", "session",
                          "PRIVATE_KEY_FILE", "x.auth", "OPENAI_APIKEY", "MYSQL_PWD",
                          "Proxy-Authorization" };
    const char *no[] = { "PATH", "HOME", "MLX_RANK", "KEYBOARD", "MONKEY", "PWD", "SLURM_JOB_ID", "PASSES",
                         "MLX_IBV_DEVICES", "", "COMPASS", "OLDPWD", "pwd" };
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

/* One or more examples of each form tbm_redact_text knows, by the form's name (tbm_redact_form). */
static const struct example {
    const char *form, *in, *want;
} examples[] = {
    { "a value of the job's secret variables", "echo s3cr3t-value-123; short", "echo [redacted]; short" },
    { "a value of the job's secret variables", "xs3cr3t-value-123y", "x[redacted]y" },
    { "PEM private-key block",
      "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nq83Z+/==\n-----END RSA PRIVATE KEY-----\ndone",
      "key:\n-----BEGIN RSA PRIVATE KEY-----[redacted]-----END RSA PRIVATE KEY-----\ndone" },
    { "PEM private-key block", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----",
      "-----BEGIN PRIVATE KEY-----[redacted]-----END PRIVATE KEY-----" },
    { "PEM private-key block", "tail: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v",
      "tail: -----BEGIN OPENSSH PRIVATE KEY-----[redacted]" },
    { "user and password in a URL", "https://alice:hunter2@github.com/lab/x.git", "https://github.com/lab/x.git" },
    { "user and password in a URL", "https://u:p@ss@host/", "https://host/" },
    { "user and password in a URL", "git clone https://bob:p@ss:w@rd@git.example.org:8443/x.git?a=b@c",
      "git clone https://git.example.org:8443/x.git?a=b@c" },
    { "Authorization header", "curl -H \"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig\" https://api/v1",
      "curl -H \"Authorization: Bearer [redacted]\" https://api/v1" },
    { "Authorization header", "Authorization: Basic dXNlcjpwYXNz\nnext line",
      "Authorization: Basic [redacted]\nnext line" },
    { "Authorization header", "-H 'proxy-authorization:token abc'", "-H 'proxy-authorization:token [redacted]'" },
    { "JSON member with a secret name", "{\"api_key\": \"sk-abc123\", \"model\": \"gpt\"}",
      "{\"api_key\": \"[redacted]\", \"model\": \"gpt\"}" },
    { "JSON member with a secret name", "{\"client_secret\":\"a\\\"b\",\"n\":1}",
      "{\"client_secret\":\"[redacted]\",\"n\":1}" },
    { "JSON member with a secret name", "{'password': 'x y', \"pin_token\": 12345678, \"use_auth\": true}",
      "{'password': '[redacted]', \"pin_token\": [redacted], \"use_auth\": true}" },
    { "quoted value of a secret name", "export HF_TOKEN=\"hf abc def\"; run", "export HF_TOKEN=\"[redacted]\"; run" },
    { "quoted value of a secret name", "DB_PASSWORD='p a s s' next", "DB_PASSWORD='[redacted]' next" },
    { "quoted value of a secret name", "password: \"x y\"", "password: \"[redacted]\"" },
    { "quoted value of a secret name", "--api-key=\"abc def\" --n=1", "--api-key=\"[redacted]\" --n=1" },
    { "quoted value of a secret name", "API_TOKEN=\"never closed\nnext", "API_TOKEN=\"[redacted]\nnext" },
    { "NAME=value of a secret name", "sbatch --export=ALL,HF_TOKEN=hf_xyz,FOO=1 job.sh",
      "sbatch --export=ALL,HF_TOKEN=[redacted],FOO=1 job.sh" },
    { "NAME=value of a secret name", "MYSQL_PWD=hunter2 mysql -u root", "MYSQL_PWD=[redacted] mysql -u root" },
    { "NAME=value of a secret name", "password = hunter2\nuser = alice", "password = [redacted]\nuser = alice" },
    { "NAME=value of a secret name", "api_key =abc", "api_key =[redacted]" },
    { "NAME=value of a secret name", "https://h/x?user=a&token=zzz&n=1", "https://h/x?user=a&token=[redacted]&n=1" },
    { "NAME=value of a secret name", "X-Api-Key: abc123", "X-Api-Key: [redacted]" },
    { "--option value of a secret option", "train --lr=3 --password hunter2 --epochs 2",
      "train --lr=3 --password [redacted] --epochs 2" },
    { "--option value of a secret option", "mysql --password \"a b\" db", "mysql --password \"[redacted]\" db" },
    { "--option value of a secret option", "tool --token -v", "tool --token -v" },
    { "mysql -pPASSWORD", "mysql -u root -phunter2 db", "mysql -u root -p[redacted] db" },
    { "mysql -pPASSWORD", "/usr/bin/mysqldump -p'pa ss' db > x.sql", "/usr/bin/mysqldump -p'[redacted]' db > x.sql" },
    { "mysql -pPASSWORD", "mysql -p db; mariadb -h h -pS3cr3t", "mysql -p db; mariadb -h h -p[redacted]" },
    { "curl -u user:password", "curl -u alice:hunter2 https://h/", "curl -u alice:[redacted] https://h/" },
    { "curl -u user:password", "curl -s --user \"alice:p w\" https://h/",
      "curl -s --user \"alice:[redacted]\" https://h/" },
    { "curl -u user:password", "curl --user=alice:pw -ubob:pw2 https://h",
      "curl --user=alice:[redacted] -ubob:[redacted] https://h" },
    { "GitHub token", "push with ghp_0123456789abcdefghijABCDEFGHIJ012345 failed", "push with ghp_[redacted] failed" },
    { "GitHub token", "\"gho_0123456789abcdefghijABCD\"", "\"gho_[redacted]\"" },
    { "GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz x",
      "github_pat_[redacted] x" },
    { "Hugging Face token", "login hf_abcdefghijklmnopqrstuvwxyzABCDEF12", "login hf_[redacted]" },
    { "Slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-[redacted]" },
    { "Slack token", "app: xapp-1-A0123ABCDE-456-abcdef0123", "app: xapp-[redacted]" },
    { "AWS access key id", "id AKIAIOSFODNN7EXAMPLE.", "id AKIA[redacted]." },
    { "AWS access key id", "ASIAY34FZKBOKMUTVV7A", "ASIA[redacted]" },
    { "AWS secret access key after its key id", "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "AKIA[redacted] [redacted]" },
    { "AWS secret access key after its key id", "AKIAIOSFODNN7EXAMPLE,\"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\"",
      "AKIA[redacted],\"[redacted]\"" },
    { "AWS secret access key after its key id", "AKIAIOSFODNN7EXAMPLE 3f6db27c0a1b2c3d4e5f60718293a4b5c6d7e8f9",
      "AKIA[redacted] 3f6db27c0a1b2c3d4e5f60718293a4b5c6d7e8f9" },
    { "AWS secret access key after its name",
      "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "aws configure set aws_secret_access_key [redacted]" },
};

START_TEST(each_form)
{
    const char *secrets[] = { "s3cr3t-value-123", "short" };
    size_t i;

    for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
        char *got = tbm_redact_text(examples[i].in, secrets, 2), *again;
        ck_assert_msg(!strcmp(got, examples[i].want), "%s: %s\n  gave %s\n  want %s", examples[i].form,
                      examples[i].in, got, examples[i].want);
        again = tbm_redact_text(got, secrets, 2);
        ck_assert_msg(!strcmp(again, got), "%s: redacting twice changed %s to %s", examples[i].form, got, again);
        free(got);
        free(again);
    }
}
END_TEST

/* Adding a form to the table without an example here fails this test. */
START_TEST(every_form_has_an_example)
{
    size_t f, i, n = 0;

    for (f = 0; tbm_redact_form(f); f++, n++) {
        for (i = 0; i < sizeof(examples) / sizeof(examples[0]) && strcmp(examples[i].form, tbm_redact_form(f)); i++)
            ;
        ck_assert_msg(i < sizeof(examples) / sizeof(examples[0]), "form \"%s\" has no example", tbm_redact_form(f));
    }
    ck_assert_uint_ge(n, 17);
    for (i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
        for (f = 0; tbm_redact_form(f) && strcmp(examples[i].form, tbm_redact_form(f)); f++)
            ;
        ck_assert_msg(tbm_redact_form(f) != NULL, "example of an unknown form \"%s\"", examples[i].form);
    }
}
END_TEST

/* Ordinary command lines, paths, digests and commit ids stay as they are. */
START_TEST(ordinary_text_stays)
{
    static const char *const keep[] = {
        "srun -N 4 --mpi=pmix python train.py --lr 3e-4 --epochs 2 -o /home/alice/runs/out.bin",
        "mkdir -p /tmp/x && cp -pr a b && ssh -p 2222 mac01 && tar -pxvf a.tar && sort -u f && python -u x.py",
        "docker run -u 1000:1000 img --user 1000:1000; mysql -u root -p",
        "git checkout 3f6db27c0a1b2c3d4e5f60718293a4b5c6d7e8f9 && git log 3F6DB27C0A1B2C3D4E5F60718293A4B5C6D7E8F9",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  /Users/alice/keys/README",
        "KEYBOARD=us MONKEY=1 PASSES=3 PWD=/home/alice OLDPWD=/tmp MLX_RANK=0 PATH=/usr/bin:/bin",
        "hf_hub_download(repo_id=\"mlx-community/Llama-3.2-1B\") ghp_short xoxb-1 AKIA1234",
        "git@github.com:lab/x.git alice@example.com https://huggingface.co/mlx-community/x@main",
        "--repro-model=mlx-community/Llama-3.2-1B@7c6e1a2 --repro-seed=7 --repro-note=\"a b\"",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"
        "-----BEGIN PUBLIC KEY-----\nMCow\n",
        "if [ \"$PASSWORD\" == \"\" ]; then echo $API_TOKEN; fi",
        "digest wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY and AKIAIOSFODNN7EXAMPLEX",
        "{\"session\": {\"id\": 3}, \"auth\": null, \"key_count\": false}",
    };
    size_t i;

    for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
        redacts(keep[i], keep[i]);
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
    tcase_add_test(tc, each_form);
    tcase_add_test(tc, every_form_has_an_example);
    tcase_add_test(tc, ordinary_text_stays);
    tcase_add_test(tc, trees);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(redact_suite)
