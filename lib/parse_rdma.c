/* parse_rdma.c: `ibv_devices` (the RDMA devices macOS offers over Thunderbolt, "rdma_en2") and
 * `rdma_ctl status` (whether RDMA over Thunderbolt is enabled). */
#include "parse_macos.h"

#include <string.h>

#include "parse_text.h"

#define IBV_SOURCE "ibv_devices"
#define IBV_FIX "run `ibv_devices` again and capture all of it"
#define RDMA_CTL_SOURCE "rdma_ctl status"

static int is_guid(tbm_span_t s)
{
    size_t i;

    if (s.n != 16)
        return 0;
    for (i = 0; i < s.n; i++)
        if (!memchr("0123456789abcdefABCDEF", s.p[i], 22))
            return 0;
    return 1;
}

static int has_device(const tbm_host_facts_t *facts, const char *name)
{
    int i;

    for (i = 0; i < facts->n_rdma; i++)
        if (strcmp(facts->rdma_devices[i], name) == 0)
            return 1;
    return 0;
}

static void read_row(tbm_parse_ctx_t *ctx, tbm_span_t line, int lineno, tbm_host_facts_t *facts)
{
    tbm_span_t rest = line, name = tbm_span_word(&rest), guid = tbm_span_word(&rest);
    char dev[TBM_IFNAME_MAX] = "";

    if (rest.n > 0 || !is_guid(guid) || tbm_span_copy(dev, sizeof(dev), name) < 0 || !tbm_valid_ifname(dev)) {
        tbm_note(ctx, TBM_SEV_WARNING, "ibv-bad-row", lineno, IBV_FIX,
                 "\"%.*s\" is not a row \"<device> <16 hex digit GUID>\"; ignored", TBM_SPAN_SHOW(line));
    } else if (has_device(facts, dev)) {
        tbm_note(ctx, TBM_SEV_WARNING, "ibv-duplicate", lineno, IBV_FIX, "device %s is listed twice", dev);
    } else if (facts->n_rdma >= TBM_MAX_RDMA) {
        tbm_note(ctx, TBM_SEV_ERROR, "ibv-too-many", lineno, IBV_FIX,
                 "more than %d RDMA devices; %s is ignored", TBM_MAX_RDMA, dev);
    } else {
        memcpy(facts->rdma_devices[facts->n_rdma++], dev, sizeof(dev));
    }
}

/* Reading state: the facts, and whether the header was seen. */
typedef struct ibv_state {
    tbm_host_facts_t *facts;
    int header;
} ibv_state_t;

static int read_line(tbm_parse_ctx_t *ctx, const tbm_line_t *l, void *state)
{
    ibv_state_t *st = state;

    if (l->text.n == 0 || (st->header && tbm_span_starts(l->text, "---")))
        return 0;
    if (!st->header && tbm_span_starts(l->text, "device") && tbm_span_eq(tbm_span_after(l->text, 6), "node GUID"))
        st->header = 1;
    else if (!st->header)
        tbm_note(ctx, TBM_SEV_WARNING, "ibv-no-header", l->lineno, IBV_FIX,
                 "\"%.*s\" comes before the \"device node GUID\" header; ignored", TBM_SPAN_SHOW(l->text));
    else
        read_row(ctx, l->text, l->lineno, st->facts);
    return 0;
}

int tbm_parse_ibv_devices(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    ibv_state_t st = { facts, 0 };

    tbm_parse_begin(&ctx, fs, IBV_SOURCE);
    if (tbm_parse_lines(&ctx, text, len, 1, read_line, &st) < 0)
        return -1;
    tbm_parse_end(&ctx);
    return 0;
}

int tbm_parse_rdma_ctl(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    tbm_span_t s;

    tbm_parse_begin(&ctx, fs, RDMA_CTL_SOURCE);
    facts->rdma_enabled = -1;
    if (tbm_raw_usable(&ctx, text, len, 0) < 0)
        return -1;
    s = tbm_span_trim(text, len);
    if (tbm_span_eq(s, "enabled") || tbm_span_eq(s, "disabled")) {
        facts->rdma_enabled = tbm_span_eq(s, "enabled");
        return 0;
    }
    tbm_note(&ctx, TBM_SEV_ERROR, "rdma-ctl-unknown", 0,
             "run `rdma_ctl status` again; to turn RDMA on, run `rdma_ctl enable` in recoveryOS and restart",
             "rdma_ctl status said \"%.*s\", not \"enabled\" or \"disabled\"", TBM_SPAN_SHOW(s));
    return -1;
}
