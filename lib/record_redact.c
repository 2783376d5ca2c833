/* record_redact.c: what never reaches a record: values of secret-looking variables and options, credentials
 * inside URLs, and the values of the job's secret variables wherever they appear. */
#include "record.h"

#include <ctype.h>
#include <string.h>
#include <stdlib.h>

#include "strbuf.h"

#define MIN_SECRET_LEN 6

static const char *const anywhere[] = { "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
                                        "APIKEY", "PRIVATEKEY", "ACCESSKEY" };
static const char *const words[] = { "KEY", "AUTH", "PASS", "PAT", "COOKIE", "SESSION", "PRIVATE",
                                     "SIGNATURE", "PWD_HASH", "CREDS", "DSN" };

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
    for (w = strtok_r(up, "_-.", &save); w; w = strtok_r(NULL, "_-.", &save))
        for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
            if (!strcmp(w, words[i]))
                return 1;
    return 0;
}

static int name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* Where the value of a NAME=, --name= or ?name= starting at s[i] ends. */
static size_t value_end(const char *s, size_t i, int in_url)
{
    while (s[i] && !isspace((unsigned char)s[i]) && s[i] != ',' && s[i] != ';' && s[i] != '"' && s[i] != '\'' &&
           !(in_url && (s[i] == '&' || s[i] == '#')))
        i++;
    return i;
}

/* s[i] starts "scheme://": the length of the user-info (up to and with '@') inside the authority, or 0. */
static size_t userinfo_len(const char *s, size_t i)
{
    size_t j;

    for (j = i; s[j] && s[j] != '/' && s[j] != '?' && s[j] != '#' && !isspace((unsigned char)s[j]) &&
                s[j] != '"' && s[j] != '\'';
         j++)
        if (s[j] == '@') {
            size_t k = j + 1;
            while (s[k] && s[k] != '/' && s[k] != '?' && s[k] != '#' && !isspace((unsigned char)s[k]) && s[k] != '@')
                k++;
            return s[k] == '@' ? 0 : j + 1 - i;   /* the last '@' of the authority ends the user-info */
        }
    return 0;
}

/* One pass: URLs' user-info, secret NAME=VALUE / --name=VALUE / --name VALUE / ?name=VALUE. */
static char *redact_names(const char *s)
{
    tbm_strbuf_t sb;
    size_t i = 0, start, n;
    int in_url = 0, next_is_secret = 0;
    char name[256];

    tbm_sb_init(&sb);
    while (s[i]) {
        if (!strncmp(s + i, "://", 3)) {
            tbm_sb_append(&sb, "://", 3);
            i += 3;
            i += userinfo_len(s, i);
            in_url = 1;
            continue;
        }
        if (isspace((unsigned char)s[i]) || s[i] == '"' || s[i] == '\'')
            in_url = 0;
        if (!name_char(s[i]) || (i > 0 && name_char(s[i - 1]))) {
            tbm_sb_append(&sb, s + i, 1);
            i++;
            continue;
        }
        /* a word starts at i */
        start = i;
        while (name_char(s[i]))
            i++;
        n = i - start;
        tbm_sb_append(&sb, s + start, n);
        if (next_is_secret) {   /* the value after "--password " */
            next_is_secret = 0;
            if (s[start] != '-') {
                sb.len -= n;
                tbm_sb_printf(&sb, "%s", TBM_REDACTED);
                i = value_end(s, start, in_url);
                continue;
            }
        }
        tbm_record_fmt(name, sizeof(name), "%.*s", (int)(n < 255 ? n : 255), s + start);
        {
            const char *bare = name;
            while (*bare == '-')
                bare++;
            if (!tbm_secret_name(bare))
                continue;
            if (s[i] == '=' || (s[i] == ':' && s[i + 1] == ' ' && bare == name)) {
                size_t v = i + 1 + (s[i] == ':');
                tbm_sb_append(&sb, s + i, v - i);
                tbm_sb_printf(&sb, "%s", TBM_REDACTED);
                i = value_end(s, v, in_url);
            } else if (name[0] == '-' && s[i] == ' ') {
                next_is_secret = 1;
            }
        }
    }
    return tbm_sb_take(&sb);
}

static char *replace_all(char *s, const char *what)
{
    tbm_strbuf_t sb;
    size_t wl = strlen(what);
    char *p, *from = s;

    if (wl < MIN_SECRET_LEN || !strstr(s, what))
        return s;
    tbm_sb_init(&sb);
    while ((p = strstr(from, what))) {
        tbm_sb_append(&sb, from, (size_t)(p - from));
        tbm_sb_printf(&sb, "%s", TBM_REDACTED);
        from = p + wl;
    }
    tbm_sb_printf(&sb, "%s", from);
    free(s);
    return tbm_sb_take(&sb);
}

char *tbm_redact_text(const char *s, const char *const *secrets, size_t n_secrets)
{
    char *out = redact_names(s ? s : "");
    size_t i;

    for (i = 0; out && i < n_secrets; i++)
        if (secrets[i])
            out = replace_all(out, secrets[i]);
    return out;
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
