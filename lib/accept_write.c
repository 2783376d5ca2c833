/* accept_write.c: the decision record of an acceptance run, as Markdown (for people: the verdict first, then
 * each of the seven steps) and as JSON (for tools: the same facts, keyed), both from one tbm_accept_t. */
#include "accept.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"
#include "strbuf.h"
#include "utctime.h"

static void iso_time(time_t t, char *buf, size_t len)
{
    if (tbm_utc_iso(t, TBM_UTC_EXTENDED, buf, len) < 0)
        snprintf(buf, len, "-");
}

/* ---- Markdown ---- */

/* Text for a table cell or a list item: '|' escaped, line breaks as spaces. */
static void md_text(tbm_strbuf_t *sb, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            tbm_sb_append(sb, "\\|", 2);
        else if (*s == '\n' || *s == '\r')
            tbm_sb_append(sb, " ", 1);
        else
            tbm_sb_append(sb, s, 1);
    }
}

static void md_finding(tbm_strbuf_t *sb, const tbm_finding_t *f)
{
    tbm_sb_printf(sb, "- **%s** `%s`", tbm_severity_name(f->severity), f->code);
    if (f->where[0]) {
        tbm_sb_printf(sb, " at ");
        md_text(sb, f->where);
    }
    tbm_sb_printf(sb, ": ");
    md_text(sb, f->what);
    if (f->fix[0]) {
        tbm_sb_printf(sb, ". *To do:* ");
        md_text(sb, f->fix);
    }
    tbm_sb_printf(sb, "\n");
}

static void md_findings(tbm_strbuf_t *sb, const tbm_findings_t *fs)
{
    size_t i;

    for (i = 0; i < fs->n; i++)
        md_finding(sb, &fs->items[i]);
    if (fs->dropped)
        tbm_sb_printf(sb, "- (%zu more findings were not kept)\n", fs->dropped);
}

static void md_jobs(tbm_strbuf_t *sb, const char *jobs)
{
    tbm_sb_printf(sb, "%s", jobs[0] ? jobs : "-");
}

static void md_verdict(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    int l;

    tbm_sb_printf(sb, "## Verdict\n\n**%s** (exit status %d).\n", tbm_accept_level_name(a->level),
                  tbm_accept_exit_status(a->level));
    for (l = (int)a->level + 1; l < TBM_ACCEPT_LEVELS; l++) {
        if (!a->kept[l].n)
            continue;
        tbm_sb_printf(sb, "\n%s **%s**, and what to do:\n\n", l == (int)a->level + 1 ? "What kept it from"
                                                                                        : "Then, to be a",
                      tbm_accept_level_name((tbm_accept_level_t)l));
        md_findings(sb, &a->kept[l]);
    }
    if (a->level == TBM_ACCEPT_PLANNABLE)
        tbm_sb_printf(sb, "\nEvery step passed: the group can be planned on for the task of the plan.\n");
    tbm_sb_printf(sb, "\n");
}

static void md_steps_table(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    int i;

    tbm_sb_printf(sb, "## Steps\n\n| step | | state | Slurm jobs | summary |\n|---|---|---|---|---|\n");
    for (i = 0; i < TBM_ACCEPT_STEPS; i++) {
        tbm_sb_printf(sb, "| %d | %s | %s | ", i + 1, tbm_accept_step_title(i + 1),
                      tbm_step_state_name(a->step[i].state));
        md_jobs(sb, a->step[i].jobs);
        tbm_sb_printf(sb, " | ");
        md_text(sb, a->step[i].summary);
        tbm_sb_printf(sb, " |\n");
    }
    tbm_sb_printf(sb, "\n");
}

static void md_step_head(tbm_strbuf_t *sb, const tbm_accept_t *a, int step)
{
    const tbm_accept_step_t *s = &a->step[step - 1];

    tbm_sb_printf(sb, "## %d. %s\n\n%s", step, tbm_accept_step_title(step), s->state == TBM_STEP_PASSED ? "Passed"
                  : s->state == TBM_STEP_FINDINGS ? "Ran, with findings" : s->state == TBM_STEP_FAILED ? "Failed"
                  : "Did not run");
    if (s->jobs[0])
        tbm_sb_printf(sb, " (Slurm job %s)", s->jobs);
    tbm_sb_printf(sb, ": ");
    md_text(sb, s->summary[0] ? s->summary : "-");
    tbm_sb_printf(sb, ".\n\n");
}

