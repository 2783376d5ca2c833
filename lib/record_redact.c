/* record_redact.c: what never reaches a record. One table holds the forms a secret takes in text, each a name
 * and a matcher; tbm_redact_text reads a text once and, where a form matches, keeps what names the secret (a
 * variable's name, an option, a token's prefix) and replaces its value. */
#include "record.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include "strbuf.h"

#define MIN_SECRET_LEN 6
#define NAME_MAX_LEN 255
#define LOOK_BACK 4096   /* how far back a command's name is looked for (mysql -p, curl -u) */

static const char *const anywhere[] = { "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                                        "APIKEY", "PRIVATEKEY", "ACCESSKEY" };
static const char *const words[] = { "KEY", "AUTH", "AUTHORIZATION", "PASS", "PAT", "COOKIE", "SESSION",
                                     "PRIVATE", "SIGNATURE", "CREDS", "DSN", "PWD" };

int tbm_secret_name(const char *name)
{
    char up[256], *w, *save = NULL;
    size_t i, n = name ? strlen(name) : 0;

    if (n == 0 || n >= sizeof(up))
        return 0;
    for (i = 0; i <= n; i++)
        up[i] = (char)toupper((unsigned char)name[i]);
    for (i = 0; i < sizeof(anywhere) / sizeof(anywhere[0]); i++)
        if (strstr(up, anywhere[i]))
            return 1;
    if (!strcmp(up, "PWD"))
        return 0;   /* the working folder; MYSQL_PWD, DB_PWD are passwords */
    for (w = strtok_r(up, "_-.", &save); w; w = strtok_r(NULL, "_-.", &save))
        for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
            if (!strcmp(w, words[i]))
                return 1;
    return 0;
}

/* ---- what the forms see and answer ---- */

typedef struct scan {
    const char *s;   /* the whole text: a form may look behind where it starts */
    const char *const *secrets;
    size_t n_secrets;
    size_t name_at, name_end;   /* the last answer of secret_name_at (name_at: its position + 1) ... */
    int name_dashed;            /* ... read once for the forms that start with a name */
} scan_t;

/* A match at s[i]: s[i, i+keep) is kept, s[i+keep, i+end) replaced, s[i+end, i+len) kept. */
typedef struct hit {
    size_t keep, end, len;
} hit_t;

typedef enum { CH_ALNUM, CH_WORD, CH_ALNUM_DASH, CH_UPPER_DIGIT } chars_t;

typedef struct form form_t;
typedef int (*form_match_fn)(scan_t *c, const form_t *f, size_t i, hit_t *h);

struct form {
    const char *name;
    form_match_fn match;
    const char *with;             /* what the value becomes: TBM_REDACTED, or "" (a URL's user-info goes) */
    const char *const *prefixes;  /* token shapes: what the token starts with (kept) ... */
    size_t min, max;              /* ... then min to max (0: any) characters of `chars` */
    chars_t chars;
};

static int hit(hit_t *h, size_t keep, size_t end, size_t len)
{
    if (end <= keep || len < end)
        return 0;   /* nothing to replace */
    h->keep = keep, h->end = end, h->len = len;
    return 1;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static int word_start(const char *s, size_t i)
{
    return i == 0 || !name_char(s[i - 1]);
}

/* Before an option: the start of the text, a blank or a quote. */
static int option_start(const char *s, size_t i)
{
    return i == 0 || isspace((unsigned char)s[i - 1]) || s[i - 1] == '"' || s[i - 1] == '\'';
}

static int in_class(char c, chars_t k)
{
    switch (k) {
    case CH_ALNUM: return isalnum((unsigned char)c);
    case CH_WORD: return isalnum((unsigned char)c) || c == '_';
    case CH_ALNUM_DASH: return isalnum((unsigned char)c) || c == '-';
    default: return isdigit((unsigned char)c) || (c >= 'A' && c <= 'Z');
    }
}

static int b64_char(char c)
{
    return isalnum((unsigned char)c) || c == '/' || c == '+';
}

/* Where an unquoted value starting at s[i] ends; a URL query's value (after '?' or '&') also ends at '&', '#'. */
static size_t value_end(const char *s, size_t i, int in_query)
{
    while (s[i] && !isspace((unsigned char)s[i]) && s[i] != ',' && s[i] != ';' && s[i] != '"' && s[i] != '\'' &&
           !(in_query && (s[i] == '&' || s[i] == '#')))
        i++;
    return i;
}

/* The value at s[k] (quoted or not) as a hit from i: a quoted value keeps its quotes; one left open runs to
 * the end of the line. */
static int value_hit(const char *s, size_t i, size_t k, int in_query, hit_t *h)
{
    char q = s[k];
    size_t e;

    if (q != '"' && q != '\'') {
        e = value_end(s, k, in_query);
        return hit(h, k - i, e - i, e - i);
    }
    for (e = k + 1; s[e] && s[e] != q && s[e] != '\n'; e++)
        if (q == '"' && s[e] == '\\' && s[e + 1] && s[e + 1] != '\n')
            e++;
    return hit(h, k + 1 - i, e - i, e - i + (s[e] == q));
}

/* A secret name as a word at s[i], after at most two dashes: where it ends (0: none); *dashed says if dashes
 * came first. */
static size_t secret_word(const char *s, size_t i, int *dashed)
{
    char name[NAME_MAX_LEN + 1];
    size_t j = i, d;

    if (!word_start(s, i))
        return 0;
    while (s[j] == '-')
        j++;
    if ((d = j - i) > 2)
        return 0;
    while (name_char(s[j]))
        j++;
    if (j - i - d == 0 || j - i - d > NAME_MAX_LEN)
        return 0;
    memcpy(name, s + i + d, j - i - d);
    name[j - i - d] = '\0';
    *dashed = d > 0;
    return tbm_secret_name(name) ? j : 0;
}

/* secret_word, for a word an assignment or an option's value follows ('=' or ':' after it, or blanks then '=',
 * or blanks after an option): most words are not, and are not read further. Asked by several forms at one
 * place, answered once. */
static size_t secret_name_at(scan_t *c, size_t i, int *dashed)
{
    const char *s = c->s;
    size_t j = i, k;

    if (c->name_at == i + 1) {
        *dashed = c->name_dashed;
        return c->name_end;
    }
    while (name_char(s[j]))
        j++;
    for (k = j; s[k] == ' ' || s[k] == '\t'; k++)
        ;
    *dashed = 0;
    c->name_end = s[j] != '=' && s[j] != ':' && s[k] != '=' && !(k > j && s[i] == '-') ? 0
                  : secret_word(s, i, dashed);
    c->name_at = i + 1;
    c->name_dashed = *dashed;
    return c->name_end;
}

/* After a name at s[j]: "=", "=" with blanks around it, or ": " (not after an option's dashes). Where the
 * value starts, or 0. */
static size_t assign_op(const char *s, size_t j, int dashed)
{
    size_t k = j;

    if (s[k] == ':' && !dashed) {
        if (s[k + 1] != ' ' && s[k + 1] != '\t')
            return 0;
        k++;
    } else {
        while (s[k] == ' ' || s[k] == '\t')
            k++;
        if (s[k] != '=' || s[k + 1] == '=')
            return 0;
        if (++k == j + 1)
            return k;   /* NAME=value; "NAME= word" is an empty value */
    }
    while (s[k] == ' ' || s[k] == '\t')
        k++;
    return k;
}

/* One of cmds is a word (its name after any folder) of the command s[i] stands in: back to a newline, ';',
 * '|' or '&', at most LOOK_BACK bytes. */
static int in_command(const char *s, size_t i, const char *const *cmds)
{
    size_t b = i, lim = i > LOOK_BACK ? i - LOOK_BACK : 0, e, base, k;

    while (b > lim && !strchr("\n;|&", s[b - 1]))
        b--;
    while (b < i) {
        while (b < i && (isspace((unsigned char)s[b]) || strchr("\"'`(", s[b])))
            b++;
        for (e = base = b; e < i && !isspace((unsigned char)s[e]) && !strchr("\"'`(", s[e]); e++)
            if (s[e] == '/')
                base = e + 1;
        for (k = 0; cmds[k]; k++)
            if (e - base == strlen(cmds[k]) && !strncmp(s + base, cmds[k], e - base))
                return 1;
        b = e;
    }
    return 0;
}

/* ---- the forms ---- */

static int known_value(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    size_t k, n, best = 0;

    (void)f;
    for (k = 0; k < c->n_secrets; k++)
        if (c->secrets[k] && c->secrets[k][0] == c->s[i] && (n = strlen(c->secrets[k])) >= MIN_SECRET_LEN &&
            n > best && !strncmp(c->s + i, c->secrets[k], n))
            best = n;
    return best && hit(h, 0, best, best);
}

static int private_key_label(const char *label, size_t n)
{
    size_t k;

    for (k = 0; k + 11 <= n; k++)
        if (!strncmp(label + k, "PRIVATE KEY", 11))
            return 1;
    return 0;
}

/* -----BEGIN ... PRIVATE KEY----- ... -----END ... PRIVATE KEY-----: the lines between; an END that never
 * comes takes the rest of the text. */
static int pem_block(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s + i, *label, *close, *end;

    (void)f;
    if (strncmp(s, "-----BEGIN ", 11) != 0)
        return 0;
    label = s + 11;
    for (close = label; *close && *close != '\n' && strncmp(close, "-----", 5); close++)
        if (close - label > 64)
            return 0;
    if (strncmp(close, "-----", 5) != 0 || !private_key_label(label, (size_t)(close - label)))
        return 0;
    close += 5;
    if (!(end = strstr(close, "-----END ")))
        return hit(h, (size_t)(close - s), strlen(s), strlen(s));
    label = end + 9;
    while (*label && *label != '\n' && strncmp(label, "-----", 5))
        label++;
    return hit(h, (size_t)(close - s), (size_t)(end - s), (size_t)(label - s) + (*label == '-' ? 5 : 0));
}

/* scheme://user:password@host: the user-info goes, up to the last '@' before the host (a password may hold
 * '@'). */
static int url_userinfo(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    size_t j, at = 0;

    (void)f;
    if (strncmp(s + i, "://", 3) != 0)
        return 0;
    for (j = i + 3; s[j] && !strchr("/?#\"'<>", s[j]) && !isspace((unsigned char)s[j]); j++)
        if (s[j] == '@')
            at = j;
    return at && hit(h, 3, at + 1 - i, at + 1 - i);
}

/* Authorization: SCHEME credentials (Bearer, Basic, token, ...): the scheme is kept, the rest of the header
 * (to the end of the line or a quote) goes. Proxy-Authorization too. */
static int auth_header(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    size_t k = i + 13, w, e;

    (void)f;
    if ((i > 0 && isalnum((unsigned char)s[i - 1])) || strncasecmp(s + i, "authorization", 13) != 0)
        return 0;
    while (s[k] == ' ')
        k++;
    if (s[k++] != ':')
        return 0;
    while (s[k] == ' ' || s[k] == '\t')
        k++;
    for (w = k; isalpha((unsigned char)s[w]); w++)
        ;
    if (w > k && s[w] == ' ' && s[w + 1] && !isspace((unsigned char)s[w + 1]) && !strchr("\"'", s[w + 1]))
        k = w + 1;   /* the scheme */
    for (e = k; s[e] && s[e] != '\n' && s[e] != '\r' && s[e] != '"' && s[e] != '\''; e++)
        ;
    return hit(h, k - i, e - i, e - i);
}

/* JSON's null, true, false: no secret. */
static int json_word(const char *v, size_t n)
{
    return (n == 4 && !strncmp(v, "null", 4)) || (n == 4 && !strncmp(v, "true", 4)) ||
           (n == 5 && !strncmp(v, "false", 5));
}

/* "api_key": "value" (or 'api_key': 'value') in JSON or a Python dict: a string, number or word value. */
static int json_member(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    char q = s[i], name[NAME_MAX_LEN + 1];
    size_t j = i + 1, k;

    (void)f;
    if (q != '"' && q != '\'')
        return 0;
    while (name_char(s[j]))
        j++;
    if (s[j] != q || j == i + 1 || j - i - 1 > NAME_MAX_LEN)
        return 0;
    memcpy(name, s + i + 1, j - i - 1);
    name[j - i - 1] = '\0';
    for (k = j + 1; s[k] == ' ' || s[k] == '\t'; k++)
        ;
    if (s[k++] != ':' || !tbm_secret_name(name))
        return 0;
    while (s[k] == ' ' || s[k] == '\t')
        k++;
    if (s[k] == '"' || s[k] == '\'')
        return value_hit(s, i, k, 0, h);
    if (s[k] == '{' || s[k] == '[')
        return 0;   /* an object or array: its own members are looked at */
    for (j = k; s[j] && !strchr(",}] \t\r\n", s[j]); j++)
        ;
    return !json_word(s + k, j - k) && hit(h, k - i, j - i, j - i);
}

/* NAME="value" / NAME='value' / NAME: "value" where the name looks secret. */
static int quoted_value(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    int dashed;
    size_t j = secret_name_at(c, i, &dashed), k;

    (void)f;
    return j && (k = assign_op(c->s, j, dashed)) && (c->s[k] == '"' || c->s[k] == '\'') &&
           value_hit(c->s, i, k, 0, h);
}

/* NAME=value, --name=value, NAME = value, NAME: value, ?name=value&... where the name looks secret. */
static int name_value(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    int dashed;
    size_t j = secret_name_at(c, i, &dashed), k;

    (void)f;
    return j && (k = assign_op(c->s, j, dashed)) && c->s[k] != '"' && c->s[k] != '\'' &&
           value_hit(c->s, i, k, i > 0 && (c->s[i - 1] == '?' || c->s[i - 1] == '&'), h);
}

/* --password value, --api-key "value": the next word unless it is an option. */
static int option_value(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    int dashed;
    size_t j = secret_name_at(c, i, &dashed), k;

    (void)f;
    if (!j || !dashed || (c->s[j] != ' ' && c->s[j] != '\t'))
        return 0;
    for (k = j; c->s[k] == ' ' || c->s[k] == '\t'; k++)
        ;
    return c->s[k] && c->s[k] != '-' && !isspace((unsigned char)c->s[k]) && value_hit(c->s, i, k, 0, h);
}

static const char *const mysql_cmds[] = { "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow",
                                          "mysqlcheck", "mysqlslap", "mysqlpump", "mysqlbinlog", "mysqlsh",
                                          "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import",
                                          "mariadb-show", "mariadb-check", "mariadb-slap", "mariadb-binlog", NULL };

/* mysql -pPASSWORD (the password joined to -p), in a mysql or mariadb command. */
static int mysql_p(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;

    (void)f;
    return s[i] == '-' && s[i + 1] == 'p' && option_start(s, i) && s[i + 2] && !isspace((unsigned char)s[i + 2]) &&
           s[i + 2] != '-' && in_command(s, i, mysql_cmds) && value_hit(s, i, i + 2, 0, h);
}

static const char *const curl_cmds[] = { "curl", NULL };

/* curl -u user:password, --user user:password (and the proxy's -U, --proxy-user): the user is kept. */
static int curl_user(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    static const char *const opts[] = { "--proxy-user", "--user", "-u", "-U", NULL };
    const char *s = c->s;
    size_t k = 0, n, colon;
    int o;

    (void)f;
    if (s[i] != '-' || !option_start(s, i))
        return 0;
    for (o = 0; opts[o] && strncmp(s + i, opts[o], strlen(opts[o])); o++)
        ;
    if (!opts[o])
        return 0;
    k = i + (n = strlen(opts[o]));
    if (s[k] == '=' && n > 2)
        k++;
    else if (s[k] == ' ' || s[k] == '\t')
        while (s[k] == ' ' || s[k] == '\t')
            k++;
    else if (n > 2 || !s[k])
        return 0;
    if (!in_command(s, i, curl_cmds) || !value_hit(s, i, k, 0, h))
        return 0;
    for (colon = i + h->keep; colon < i + h->end && s[colon] != ':'; colon++)
        ;
    return colon < i + h->end && hit(h, colon + 1 - i, h->end, h->len);
}

/* A token by its shape: one of the form's prefixes, then min to max characters of its class. */
static int token_shape(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    size_t k, p, n;

    if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))
        return 0;
    for (k = 0; f->prefixes[k]; k++) {
        p = strlen(f->prefixes[k]);
        if (s[i] != f->prefixes[k][0] || strncmp(s + i, f->prefixes[k], p) != 0)
            continue;
        for (n = 0; in_class(s[i + p + n], f->chars); n++)
            ;
        if (n >= f->min && (!f->max || n <= f->max) && !isalnum((unsigned char)s[i + p + n]))
            return hit(h, p, p + n, p + n);
    }
    return 0;
}

