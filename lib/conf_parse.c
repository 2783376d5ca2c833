/* conf_parse.c: tbm_conf_parse, the tbmesh.conf parser's entry: the file read line by line (conf_tokens.c,
 * conf_lines.c), then the checks across lines (conf_checks.c); every error reported with file:line, and the
 * result all or nothing (see conf.h and tbmesh.conf(5)). */
#include "conf_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void read_line(conf_parser_t *p, const char *s, size_t len)
{
    char buf[TBM_CONF_LINE_MAX + 1];
    conf_token_t tok[TBM_CONF_MAX_TOKENS];
    size_t n;

    p->line_errors = p->n_errors;
    if (tbm_conf_tokenize_line(p, s, len, buf, tok, &n) == 0 && n > 0)
        tbm_conf_read_tokens(p, tok, n);
}

static void parser_free(conf_parser_t *p)
{
    free(p->pn);
    free(p->pc);
    free(p->index);
    free(p->group_bad);
    tbm_hostlist_free(p->node_names, p->n_node_names);
    tbm_hostlist_free(p->subset_names, p->n_subset_names);
}

static void read_lines(conf_parser_t *p, const char *buf, size_t len)
{
    size_t pos = 0;

    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - buf) : len;
        p->line++;
        read_line(p, buf + pos, end - pos);
        pos = end + 1;
    }
}

static int summarize(conf_parser_t *p, size_t first, tbm_err_t *err)
{
    const tbm_finding_t *f = first < p->errors->n ? &p->errors->items[first] : NULL;

    if (!f)
        return tbm_errprintf(err, "%s: %zu errors: out of memory", p->file, p->n_errors);
    if (p->n_errors == 1)
        return tbm_errprintf(err, "%s: %s: %s", f->where, f->what, f->fix);
    return tbm_errprintf(err, "%s: %s: %s (and %zu more errors)", f->where, f->what, f->fix, p->n_errors - 1);
}

int tbm_conf_parse(const char *buf, size_t len, const char *file, tbm_conf_t *out, tbm_findings_t *errors,
                   tbm_err_t *err)
{
    tbm_findings_t own;
    conf_parser_t p;
    size_t first;
    int rc = 0;

    memset(&p, 0, sizeof(p));
    tbm_findings_init(&own);
    p.file = file ? file : "tbmesh.conf";
    p.errors = errors ? errors : &own;
    first = p.errors->n;
    p.c = out;
    tbm_conf_init(out);
    if (len > TBM_CONF_MAX_BYTES) {
        BAD_AT(&p, 0, "keep tbmesh.conf under 16 MiB", "the file holds %zu bytes", len);
    } else {
        read_lines(&p, buf, len);
        tbm_conf_check_across_lines(&p);
    }
    if (p.n_errors) {
        rc = summarize(&p, first, err);
        tbm_conf_free(out);
    }
    parser_free(&p);
    tbm_findings_free(&own);
    return rc;
}