static void md_step_end(tbm_strbuf_t *sb, const tbm_accept_t *a, int step)
{
    const tbm_findings_t *fs = &a->step[step - 1].findings;

    if (fs->n) {
        tbm_sb_printf(sb, "\nFindings:\n\n");
        md_findings(sb, fs);
    }
    tbm_sb_printf(sb, "\n");
}

static void md_sweep(tbm_strbuf_t *sb, const tbm_accept_sweep_t *s)
{
    size_t i;

    if (!s->ran) {
        tbm_sb_printf(sb, "- All-reduce sweep: none\n");
        return;
    }
    tbm_sb_printf(sb, "- All-reduce sweep, %d ranks, %ld wrong values:\n\n| size (B) | time (us) | busbw (GB/s) |\n"
                      "|---:|---:|---:|\n", s->ranks, s->wrong_total);
    for (i = 0; i < s->n; i++)
        tbm_sb_printf(sb, "| %zu | %.1f | %.3f |\n", s->bytes[i], s->time_us[i], s->busbw[i]);
}

static void md_refwork(tbm_strbuf_t *sb, const char *what, const tbm_accept_refwork_t *rw)
{
    if (rw->ran)
        tbm_sb_printf(sb, "- %s: `macnode refwork` on %d rank%s, %.3f s, output SHA-256 `%s`\n", what, rw->ranks,
                      rw->ranks == 1 ? "" : "s", rw->seconds, rw->sha256);
    else
        tbm_sb_printf(sb, "- %s: `macnode refwork` did not run\n", what);
}

static void md_plan(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    const tbm_accept_plan_t *p = &a->plan;
    const char *label[] = { "Task", "Model", "Data", "Expected output" };
    const char *val[] = { p->task, p->model, p->data, p->expected };
    int i;

    md_step_head(sb, a, 1);
    tbm_sb_printf(sb, "- Plan: %s\n", p->present ? p->file : "none (default checks)");
    for (i = 0; i < 4; i++) {
        tbm_sb_printf(sb, "- %s: ", label[i]);
        md_text(sb, val[i][0] ? val[i] : "-");
        tbm_sb_printf(sb, "\n");
    }
    tbm_sb_printf(sb, "- Backend wanted: %s; tolerance: ", tbm_backend_name(p->backend));
    if (p->bitwise)
        tbm_sb_printf(sb, "bitwise");
    else
        tbm_sb_printf(sb, "rtol %.3g, atol %.3g", p->rtol, p->atol);
    tbm_sb_printf(sb, "; each cable at least %.0f%% of its link speed; all-reduce busbw at least %.0f%% of the "
                      "slowest cable\n", 100 * p->link_share, 100 * p->busbw_share);
    tbm_sb_printf(sb, "- Reference workload: %d layers, hidden %d, batch %d, seed %llu; sweeps up to %zu B, cables "
                      "measured with %zu B\n", p->refwork.layers, p->refwork.hidden, p->refwork.batch,
                  (unsigned long long)p->refwork.seed, p->sweep_max, p->p2p_bytes);
    md_step_end(sb, a, 1);
}

static void md_baseline(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    md_step_head(sb, a, 2);
    tbm_sb_printf(sb, "- Mac: %s\n", a->base_mac[0] ? a->base_mac : "-");
    md_refwork(sb, "Reference workload", &a->base_rw);
    md_sweep(sb, &a->base_sweep);
    md_step_end(sb, a, 2);
}

static void md_path(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    int b;

    md_step_head(sb, a, 3);
    tbm_sb_printf(sb, "Group %s: %d Macs, %s, link %s, %s.\n\n| backend | on all %d Macs | why not |\n|---|---|---|\n",
                  a->group, a->n_macs, tbm_topo_class_name(a->caps.topology), tbm_link_name(a->link),
                  a->caps.rdma ? "RDMA" : "no RDMA", a->n_macs);
    for (b = 0; b < TBM_BACKEND_COUNT; b++) {
        int ok = (a->possible >> b) & 1;
        tbm_sb_printf(sb, "| %s | %s | ", tbm_backend_name((tbm_backend_t)b), ok ? "yes" : "no");
        md_text(sb, ok ? "" : a->why_not[b]);
        tbm_sb_printf(sb, " |\n");
    }
    tbm_sb_printf(sb, "\nThe plan asks for %s; steps 5 and 6 ran %s.\n", tbm_backend_name(a->plan.backend),
                  a->chosen == TBM_BACKEND_AUTO ? "no backend" : tbm_backend_name(a->chosen));
    md_step_end(sb, a, 3);
}