/* 40 characters of base64 with both cases (an AWS secret access key; a git commit's hex is one case) as a
 * word at s[i]. */
static int aws_secret_shape(const char *s, size_t i)
{
    size_t n;
    int upper = 0, lower = 0;

    if (i > 0 && b64_char(s[i - 1]))
        return 0;
    for (n = 0; n < 41 && b64_char(s[i + n]); n++) {
        upper |= isupper((unsigned char)s[i + n]) != 0;
        lower |= islower((unsigned char)s[i + n]) != 0;
    }
    return n == 40 && upper && lower && s[i + n] != '=';
}

/* Where the word before s[i] ends, over separators (blanks, ':', '=', ',', ';', '|', quotes): i when none. */
static size_t word_before(const char *s, size_t i)
{
    size_t b = i;

    while (b > 0 && i - b < 8 && (s[b - 1] == ' ' || s[b - 1] == '\t' || strchr(":=,;|\"'", s[b - 1])))
        b--;
    return b < i ? b : i;
}

/* An AWS secret access key standing after its access key id (AKIA/ASIA and 16 more). */
static int aws_secret_after_id(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    size_t b, n;

    (void)f;
    if ((b = word_before(s, i)) == i || b < 20 || (b > 20 && isalnum((unsigned char)s[b - 21])) ||
        (strncmp(s + b - 20, "AKIA", 4) && strncmp(s + b - 20, "ASIA", 4)))
        return 0;
    for (n = 4; n < 20 && in_class(s[b - 20 + n], CH_UPPER_DIGIT); n++)
        ;
    return n == 20 && aws_secret_shape(s, i) && hit(h, 0, 40, 40);
}

