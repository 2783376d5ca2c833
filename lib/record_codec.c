/* record_codec.c: the TBM1 summary Slurm keeps in AdminComment: "TBM1:" + base64(gzip(JSON)), what it holds
 * (the least a report needs: every user can read it), and the record sync makes from it. */
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "json_read.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *tbm_base64_encode(const unsigned char *data, size_t len)
{
    char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;
    size_t i;

    if (!out)
        return NULL;
    for (i = 0; i + 2 < len; i += 3, o += 4) {
        unsigned v = (unsigned)data[i] << 16 | (unsigned)data[i + 1] << 8 | data[i + 2];
        o[0] = b64[v >> 18], o[1] = b64[(v >> 12) & 63], o[2] = b64[(v >> 6) & 63], o[3] = b64[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)data[i] << 16 | (i + 1 < len ? (unsigned)data[i + 1] << 8 : 0);
        o[0] = b64[v >> 18], o[1] = b64[(v >> 12) & 63];
        o[2] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
        o[3] = '=';
        o += 4;
    }
    *o = '\0';
    return out;
}

static int b64_value(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

unsigned char *tbm_base64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s), i, pad = 0;
    unsigned char *out;
    int v[4], k;

    if (n % 4 != 0)
        return NULL;
    if (n >= 1 && s[n - 1] == '=')
        pad++;
    if (n >= 2 && s[n - 2] == '=')
        pad++;
    if (!(out = malloc(n / 4 * 3 + 1)))
        return NULL;
    for (i = 0, *len = 0; i < n; i += 4) {
        for (k = 0; k < 4; k++) {
            v[k] = (i + 4 == n && k >= 4 - (int)pad) ? 0 : b64_value(s[i + k]);
            if (v[k] < 0) {
                free(out);
                return NULL;
            }
        }
        out[(*len)++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
        if (!(i + 4 == n && pad == 2))
            out[(*len)++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
        if (!(i + 4 == n && pad >= 1))
            out[(*len)++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
        /* bits dropped by the padding must be zero (one encoding per value) */
        if (i + 4 == n && ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))) {
            free(out);
            return NULL;
        }
    }
    return out;
}

static void add_str(json_object *s, const char *key, json_object *from, const char *member)
{
    json_object *v;

    if (json_object_object_get_ex(from, member, &v) && json_object_is_type(v, json_type_string))
        json_object_object_add(s, key, json_object_new_string(json_object_get_string(v)));
}

static void add_int(json_object *s, const char *key, json_object *from, const char *member)
{
    json_object *v = tbm_json_typed(from, member, json_type_int);

    if (v)
        json_object_object_add(s, key, json_object_new_int64(json_object_get_int64(v)));
}

json_object *tbm_summary_of_record(json_object *rec, const char *record_sha256)
{
    json_object *s = json_object_new_object(), *job = tbm_json_typed(rec, "job", json_type_object), *v;

    if (!s)
        return NULL;
    json_object_object_add(s, "v", json_object_new_int(TBM_SUMMARY_VERSION));
    add_int(s, "job", job, "id");
    add_str(s, "phase", job, "phase");
    add_str(s, "state", job, "state");
    add_int(s, "exit", job, "exit_code");
    add_str(s, "backend", job, "backend_chosen");
    if (!json_object_object_get_ex(s, "backend", NULL))
        add_str(s, "backend", job, "backend_requested");
    add_str(s, "group", job, "group");
    if ((v = tbm_json_typed(job, "nodes", json_type_array)))
        json_object_object_add(s, "nodes", json_object_new_int((int)json_object_array_length(v)));
    if (record_sha256 && *record_sha256)
        json_object_object_add(s, "record", json_object_new_string(record_sha256));
    return s;
}

json_object *tbm_summary_at_submit(const char *backend, const char *group, const char *records)
{
    json_object *s = json_object_new_object();

    if (!s)
        return NULL;
    json_object_object_add(s, "v", json_object_new_int(TBM_SUMMARY_VERSION));
    json_object_object_add(s, "phase", json_object_new_string("submit"));
    json_object_object_add(s, "state", json_object_new_string("PENDING"));
    json_object_object_add(s, "backend", json_object_new_string(backend && *backend ? backend : "auto"));
    if (group && *group)
        json_object_object_add(s, "group", json_object_new_string(group));
    if (records && *records)
        json_object_object_add(s, "records", json_object_new_string(records));
    return s;
}