static void md_physical(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    md_step_head(sb, a, 4);
    tbm_sb_printf(sb, "- Macs checked: %d, healthy: %d\n", a->macs_checked, a->macs_healthy);
    md_step_end(sb, a, 4);
}

static void md_launch(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    size_t i;

    md_step_head(sb, a, 5);
    tbm_sb_printf(sb, "- Backend: %s; environment right on %d of %d ranks\n",
                  a->chosen == TBM_BACKEND_AUTO ? "none" : tbm_backend_name(a->chosen), a->env_ok, a->env_ranks);
    md_refwork(sb, "Reference workload", &a->mesh_rw);
    tbm_sb_printf(sb, "- Cables (`macnode bench -o p2p`, each alone):\n\n| cable | link | GB/s one way | GB/s back "
                      "| share of link | wrong |\n|---|---:|---:|---:|---:|---:|\n");
    for (i = 0; i < a->n_cables; i++) {
        const tbm_accept_cable_t *c = &a->cables[i];
        tbm_sb_printf(sb, "| %s <-> %s | %d Gb/s | ", c->end[0], c->end[1], c->speed_gbps);
        if (c->measured)
            tbm_sb_printf(sb, "%.3f | %.3f | ", c->gbs[0], c->gbs[1]);
        else
            tbm_sb_printf(sb, "- | - | ");
        if (c->share >= 0)
            tbm_sb_printf(sb, "%.0f%% | %ld |\n", 100 * c->share, c->wrong);
        else
            tbm_sb_printf(sb, "- | %ld |\n", c->wrong);
    }
    tbm_sb_printf(sb, "\n");
    md_sweep(sb, &a->mesh_sweep);
    md_step_end(sb, a, 5);
}

static void md_compare(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    md_step_head(sb, a, 6);
    if (a->compared)
        tbm_sb_printf(sb, "- Mesh against single Mac: %s; %zu of the values differ, largest difference %.3g (relative "
                          "%.3g)\n", a->diff.bitwise ? "bitwise identical" : a->diff.n_beyond ? "DIFFERENT"
                                                                                                : "within tolerance",
                      a->diff.n_differ, a->diff.max_abs, a->diff.max_rel);
    else
        tbm_sb_printf(sb, "- Mesh against single Mac: not compared\n");
    if (a->slowest_gbs > 0)
        tbm_sb_printf(sb, "- Slowest cable: %.3f GB/s the slower way\n", a->slowest_gbs);
    if (a->busbw_share >= 0)
        tbm_sb_printf(sb, "- All-reduce busbw at the largest size: %.3f GB/s, %.0f%% of the slowest cable\n",
                      a->busbw_gbs, 100 * a->busbw_share);
    md_step_end(sb, a, 6);
}

static void md_owners(tbm_strbuf_t *sb, const tbm_accept_t *a)
{
    int r;

    md_step_head(sb, a, 7);
    tbm_sb_printf(sb, "| owner | of | named |\n|---|---|---|\n");
    for (r = 0; r < TBM_OWNER_ROLES; r++) {
        tbm_sb_printf(sb, "| %s | %s | ", tbm_owner_key((tbm_owner_role_t)r), tbm_owner_duty((tbm_owner_role_t)r));
        md_text(sb, a->owner[r][0] ? a->owner[r] : "nobody");
        tbm_sb_printf(sb, " |\n");
    }
    md_step_end(sb, a, 7);
}

char *tbm_accept_markdown(const tbm_accept_t *a)
{
    char t0[32], t1[32];
    tbm_strbuf_t sb;
    int i, any = 0;

    tbm_sb_init(&sb);
    iso_time(a->started, t0, sizeof(t0));
    iso_time(a->ended, t1, sizeof(t1));
    tbm_sb_printf(&sb, "# Acceptance of %s: %s\n\n", a->group, tbm_accept_level_name(a->level));
    tbm_sb_printf(&sb, "Group %s (%s, %d Macs) on cluster %s, from %s to %s, by `tbmesh accept`.\n\n", a->group,
                  a->nodes[0] ? a->nodes : "-", a->n_macs, a->cluster[0] ? a->cluster : "-", t0, t1);
    md_verdict(&sb, a);
    md_steps_table(&sb, a);
    md_plan(&sb, a);
    md_baseline(&sb, a);
    md_path(&sb, a);
    md_physical(&sb, a);
    md_launch(&sb, a);
    md_compare(&sb, a);
    md_owners(&sb, a);
    tbm_sb_printf(&sb, "## Reproduce\n\n");
    for (i = 0; i < TBM_ACCEPT_STEPS; i++)
        if (a->step[i].jobs[0]) {
            tbm_sb_printf(&sb, "- step %d: `sacct -j %s`, and `tbmesh repro show JOBID` for each\n", i + 1,
                          a->step[i].jobs);
            any = 1;
        }
    if (!any)
        tbm_sb_printf(&sb, "- no Slurm job ran\n");
    if (a->command[0]) {
        tbm_sb_printf(&sb, "- the whole run again: `");
        md_text(&sb, a->command);
        tbm_sb_printf(&sb, "`\n");
    }
    return tbm_sb_take(&sb);
}