/* An AWS secret access key standing after a secret name: aws_secret_access_key KEY (as `aws configure set`
 * takes it). */
static int aws_secret_after_name(scan_t *c, const form_t *f, size_t i, hit_t *h)
{
    const char *s = c->s;
    size_t b, a;
    int dashed;

    (void)f;
    if ((b = word_before(s, i)) == i || !aws_secret_shape(s, i))
        return 0;
    for (a = b; a > 0 && b - a <= NAME_MAX_LEN && name_char(s[a - 1]); a--)
        ;
    return a < b && secret_word(s, a, &dashed) == b && hit(h, 0, 40, 40);
}

static const char *const github_prefixes[] = { "ghp_", "gho_", "ghs_", "ghu_", "ghr_", NULL };
static const char *const github_pat_prefixes[] = { "github_pat_", NULL };
static const char *const hf_prefixes[] = { "hf_", NULL };
static const char *const slack_prefixes[] = { "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-", NULL };
static const char *const aws_id_prefixes[] = { "AKIA", "ASIA", NULL };

/* The forms, tried in this order where each character starts; the first that matches is taken. A new form is
 * one row (and an example in tests/unit/test_record_redact.c, which checks that every row has one). */
#define R TBM_REDACTED
static const form_t forms[] = {
    { .name = "a value of the job's secret variables", .match = known_value, .with = R },
    { .name = "PEM private-key block", .match = pem_block, .with = R },
    { .name = "user and password in a URL", .match = url_userinfo, .with = "" },
    { .name = "Authorization header", .match = auth_header, .with = R },
    { .name = "JSON member with a secret name", .match = json_member, .with = R },
    { .name = "quoted value of a secret name", .match = quoted_value, .with = R },
    { .name = "NAME=value of a secret name", .match = name_value, .with = R },
    { .name = "--option value of a secret option", .match = option_value, .with = R },
    { .name = "mysql -pPASSWORD", .match = mysql_p, .with = R },
    { .name = "curl -u user:password", .match = curl_user, .with = R },
    { .name = "GitHub token", .match = token_shape, .with = R, .prefixes = github_prefixes, .min = 20,
      .chars = CH_ALNUM },
    { .name = "GitHub fine-grained token", .match = token_shape, .with = R, .prefixes = github_pat_prefixes,
      .min = 20, .chars = CH_WORD },
    { .name = "Hugging Face token", .match = token_shape, .with = R, .prefixes = hf_prefixes, .min = 30,
      .chars = CH_ALNUM },
    { .name = "Slack token", .match = token_shape, .with = R, .prefixes = slack_prefixes, .min = 10,
      .chars = CH_ALNUM_DASH },
    { .name = "AWS access key id", .match = token_shape, .with = R, .prefixes = aws_id_prefixes, .min = 16,
      .max = 16, .chars = CH_UPPER_DIGIT },
    { .name = "AWS secret access key after its key id", .match = aws_secret_after_id, .with = R },
    { .name = "AWS secret access key after its name", .match = aws_secret_after_name, .with = R },
};
#undef R
#define N_FORMS (sizeof(forms) / sizeof(forms[0]))

