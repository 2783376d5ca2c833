/* parse_sysinfo.c: `sw_vers` (macOS name, version, build), `sysctl -n hw.memsize machdep.cpu.brand_string
 * hw.model` (memory, chip, model identifier) and `sysctl hw.perflevel{0,1}.physicalcpu` (cores by kind). */
#include "parse_macos.h"

#include <stddef.h>
#include <string.h>

#include "rawtext.h"

#define SW_SOURCE "sw_vers"
#define SW_FIX "run `sw_vers` again and capture it"
#define SYSCTL_SOURCE "sysctl -n hw.memsize machdep.cpu.brand_string hw.model"
#define PERF_SOURCE "sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu"
#define MEMSIZE_MAX (1ll << 50)     /* 1 PiB: anything above is not a Mac's memory */
#define CORES_MAX 4096

/* A "Key: value" line that fills a text field of the facts. */
typedef struct text_key {
    const char *key;
    size_t offset;                  /* of a char[TBM_HOST_MAX] in tbm_host_facts_t */
} text_key_t;

static const text_key_t sw_keys[] = {
    { "ProductName", offsetof(tbm_host_facts_t, os_name) },
    { "ProductVersion", offsetof(tbm_host_facts_t, os_version) },
    { "BuildVersion", offsetof(tbm_host_facts_t, os_build) },
};
#define N_SW_KEYS (sizeof(sw_keys) / sizeof(sw_keys[0]))

/* Copy a value into a text field; returns -1 (field "") when too long, empty or not printable. */
static int put_text(char *dst, tbm_span_t val)
{
    if (val.n == 0 || tbm_span_copy(dst, TBM_HOST_MAX, val) < 0 || !tbm_valid_text(dst)) {
        dst[0] = '\0';
        return -1;
    }
    return 0;
}

static int read_sw_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    tbm_host_facts_t *facts = state;
    tbm_span_t key, val;
    size_t i;

    if (l->text.n == 0)
        return 0;
    if (tbm_span_keyval(l->text, &key, &val) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-garbage-line", l->lineno, SW_FIX,
                 "\"%.*s\" is not a \"Key: value\" line; ignored", TBM_SPAN_SHOW(l->text));
        return 0;
    }
    for (i = 0; i < N_SW_KEYS; i++)
        if (tbm_span_eq(key, sw_keys[i].key) && put_text((char *)facts + sw_keys[i].offset, val) < 0)
            tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-bad-value", l->lineno, SW_FIX,
                     "%s \"%.*s\" is empty, too long or not printable", sw_keys[i].key, TBM_SPAN_SHOW(val));
    return 0;
}

int tbm_parse_sw_vers(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    size_t i;

    tbm_parse_begin(&ctx, fs, SW_SOURCE);
    if (tbm_parse_lines(&ctx, text, len, 0, read_sw_line, facts) < 0)
        return -1;
    for (i = 0; i < N_SW_KEYS; i++)
        if (!((char *)facts + sw_keys[i].offset)[0])
            tbm_note(&ctx, TBM_SEV_WARNING, "sw-vers-missing", 0, SW_FIX, "no usable %s line", sw_keys[i].key);
    tbm_parse_end(&ctx);
    return 0;
}

/* Line k (0-based, k < 3) of the sysctl -n output. */
static void read_sysctl_value(tbm_parse_ctx_t *ctx, int k, tbm_span_t line, tbm_host_facts_t *facts)
{
    static const char *const names[] = { "hw.memsize", "machdep.cpu.brand_string", "hw.model" };
    const char *fix = "run `sysctl -n hw.memsize machdep.cpu.brand_string hw.model` again (in that order)";
    long long mem;
    int bad;

    if (k == 0) {
        bad = tbm_span_long(line, 1, MEMSIZE_MAX, &mem) < 0;
        facts->memory_bytes = bad ? 0 : (uint64_t)mem;
    } else {
        bad = put_text(k == 1 ? facts->chip : facts->model_id, line) < 0;
    }
    if (bad)
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-bad-value", k + 1, fix, "%s \"%.*s\" is not a valid value",
                 names[k], TBM_SPAN_SHOW(line));
}

static int read_sysctl_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    if (l->lineno <= 3)
        read_sysctl_value(ctx, l->lineno - 1, l->text, state);
    else if (l->text.n > 0)
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-extra-line", l->lineno, "capture only the three values",
                 "unexpected line \"%.*s\"; ignored", TBM_SPAN_SHOW(l->text));
    return 0;
}

int tbm_parse_sysctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    int lines;

    tbm_parse_begin(&ctx, fs, SYSCTL_SOURCE);
    lines = tbm_parse_lines(&ctx, text, len, 0, read_sysctl_line, facts);
    if (lines < 0)
        return -1;
    if (lines < 3)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-short", 0, "capture all three values",
                 "only %d of 3 lines (memsize, brand string, model)", lines);
    tbm_parse_end(&ctx);
    return 0;
}

static int read_perf_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    const char *fix = "run `sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu` again";
    tbm_host_facts_t *facts = state;
    tbm_span_t line = l->text, key, val;
    long long cores;
    int *dst = NULL;

    if (line.n == 0)
        return 0;
    if (tbm_span_keyval(line, &key, &val) == 0 && tbm_span_eq(key, "hw.perflevel0.physicalcpu"))
        dst = &facts->cores_performance;
    else if (tbm_span_keyval(line, &key, &val) == 0 && tbm_span_eq(key, "hw.perflevel1.physicalcpu"))
        dst = &facts->cores_efficiency;
    if (!dst || tbm_span_long(val, 0, CORES_MAX, &cores) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-perflevel-bad-line", l->lineno, fix,
                 "\"%.*s\" is not \"hw.perflevelN.physicalcpu: <count>\"; ignored", TBM_SPAN_SHOW(line));
        return 0;
    }
    *dst = (int)cores;
    return 0;
}

int tbm_parse_perflevels(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;

    tbm_parse_begin(&ctx, fs, PERF_SOURCE);
    if (tbm_parse_lines(&ctx, text, len, 0, read_perf_line, facts) < 0)
        return -1;
    if (facts->cores_performance == 0)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-no-performance-cores", 0,
                 "check the capture: every Apple-silicon Mac has performance cores",
                 "no hw.perflevel0.physicalcpu count above 0");
    tbm_parse_end(&ctx);
    return 0;
}