json_object *tbm_record_of_summary(json_object *summary, uint32_t job, const char *cluster, const char *state,
                                   int started)
{
    json_object *rec = tbm_record_new(job, cluster, "sync", state), *j = json_object_object_get(rec, "job"), *v;
    json_object *version = tbm_json_typed(summary, "v", json_type_int);

    if (!rec)
        return NULL;
    if ((v = tbm_json_typed(summary, "backend", json_type_string)))
        json_object_object_add(j, "backend_requested", json_object_new_string(json_object_get_string(v)));
    if ((v = tbm_json_typed(summary, "group", json_type_string)))
        json_object_object_add(j, "group", json_object_new_string(json_object_get_string(v)));
    if (version && json_object_get_int64(version) == 1 && json_object_object_get_ex(summary, "submit", &v))
        json_object_object_add(rec, "submit", json_object_get(v));   /* an older job's AdminComment held it */
    else if (started)
        json_object_object_add(rec, "submit", tbm_record_absent(
            "the job started, but no node stored its record; the submit half travels only in the job's own "
            "environment, not in AdminComment, which every user can read"));
    else
        json_object_object_add(rec, "submit", tbm_record_absent(
            "the job never started, so no node received its submit half: it travels in the job's own "
            "environment, not in AdminComment, which every user can read"));
    if (version && json_object_get_int64(version) == 1 &&
        (v = tbm_json_typed(summary, "declared", json_type_object)))
        json_object_object_add(rec, "declared", json_object_get(v));
    json_object_object_add(rec, "usage", tbm_record_absent("the job never ran, or its node could not report"));
    return rec;
}

char *tbm_summary_encode(json_object *summary, tbm_err_t *err)
{
    const char *json;
    unsigned char out[TBM_SUMMARY_MAX + 512];
    z_stream z;
    size_t len;
    char *b, *text;
    int rc;

    if (tbm_summary_validate(summary, err) < 0)
        return NULL;
    json = json_object_to_json_string_ext(summary, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    len = strlen(json);
    if (len > TBM_SUMMARY_MAX)
        return tbm_errprintf(err, "TBM1 summary: %zu bytes of JSON is more than %d", len, TBM_SUMMARY_MAX), NULL;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)   /* +16: gzip wrapper */
        return tbm_errprintf(err, "TBM1 summary: zlib cannot start"), NULL;
    z.next_in = (unsigned char *)json;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = sizeof(out);
    rc = deflate(&z, Z_FINISH);
    len = sizeof(out) - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END)
        return tbm_errprintf(err, "TBM1 summary: zlib could not compress it"), NULL;
    if (!(b = tbm_base64_encode(out, len)) || !(text = malloc(strlen(b) + sizeof(TBM_SUMMARY_PREFIX)))) {
        free(b);
        return tbm_errprintf(err, "TBM1 summary: out of memory"), NULL;
    }
    strcpy(text, TBM_SUMMARY_PREFIX);
    strcat(text, b);
    free(b);
    return text;
}

json_object *tbm_summary_decode(const char *text, tbm_err_t *err)
{
    char json[TBM_SUMMARY_MAX + 1];
    unsigned char *gz;
    size_t gzlen, n;
    json_object *s;
    z_stream z;
    int rc;

    if (!text || strncmp(text, TBM_SUMMARY_PREFIX, strlen(TBM_SUMMARY_PREFIX)) != 0)
        return tbm_errprintf(err, "not a TBM1 summary (it does not start with \"%s\"): the AdminComment was "
                             "written by something else", TBM_SUMMARY_PREFIX), NULL;
    text += strlen(TBM_SUMMARY_PREFIX);
    if (strlen(text) > 4 * (TBM_SUMMARY_MAX + 512) / 3 + 4)
        return tbm_errprintf(err, "TBM1 summary: %zu characters is too long for a summary", strlen(text)), NULL;
    if (!(gz = tbm_base64_decode(text, &gzlen)))
        return tbm_errprintf(err, "TBM1 summary: the text after TBM1: is not valid base64 (cut short?)"), NULL;
    memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 15 + 16) != Z_OK) {   /* gzip only */
        free(gz);
        return tbm_errprintf(err, "TBM1 summary: zlib cannot start"), NULL;
    }
    z.next_in = gz;
    z.avail_in = (uInt)gzlen;
    z.next_out = (unsigned char *)json;
    z.avail_out = TBM_SUMMARY_MAX;
    rc = inflate(&z, Z_FINISH);
    n = TBM_SUMMARY_MAX - z.avail_out;
    inflateEnd(&z);
    free(gz);
    if (rc == Z_BUF_ERROR && n == TBM_SUMMARY_MAX)
        return tbm_errprintf(err, "TBM1 summary: it unpacks to more than %d bytes", TBM_SUMMARY_MAX), NULL;
    if (rc != Z_STREAM_END || z.avail_in != 0)
        return tbm_errprintf(err, "TBM1 summary: not complete gzip data (cut short or corrupted)"), NULL;
    json[n] = '\0';
    if (!(s = tbm_json_parse(json, n, err))) {
        tbm_errprefix(err, "TBM1 summary: ");
        return NULL;
    }
    if (tbm_summary_validate(s, err) < 0) {
        json_object_put(s);
        return NULL;
    }
    return s;
}