/* ---- JSON ---- */

/* The JSON record being built. An allocation that fails, or a value that cannot be written, marks it: it is
 * then dropped whole with a message rather than written with holes. */
typedef struct jw {
    tbm_err_t *err;
    int oom;   /* a json-c allocation failed */
    int bad;   /* a value of the record is not what it should be: err says which */
} jw_t;

/* Put v under key in o. A NULL v (its allocation failed), a NULL o or a failed addition marks the record out
 * of memory, and v is freed. */
static void j_put(jw_t *w, json_object *o, const char *key, json_object *v)
{
    if (!v || !o || json_object_object_add(o, key, v) < 0) {
        json_object_put(v);
        w->oom = 1;
    }
}

/* A JSON null under key. */
static void j_null(jw_t *w, json_object *o, const char *key)
{
    if (!o || json_object_object_add(o, key, NULL) < 0)
        w->oom = 1;
}

/* A number under key when known, else null. */
static void j_double_if(jw_t *w, json_object *o, const char *key, int known, double v)
{
    if (known)
        j_put(w, o, key, json_object_new_double(v));
    else
        j_null(w, o, key);
}

/* Append v to the array arr, as j_put. */
static void j_append(jw_t *w, json_object *arr, json_object *v)
{
    if (!v || !arr || json_object_array_add(arr, v) < 0) {
        json_object_put(v);
        w->oom = 1;
    }
}

/* Step `step`'s Slurm job ids, "123,124", as an array of numbers. */
static json_object *j_jobs(jw_t *w, int step, const char *jobs)
{
    json_object *arr = json_object_new_array();
    const char *list = jobs, *id;
    long long v;
    size_t n;

    while ((id = tbm_list_next(&list, ",", &n))) {
        if (tbm_parse_ll_span(id, n, 10, 1, UINT32_MAX, &v) < 0) {
            if (!w->bad)
                tbm_errprintf(w->err, "step %d's Slurm jobs \"%s\": \"%.*s\" is not a Slurm job id (a whole number "
                              "from 1 to %u): give the ids separated by commas, e.g. \"123,124\"", step, jobs,
                              (int)n, id, UINT32_MAX);
            w->bad = 1;
            break;
        }
        j_append(w, arr, json_object_new_int64(v));
    }
    return arr;
}

static json_object *j_sweep(jw_t *w, const tbm_accept_sweep_t *s)
{
    json_object *o = json_object_new_object(), *rows = json_object_new_array(), *r;
    size_t i;

    j_put(w, o, "ran", json_object_new_boolean(s->ran));
    j_put(w, o, "ranks", json_object_new_int(s->ranks));
    j_put(w, o, "wrong_total", json_object_new_int64(s->wrong_total));
    for (i = 0; i < s->n; i++) {
        r = json_object_new_object();
        j_put(w, r, "size_bytes", json_object_new_int64((int64_t)s->bytes[i]));
        j_put(w, r, "time_us", json_object_new_double(s->time_us[i]));
        j_put(w, r, "busbw_gbs", json_object_new_double(s->busbw[i]));
        j_append(w, rows, r);
    }
    j_put(w, o, "sizes", rows);
    return o;
}

static json_object *j_refwork(jw_t *w, const tbm_accept_refwork_t *rw)
{
    json_object *o = json_object_new_object();

    j_put(w, o, "ran", json_object_new_boolean(rw->ran));
    j_put(w, o, "ranks", json_object_new_int(rw->ranks));
    j_put(w, o, "seconds", json_object_new_double(rw->seconds));
    j_put(w, o, "sha256", json_object_new_string(rw->sha256));
    return o;
}