const char *tbm_redact_form(size_t i)
{
    return i < N_FORMS ? forms[i].name : NULL;
}

/* Whether a form could start at s[i]: inside a word only a URL's "://", a quote, a dash or the first
 * character of a secret value can (first[] marks those). */
static int may_start(const char *s, size_t i, const unsigned char *first)
{
    return i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_') || strchr(":\"'-", s[i]) ||
           first[(unsigned char)s[i]];
}

char *tbm_redact_text(const char *s, const char *const *secrets, size_t n_secrets)
{
    scan_t c = { s ? s : "", secrets, n_secrets, 0, 0, 0 };
    unsigned char first[256] = { 0 };
    tbm_strbuf_t sb;
    size_t i = 0, from = 0, k;
    hit_t h;

    for (k = 0; k < n_secrets; k++)
        if (secrets[k] && strlen(secrets[k]) >= MIN_SECRET_LEN)
            first[(unsigned char)secrets[k][0]] = 1;
    tbm_sb_init(&sb);
    while (c.s[i]) {
        for (k = may_start(c.s, i, first) ? 0 : N_FORMS; k < N_FORMS && !forms[k].match(&c, &forms[k], i, &h); k++)
            ;
        if (k == N_FORMS) {
            i++;
            continue;
        }
        tbm_sb_append(&sb, c.s + from, i + h.keep - from);
        tbm_sb_printf(&sb, "%s", forms[k].with);
        tbm_sb_append(&sb, c.s + i + h.end, h.len - h.end);
        i += h.len;
        from = i;
    }
    tbm_sb_append(&sb, c.s + from, i - from);
    return tbm_sb_take(&sb);
}

size_t tbm_redact_tree(json_object *o, const char *const *secrets, size_t n_secrets)
{
    size_t changed = 0, i, n;

    if (json_object_is_type(o, json_type_array)) {
        n = json_object_array_length(o);
        for (i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(o, i);
            if (json_object_is_type(e, json_type_string)) {
                char *r = tbm_redact_text(json_object_get_string(e), secrets, n_secrets);
                if (r && strcmp(r, json_object_get_string(e)) != 0) {
                    json_object_array_put_idx(o, i, json_object_new_string(r));
                    changed++;
                }
                free(r);
            } else {
                changed += tbm_redact_tree(e, secrets, n_secrets);
            }
        }
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, val) {
            if (json_object_is_type(val, json_type_string)) {
                char *r = tbm_secret_name(key) ? strdup(TBM_REDACTED)
                                               : tbm_redact_text(json_object_get_string(val), secrets, n_secrets);
                if (r && strcmp(r, json_object_get_string(val)) != 0) {
                    json_object_object_add(o, key, json_object_new_string(r));
                    changed++;
                }
                free(r);
            } else {
                changed += tbm_redact_tree(val, secrets, n_secrets);
            }
        }
    }
    return changed;
}
