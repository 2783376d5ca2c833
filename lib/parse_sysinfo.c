/* parse_sysinfo.c: `sw_vers` (macOS name, version, build), `sysctl -n hw.memsize machdep.cpu.brand_string
 * hw.model` (memory, chip, model identifier) and `sysctl hw.perflevel{0,1}.physicalcpu` (cores by kind). */
#include "parse_macos.h"

#include <stddef.h>
#include <string.h>

#include "rawtext.h"

#define SW_SOURCE "sw_vers"
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

static void read_sw_line(tbm_parse_ctx_t *ctx, tbm_span_t line, int lineno, tbm_host_facts_t *facts)
{
    tbm_span_t key, val;
    size_t i;

    if (tbm_span_keyval(line, &key, &val) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-garbage-line", lineno, "run `sw_vers` again and capture it",
                 "\"%.*s\" is not a \"Key: value\" line; ignored", TBM_SPAN_SHOW(line));
        return;
    }
    for (i = 0; i < N_SW_KEYS; i++)
        if (tbm_span_eq(key, sw_keys[i].key) && put_text((char *)facts + sw_keys[i].offset, val) < 0)
            tbm_note(ctx, TBM_SEV_WARNING, "sw-vers-bad-value", lineno, "run `sw_vers` again and capture it",
                     "%s \"%.*s\" is empty, too long or not printable", sw_keys[i].key, TBM_SPAN_SHOW(val));
}

int tbm_parse_sw_vers(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    tbm_lines_t it;
    tbm_span_t line;
    const char *p;
    size_t n, i;

    tbm_parse_begin(&ctx, fs, SW_SOURCE);
    if (tbm_raw_usable(&ctx, text, len, 0) < 0)
        return -1;
    tbm_lines_init(&it, text, len);
    while (tbm_lines_next(&it, &p, &n))
        if ((line = tbm_span_trim(p, n)).n > 0)
            read_sw_line(&ctx, line, it.lineno, facts);
    for (i = 0; i < N_SW_KEYS; i++)
        if (!((char *)facts + sw_keys[i].offset)[0])
            tbm_note(&ctx, TBM_SEV_WARNING, "sw-vers-missing", 0, "run `sw_vers` again and capture it",
                     "no usable %s line", sw_keys[i].key);
    tbm_parse_end(&ctx);
    return 0;
}

/* Line k (0-based) of the sysctl -n output. */
static void read_sysctl_line(tbm_parse_ctx_t *ctx, int k, tbm_span_t line, tbm_host_facts_t *facts)
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

int tbm_parse_sysctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    tbm_lines_t it;
    tbm_span_t line;
    const char *p;
    size_t n;

    tbm_parse_begin(&ctx, fs, SYSCTL_SOURCE);
    if (tbm_raw_usable(&ctx, text, len, 0) < 0)
        return -1;
    tbm_lines_init(&it, text, len);
    while (tbm_lines_next(&it, &p, &n)) {
        line = tbm_span_trim(p, n);
        if (it.lineno <= 3)
            read_sysctl_line(&ctx, it.lineno - 1, line, facts);
        else if (line.n > 0)
            tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-extra-line", it.lineno, "capture only the three values",
                     "unexpected line \"%.*s\"; ignored", TBM_SPAN_SHOW(line));
    }
    if (it.lineno < 3)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-short", 0, "capture all three values",
                 "only %d of 3 lines (memsize, brand string, model)", it.lineno);
    tbm_parse_end(&ctx);
    return 0;
}

static void read_perf_line(tbm_parse_ctx_t *ctx, tbm_span_t line, int lineno, tbm_host_facts_t *facts)
{
    const char *fix = "run `sysctl hw.perflevel0.physicalcpu hw.perflevel1.physicalcpu` again";
    tbm_span_t key, val;
    long long cores;
    int *dst = NULL;

    if (tbm_span_keyval(line, &key, &val) == 0 && tbm_span_eq(key, "hw.perflevel0.physicalcpu"))
        dst = &facts->cores_performance;
    else if (tbm_span_keyval(line, &key, &val) == 0 && tbm_span_eq(key, "hw.perflevel1.physicalcpu"))
        dst = &facts->cores_efficiency;
    if (!dst || tbm_span_long(val, 0, CORES_MAX, &cores) < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "sysctl-perflevel-bad-line", lineno, fix,
                 "\"%.*s\" is not \"hw.perflevelN.physicalcpu: <count>\"; ignored", TBM_SPAN_SHOW(line));
        return;
    }
    *dst = (int)cores;
}

int tbm_parse_perflevels(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    tbm_lines_t it;
    tbm_span_t line;
    const char *p;
    size_t n;

    tbm_parse_begin(&ctx, fs, PERF_SOURCE);
    if (tbm_raw_usable(&ctx, text, len, 0) < 0)
        return -1;
    tbm_lines_init(&it, text, len);
    while (tbm_lines_next(&it, &p, &n))
        if ((line = tbm_span_trim(p, n)).n > 0)
            read_perf_line(&ctx, line, it.lineno, facts);
    if (facts->cores_performance == 0)
        tbm_note(&ctx, TBM_SEV_WARNING, "sysctl-no-performance-cores", 0,
                 "check the capture: every Apple-silicon Mac has performance cores",
                 "no hw.perflevel0.physicalcpu count above 0");
    tbm_parse_end(&ctx);
    return 0;
}
