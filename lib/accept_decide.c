/* accept_decide.c: the verdict of an acceptance run (the rules are written out in tbmesh-accept(1), THE
 * VERDICT): steps 1, 3, 6 and 7 judged from what the run found, then the level, lowest first, with every
 * reason that kept the group from each higher level and what to do about it. */
#include "accept.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const conf_fix_fmt = "set %s= in tbmesh.conf, globally or on the line Group=%s; see tbmesh.conf(5)";

/* A finding of step `step` that keeps the group from `level` too. */
static void block(tbm_accept_t *a, tbm_accept_level_t level, int step, const char *code, const char *where,
                  const char *fix, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void block(tbm_accept_t *a, tbm_accept_level_t level, int step, const char *code, const char *where,
                  const char *fix, const char *fmt, ...)
{
    char what[TBM_FINDING_TEXT_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tbm_accept_step_add(a, step, TBM_SEV_ERROR, code, where, fix, "%s", what);
    tbm_finding_add(&a->kept[level], TBM_SEV_ERROR, code, where, fix, "step %d: %s", step, what);
}

/* What the command found in step `step` that keeps the group from `level`: the step's errors, or, when it has
 * none and did not pass, its summary. */
static void keep_step(tbm_accept_t *a, tbm_accept_level_t level, int step, const char *fix)
{
    const tbm_accept_step_t *s = &a->step[step - 1];
    size_t i, n = 0;

    for (i = 0; i < s->findings.n; i++) {
        const tbm_finding_t *f = &s->findings.items[i];
        if (f->severity < TBM_SEV_ERROR)
            continue;
        tbm_finding_add(&a->kept[level], TBM_SEV_ERROR, f->code, f->where, f->fix, "step %d: %s", step, f->what);
        n++;
    }
    if (n == 0 && s->state != TBM_STEP_PASSED)
        tbm_finding_add(&a->kept[level], TBM_SEV_ERROR, "step-not-passed", a->group, fix, "step %d (%s) %s%s%s", step,
                        tbm_accept_step_title(step), s->state == TBM_STEP_NOT_RUN ? "did not run" : "did not pass",
                        s->summary[0] ? ": " : "", s->summary);
}

/* ---- step 1: the task ---- */

static void judge_plan(tbm_accept_t *a)
{
    static const char *const field[] = { "task", "model", "data", "expected_output" };
    const char *val[] = { a->plan.task, a->plan.model, a->plan.data, a->plan.expected };
    char fix[TBM_FINDING_TEXT_MAX];
    size_t i, missing = 0;

    a->step[0].state = TBM_STEP_PASSED;
    if (!a->plan.present) {
        block(a, TBM_ACCEPT_PLANNABLE, 1, "plan-missing", a->group,
              "write the task, model, data and expected output in a plan file (tbmesh-accept(1), PLAN FILE) and "
              "give it with --plan FILE",
              "no acceptance plan: the run used the default checks, for no stated task");
        snprintf(a->step[0].summary, sizeof(a->step[0].summary), "no plan: default checks");
        a->step[0].state = TBM_STEP_FINDINGS;
        return;
    }
    for (i = 0; i < 4; i++) {
        if (val[i][0])
            continue;
        snprintf(fix, sizeof(fix), "add a line `%s = ...` to %s", field[i], a->plan.file);
        block(a, TBM_ACCEPT_PLANNABLE, 1, "plan-incomplete", a->plan.file, fix, "the plan does not say the %s",
              field[i]);
        missing++;
    }
    snprintf(a->step[0].summary, sizeof(a->step[0].summary), "plan %.200s%s", a->plan.file,
             missing ? ": incomplete" : "");
    if (missing)
        a->step[0].state = TBM_STEP_FINDINGS;
}

/* ---- step 3: the distributed path ---- */

void tbm_accept_choose_backend(tbm_accept_t *a)
{
    static const tbm_backend_t order[] = { TBM_BACKEND_JACCL, TBM_BACKEND_JACCL_RING, TBM_BACKEND_RING,
                                           TBM_BACKEND_MPI };
    tbm_err_t why;
    size_t i;
    int b;

    a->possible = 0;
    for (b = 0; b < TBM_BACKEND_COUNT; b++) {
        tbm_errclear(&why);
        if (a->n_macs > 1 && tbm_group_supports(&a->caps, (tbm_backend_t)b, (size_t)a->n_macs, &why))
            a->possible |= TBM_BACKEND_BIT(b);
        else if (!a->why_not[b][0])
            snprintf(a->why_not[b], sizeof(a->why_not[b]), "%.300s",
                     a->n_macs < 2 ? "a group of one Mac has no distributed path" : why.msg);
    }
    if (a->plan.backend != TBM_BACKEND_AUTO && (a->possible & TBM_BACKEND_BIT(a->plan.backend))) {
        a->chosen = a->plan.backend;
        return;
    }
    a->chosen = TBM_BACKEND_AUTO;
    for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (a->possible & TBM_BACKEND_BIT(order[i])) {
            a->chosen = order[i];
            return;
        }
}

static void judge_path(tbm_accept_t *a)
{
    char list[64], fix[TBM_FINDING_TEXT_MAX];
    tbm_accept_step_t *s = &a->step[2];

    tbm_accept_choose_backend(a);
    tbm_backends_format(a->possible, list, sizeof(list));
    s->state = TBM_STEP_PASSED;
    if (!a->possible) {
        block(a, TBM_ACCEPT_PROTOTYPE, 3, "no-backend", a->group,
              "cable the group as a full mesh (at most 8 Macs) or a ring, then run tbmesh inventory",
              "no backend can run on all %d Macs of %s", a->n_macs, a->group);
        s->state = TBM_STEP_FINDINGS;
    } else if (a->plan.backend != TBM_BACKEND_AUTO && a->chosen != a->plan.backend) {
        snprintf(fix, sizeof(fix), "%s; or, if the task can do with it, write backend = %s in the plan (the group "
                 "can run %s)",
                 a->plan.backend == TBM_BACKEND_JACCL || a->plan.backend == TBM_BACKEND_JACCL_RING
                     ? "JACCL needs Thunderbolt 5 on every cable, RDMA enabled (rdma_ctl enable, from Recovery) and "
                       "macOS 26.2 or later"
                     : "see tbmesh inventory's report for the group",
                 tbm_backend_name(a->chosen), list);
        block(a, TBM_ACCEPT_PLANNABLE, 3, "backend-not-possible", a->group, fix,
              "the plan asks for %s, which %s cannot run: %s", tbm_backend_name(a->plan.backend), a->group,
              a->why_not[a->plan.backend]);
        s->state = TBM_STEP_FINDINGS;
    }
    snprintf(s->summary, sizeof(s->summary), "possible: %s; asked: %s; run: %s", list,
             tbm_backend_name(a->plan.backend), a->chosen == TBM_BACKEND_AUTO ? "none" : tbm_backend_name(a->chosen));
}

/* ---- step 6: compare ---- */

static void compare_refwork(tbm_accept_t *a)
{
    double rtol = a->plan.bitwise ? 0 : a->plan.rtol, atol = a->plan.bitwise ? 0 : a->plan.atol;
    const char *fix = "run macnode refwork on one Mac and under srun in the group and compare them with macnode "
                      "refwork --compare; a difference beyond float32 reordering points at a rank or a link that "
                      "corrupts data";
    tbm_err_t err = { { 0 } };

    a->compared = 0;
    if (!a->base_rw.ran || !a->mesh_rw.ran) {
        block(a, TBM_ACCEPT_PROTOTYPE, 6, "refwork-missing", a->group, "see steps 2 and 5",
              "the reference workload's %s result is missing: nothing to compare",
              !a->base_rw.ran ? "single-Mac" : "mesh");
        return;
    }
    if (tbm_accept_refwork_compare(&a->base_rw, &a->mesh_rw, rtol, atol, &a->diff, &err) < 0) {
        block(a, TBM_ACCEPT_PROTOTYPE, 6, "refwork-uncompared", a->group, fix, "%s", err.msg);
        return;
    }
    a->compared = 1;
    if (a->diff.bitwise)
        return;
    if (a->diff.nonfinite || a->diff.n_beyond > 0 || a->plan.bitwise)
        block(a, TBM_ACCEPT_PROTOTYPE, 6, "refwork-different", a->group, fix,
              "the mesh's output differs from the single Mac's: %zu values beyond the tolerance (%s), largest "
              "difference %.3g at %zu", a->diff.n_beyond, a->plan.bitwise ? "bitwise" : "rtol, atol",
              a->diff.max_abs, a->diff.where);
    else
        tbm_accept_step_add(a, 6, TBM_SEV_INFO, "refwork-within", a->group, "",
                            "the mesh's output is within the tolerance of the single Mac's (%zu values differ, "
                            "largest difference %.3g)", a->diff.n_differ, a->diff.max_abs);
}

static void compare_cables(tbm_accept_t *a)
{
    char where[TBM_FINDING_WHERE_MAX], fix[TBM_FINDING_TEXT_MAX];
    size_t i;

    a->slowest_gbs = -1;
    for (i = 0; i < a->n_cables; i++) {
        tbm_accept_cable_t *c = &a->cables[i];
        double slow = c->gbs[0] < c->gbs[1] ? c->gbs[0] : c->gbs[1];
        snprintf(where, sizeof(where), "%s <-> %s", c->end[0], c->end[1]);
        c->share = -1;
        if (!c->measured) {
            block(a, TBM_ACCEPT_PLANNABLE, 6, "cable-unmeasured", where,
                  "check the cable (tbmesh inventory, macnode check) and run the acceptance again",
                  "the group's job did not measure this cable");
            continue;
        }
        if (a->slowest_gbs < 0 || slow < a->slowest_gbs)
            a->slowest_gbs = slow;
        if (c->wrong)
            block(a, TBM_ACCEPT_PROTOTYPE, 6, "cable-wrong", where, "replace the cable, then run the acceptance again",
                  "%ld wrong values came over this cable", c->wrong);
        if (c->speed_gbps <= 0)
            continue;
        c->share = slow / (c->speed_gbps / 8.0);
        snprintf(fix, sizeof(fix), "reseat or replace the cable, use a port that gives %d Gb/s, or lower "
                 "link_share in the plan if the rate is enough for the task", c->speed_gbps);
        if (c->share < a->plan.link_share)
            block(a, TBM_ACCEPT_PLANNABLE, 6, "cable-slow", where, fix,
                  "%.3f GB/s the slower way, %.0f%% of its %d Gb/s (the plan asks for %.0f%%)", slow,
                  100 * c->share, c->speed_gbps, 100 * a->plan.link_share);
    }
}

static void compare_busbw(tbm_accept_t *a)
{
    const tbm_accept_sweep_t *s = &a->mesh_sweep;

    a->busbw_share = -1;
    a->busbw_gbs = s->n ? s->busbw[s->n - 1] : -1;
    if (!s->ran) {
        block(a, TBM_ACCEPT_PROTOTYPE, 6, "allreduce-missing", a->group, "see step 5",
              "no all-reduce sweep of the group to compare");
        return;
    }
    if (s->wrong_total)
        block(a, TBM_ACCEPT_PROTOTYPE, 6, "allreduce-wrong", a->group,
              "run macnode bench in the group by hand and find the rank that sums wrong (macnode check on each Mac)",
              "the all-reduce sweep got %ld wrong values", s->wrong_total);
    if (a->slowest_gbs <= 0)
        return;
    a->busbw_share = a->busbw_gbs / a->slowest_gbs;
    if (a->busbw_share < a->plan.busbw_share)
        block(a, TBM_ACCEPT_PLANNABLE, 6, "busbw-low", a->group,
              "look for a slow rank or link in the sweep (macnode bench -V), or lower busbw_share in the plan if "
              "the rate is enough for the task",
              "the all-reduce's busbw at %zu bytes is %.3f GB/s, %.0f%% of the slowest cable's %.3f GB/s (the plan "
              "asks for %.0f%%)", s->bytes[s->n - 1], a->busbw_gbs, 100 * a->busbw_share, a->slowest_gbs,
              100 * a->plan.busbw_share);
}

static void judge_compare(tbm_accept_t *a)
{
    tbm_accept_step_t *s = &a->step[5];

    if (a->step[4].state != TBM_STEP_PASSED && a->step[4].state != TBM_STEP_FINDINGS) {
        s->state = TBM_STEP_NOT_RUN;
        snprintf(s->summary, sizeof(s->summary), "needs step 5's measures, which did not come");
        return;
    }
    compare_refwork(a);
    compare_cables(a);
    compare_busbw(a);
    s->state = tbm_findings_count(&s->findings, TBM_SEV_ERROR) ? TBM_STEP_FINDINGS : TBM_STEP_PASSED;
    snprintf(s->summary, sizeof(s->summary), "refwork %s; slowest cable %.3f GB/s; busbw %.3f GB/s (%.0f%% of it)",
             !a->compared ? "not compared" : a->diff.bitwise ? "bitwise identical"
             : a->diff.n_beyond || a->diff.nonfinite ? "DIFFERENT" : "within tolerance",
             a->slowest_gbs > 0 ? a->slowest_gbs : 0, a->busbw_gbs > 0 ? a->busbw_gbs : 0,
             a->busbw_share > 0 ? 100 * a->busbw_share : 0);
}

/* ---- step 7: operations ---- */

static void judge_owners(tbm_accept_t *a)
{
    char fix[TBM_FINDING_TEXT_MAX];
    int r, missing = 0;

    for (r = 0; r < TBM_OWNER_ROLES; r++) {
        if (a->owner[r][0])
            continue;
        snprintf(fix, sizeof(fix), conf_fix_fmt, tbm_owner_key((tbm_owner_role_t)r), a->group);
        block(a, TBM_ACCEPT_PLANNABLE, 7, "owner-missing", "tbmesh.conf", fix, "no owner for %s",
              tbm_owner_duty((tbm_owner_role_t)r));
        missing++;
    }
    a->step[6].state = missing ? TBM_STEP_FINDINGS : TBM_STEP_PASSED;
    snprintf(a->step[6].summary, sizeof(a->step[6].summary), "%d of %d owners named", TBM_OWNER_ROLES - missing,
             TBM_OWNER_ROLES);
}

/* ---- the level ---- */

tbm_accept_level_t tbm_accept_decide(tbm_accept_t *a)
{
    int l, i;

    for (l = 0; l < TBM_ACCEPT_LEVELS; l++) {
        tbm_findings_free(&a->kept[l]);
        tbm_findings_init(&a->kept[l]);
    }
    /* the steps this function judges start afresh, so that deciding twice gives the same record */
    for (i = 0; i < TBM_ACCEPT_STEPS; i++)
        if (i == 0 || i == 2 || i == 5 || i == 6) {
            tbm_findings_free(&a->step[i].findings);
            tbm_findings_init(&a->step[i].findings);
        }
    judge_plan(a);
    keep_step(a, TBM_ACCEPT_PROTOTYPE, 2, "see step 2: one Mac of the group must run macnode refwork and macnode "
                                          "bench as a Slurm job");
    judge_path(a);
    keep_step(a, TBM_ACCEPT_PLANNABLE, 4, "see step 4: every Mac healthy and the cabling as tbmesh.conf says");
    keep_step(a, TBM_ACCEPT_PROTOTYPE, 5, "see step 5: the group's job must run on all its Macs through Slurm");
    judge_compare(a);
    judge_owners(a);
    a->level = a->kept[TBM_ACCEPT_PROTOTYPE].n ? TBM_ACCEPT_MACOS_ONLY
               : a->kept[TBM_ACCEPT_PLANNABLE].n ? TBM_ACCEPT_PROTOTYPE
                                                 : TBM_ACCEPT_PLANNABLE;
    return a->level;
}
