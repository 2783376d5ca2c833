/* envplan_vars.c: a plan's variables and the files the agent writes into the job folder: adding them,
 * the JSON row lists the backends' files are made of, look-up and freeing (see envplan.h). */
#include "envplan_builder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tbm_envplan_add_var(envplan_ctx_t *c, const char *name, const char *fmt, ...)
{
    tbm_envplan_t *p = c->plan;
    tbm_strbuf_t sb;
    char value[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    if (p->n_vars >= TBM_ENVPLAN_MAX_VARS)
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
    tbm_sb_init(&sb);
    tbm_sb_printf(&sb, "%s", name);
    p->vars[p->n_vars].name = tbm_sb_take(&sb);
    tbm_sb_printf(&sb, "%s", value);
    p->vars[p->n_vars].value = tbm_sb_take(&sb);
    if (!p->vars[p->n_vars].name || !p->vars[p->n_vars].value) {
        free(p->vars[p->n_vars].name);
        free(p->vars[p->n_vars].value);
        return tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
    }
    p->n_vars++;
    return 0;
}

int tbm_envplan_add_file(envplan_ctx_t *c, const char *name, tbm_strbuf_t *sb, char *path, size_t len)
{
    tbm_envfile_t *f = &c->plan->files[c->plan->n_files];

    snprintf(path, len, "%s/%s", c->job_dir, name);
    f->len = sb->len;
    f->data = tbm_sb_take(sb);
    tbm_sb_printf(sb, "%s", path);
    f->path = tbm_sb_take(sb);
    c->plan->n_files++;
    return f->data && f->path ? 0 : tbm_errprintf(c->err, TBM_ENVPLAN_OOM);
}

void tbm_envplan_json_rows(const envplan_ctx_t *c, tbm_strbuf_t *sb,
                           void (*row)(const envplan_ctx_t *, tbm_strbuf_t *, int))
{
    size_t r;

    tbm_sb_printf(sb, "[\n");
    for (r = 0; r < c->n; r++) {
        tbm_sb_printf(sb, "  [");
        row(c, sb, (int)r);
        tbm_sb_printf(sb, "]%s\n", r + 1 < c->n ? "," : "");
    }
    tbm_sb_printf(sb, "]\n");
}

void tbm_envplan_free(tbm_envplan_t *p)
{
    size_t i;

    if (!p)
        return;
    for (i = 0; p->vars && i < p->n_vars; i++) {
        free(p->vars[i].name);
        free(p->vars[i].value);
    }
    for (i = 0; p->files && i < p->n_files; i++) {
        free(p->files[i].path);
        free(p->files[i].data);
    }
    free(p->vars);
    free(p->files);
    free(p->order);
    memset(p, 0, sizeof(*p));
}

const char *tbm_envplan_get(const tbm_envplan_t *p, const char *name)
{
    size_t i;

    for (i = 0; i < p->n_vars; i++)
        if (strcmp(p->vars[i].name, name) == 0)
            return p->vars[i].value;
    return NULL;
}