static json_object *j_plan(jw_t *w, const tbm_accept_plan_t *p)
{
    json_object *o = json_object_new_object();

    j_put(w, o, "present", json_object_new_boolean(p->present));
    j_put(w, o, "file", json_object_new_string(p->present ? p->file : ""));
    j_put(w, o, "task", json_object_new_string(p->task));
    j_put(w, o, "model", json_object_new_string(p->model));
    j_put(w, o, "data", json_object_new_string(p->data));
    j_put(w, o, "expected_output", json_object_new_string(p->expected));
    j_put(w, o, "backend", json_object_new_string(tbm_backend_name(p->backend)));
    if (p->bitwise)
        j_put(w, o, "tolerance", json_object_new_string("bitwise"));
    else
        j_null(w, o, "tolerance");
    if (!p->bitwise) {
        j_put(w, o, "rtol", json_object_new_double(p->rtol));
        j_put(w, o, "atol", json_object_new_double(p->atol));
    }
    j_put(w, o, "link_share", json_object_new_double(p->link_share));
    j_put(w, o, "busbw_share", json_object_new_double(p->busbw_share));
    return o;
}

static json_object *j_path(jw_t *w, const tbm_accept_t *a)
{
    json_object *o = json_object_new_object(), *why = json_object_new_object();
    char list[64];
    int b;

    tbm_backends_format(a->possible, list, sizeof(list));
    j_put(w, o, "topology", json_object_new_string(tbm_topo_class_name(a->caps.topology)));
    j_put(w, o, "link", json_object_new_string(tbm_link_name(a->link)));
    j_put(w, o, "rdma", json_object_new_boolean(a->caps.rdma));
    j_put(w, o, "possible", json_object_new_string(list));
    j_put(w, o, "asked", json_object_new_string(tbm_backend_name(a->plan.backend)));
    j_put(w, o, "run", json_object_new_string(a->chosen == TBM_BACKEND_AUTO ? "none" : tbm_backend_name(a->chosen)));
    for (b = 0; b < TBM_BACKEND_COUNT; b++)
        if (!((a->possible >> b) & 1))
            j_put(w, why, tbm_backend_name((tbm_backend_t)b), json_object_new_string(a->why_not[b]));
    j_put(w, o, "why_not", why);
    return o;
}

static json_object *j_cables(jw_t *w, const tbm_accept_t *a)
{
    json_object *arr = json_object_new_array(), *o;
    size_t i;

    for (i = 0; i < a->n_cables; i++) {
        const tbm_accept_cable_t *c = &a->cables[i];
        o = json_object_new_object();
        j_put(w, o, "end_a", json_object_new_string(c->end[0]));
        j_put(w, o, "end_b", json_object_new_string(c->end[1]));
        j_put(w, o, "speed_gbps", json_object_new_int(c->speed_gbps));
        j_put(w, o, "measured", json_object_new_boolean(c->measured));
        j_double_if(w, o, "a_to_b_gbs", c->measured, c->gbs[0]);
        j_double_if(w, o, "b_to_a_gbs", c->measured, c->gbs[1]);
        j_double_if(w, o, "share", c->share >= 0, c->share);
        j_put(w, o, "wrong", json_object_new_int64(c->wrong));
        j_append(w, arr, o);
    }
    return arr;
}

static json_object *j_compare(jw_t *w, const tbm_accept_t *a)
{
    json_object *o = json_object_new_object();

    j_put(w, o, "refwork_compared", json_object_new_boolean(a->compared));
    j_put(w, o, "refwork_bitwise", json_object_new_boolean(a->compared && a->diff.bitwise));
    j_put(w, o, "refwork_values_differ", json_object_new_int64((int64_t)a->diff.n_differ));
    j_put(w, o, "refwork_beyond_tolerance", json_object_new_int64((int64_t)a->diff.n_beyond));
    j_put(w, o, "refwork_max_abs", json_object_new_double(a->diff.max_abs));
    j_double_if(w, o, "slowest_cable_gbs", a->slowest_gbs > 0, a->slowest_gbs);
    j_double_if(w, o, "busbw_gbs", a->busbw_gbs >= 0, a->busbw_gbs);
    j_double_if(w, o, "busbw_share", a->busbw_share >= 0, a->busbw_share);
    return o;
}

static json_object *j_steps(jw_t *w, const tbm_accept_t *a)
{
    json_object *arr = json_object_new_array(), *o;
    int i;

    for (i = 0; i < TBM_ACCEPT_STEPS; i++) {
        o = json_object_new_object();
        j_put(w, o, "step", json_object_new_int(i + 1));
        j_put(w, o, "title", json_object_new_string(tbm_accept_step_title(i + 1)));
        j_put(w, o, "state", json_object_new_string(tbm_step_state_name(a->step[i].state)));
        j_put(w, o, "ran", json_object_new_boolean(a->step[i].state != TBM_STEP_NOT_RUN));
        j_put(w, o, "jobs", j_jobs(w, i + 1, a->step[i].jobs));
        j_put(w, o, "summary", json_object_new_string(a->step[i].summary));
        j_put(w, o, "findings", tbm_findings_json(&a->step[i].findings));
        j_append(w, arr, o);
    }
    return arr;
}

/* The group, the run's times, the verdict and what kept the group from each higher level. */
static void j_head(jw_t *w, json_object *root, const tbm_accept_t *a)
{
    json_object *kept = json_object_new_object();
    char t[32];
    int l;

    j_put(w, root, "tbmesh_accept", json_object_new_int(1));
    j_put(w, root, "group", json_object_new_string(a->group));
    j_put(w, root, "nodes", json_object_new_string(a->nodes));
    j_put(w, root, "macs", json_object_new_int(a->n_macs));
    j_put(w, root, "cluster", json_object_new_string(a->cluster));
    j_put(w, root, "command", json_object_new_string(a->command));
    iso_time(a->started, t, sizeof(t));
    j_put(w, root, "started", json_object_new_string(t));
    iso_time(a->ended, t, sizeof(t));
    j_put(w, root, "ended", json_object_new_string(t));
    j_put(w, root, "level", json_object_new_string(tbm_accept_level_key(a->level)));
    j_put(w, root, "verdict", json_object_new_string(tbm_accept_level_name(a->level)));
    j_put(w, root, "exit_status", json_object_new_int(tbm_accept_exit_status(a->level)));
    for (l = (int)a->level + 1; l < TBM_ACCEPT_LEVELS; l++)
        j_put(w, kept, tbm_accept_level_key((tbm_accept_level_t)l), tbm_findings_json(&a->kept[l]));
    j_put(w, root, "kept_from", kept);
}

static json_object *j_owners(jw_t *w, const tbm_accept_t *a)
{
    json_object *o = json_object_new_object();
    int r;

    for (r = 0; r < TBM_OWNER_ROLES; r++)
        j_put(w, o, tbm_owner_key((tbm_owner_role_t)r), json_object_new_string(a->owner[r]));
    return o;
}

char *tbm_accept_write_json(const tbm_accept_t *a, tbm_err_t *err)
{
    json_object *root = json_object_new_object();
    jw_t w = { err, 0, 0 };
    const char *json;
    char *text = NULL;

    j_head(&w, root, a);
    j_put(&w, root, "steps", j_steps(&w, a));
    j_put(&w, root, "plan", j_plan(&w, &a->plan));
    j_put(&w, root, "baseline_mac", json_object_new_string(a->base_mac));
    j_put(&w, root, "baseline_refwork", j_refwork(&w, &a->base_rw));
    j_put(&w, root, "baseline_sweep", j_sweep(&w, &a->base_sweep));
    j_put(&w, root, "path", j_path(&w, a));
    j_put(&w, root, "macs_checked", json_object_new_int(a->macs_checked));
    j_put(&w, root, "macs_healthy", json_object_new_int(a->macs_healthy));
    j_put(&w, root, "env_ranks", json_object_new_int(a->env_ranks));
    j_put(&w, root, "env_ok", json_object_new_int(a->env_ok));
    j_put(&w, root, "cables", j_cables(&w, a));
    j_put(&w, root, "mesh_refwork", j_refwork(&w, &a->mesh_rw));
    j_put(&w, root, "mesh_sweep", j_sweep(&w, &a->mesh_sweep));
    j_put(&w, root, "compare", j_compare(&w, a));
    j_put(&w, root, "owners", j_owners(&w, a));
    if (!w.oom && !w.bad) {
        json = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!json || !(text = strdup(json)))
            w.oom = 1;
    }
    json_object_put(root);
    if (w.oom && !w.bad)
        tbm_errprintf(err, "out of memory while writing the acceptance report as JSON: free some memory and "
                      "write it again");
    return text;
}

char *tbm_accept_json(const tbm_accept_t *a)
{
    return tbm_accept_write_json(a, NULL);
}
