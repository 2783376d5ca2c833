/* accept.c: `tbmesh accept GROUP`, the staged acceptance run of a Mac group through Slurm (tbmesh-accept(1)).
 * Gathers what each step needs (tbmesh.conf, the plan, the Macs' facts and health through their agents,
 * Slurm's view of the Macs), runs steps 2 and 5 as Slurm jobs (accept_run.c), hands everything to lib/accept*
 * for the verdict, and writes the decision record in Markdown and JSON. */
#include "config.h"
#include "accept_main.h"
#include "accept_run.h"
#include "store.h"
#include "tbmesh.h"
#include "accept.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "scalar.h"

#define EXIT_USAGE   2
#define EXIT_NORUN   3
#define RUN_MINUTES  15          /* time limit of each step's job */
#define PROBE_SECONDS 60
#define FACTS_MAX_BYTES (4u << 20)

typedef struct acc {
    tbm_accept_t a;
    tbm_conf_t conf;
    const tbm_conf_group_t *grp;
    char conf_path[4096];
    const char *plan_path, *out_dir, *partition, *macnode, *group;
    char store_dir[4096];        /* RecordDir/CLUSTER */
    int json, wait_s, back_s;   /* --timeout, --wait-back */
    char unavailable[TBM_FINDING_TEXT_MAX];   /* Macs Slurm will not give: "mac01, mac02" */
    char unavailable_why[TBM_FINDING_TEXT_MAX];   /* Slurm's state and reason of the first of them */
} acc_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tbmesh accept GROUP [--plan FILE] [--conf FILE] [--out DIR] [--json] [--partition P]\n"
            "                           [--timeout S] [--wait-back S] [--macnode PATH]\n"
            "  The staged acceptance run of a Mac group, through Slurm: the task (the plan), a single-Mac baseline\n"
            "  (a job), the distributed path, the physical design (the Macs' facts and health through their\n"
            "  agents), the group's job (environment on every rank, every cable, an all-reduce sweep, the\n"
            "  reference workload), the comparison, and the operations owners from tbmesh.conf. Prints the\n"
            "  decision record and writes it as Markdown and JSON.\n"
            "  --plan FILE     the acceptance plan (tbmesh-accept(1), PLAN FILE); without it, a finding\n"
            "  --conf FILE     tbmesh.conf (default $TBMESH_CONF, else beside $SLURM_CONF)\n"
            "  --out DIR       where the record goes (default RecordDir/CLUSTER/accept)\n"
            "  --json          print the record as JSON instead of Markdown\n"
            "  --partition P   the partition of the jobs (default: tbmesh.conf's MacPartition)\n"
            "  --timeout S     how long a step's job may wait for its Macs (default 120)\n"
            "  --wait-back S   how long to wait for a Mac that is coming back (not yet up, rather than down:\n"
            "                  its slurmd not yet registered while its agent answers, or drained by slurm-tbmesh\n"
            "                  while its health check passes again); 0 waits for none (default 60)\n"
            "  --macnode PATH  the macnode command, here and on the Macs (default macnode, from PATH)\n"
            "  Exit: 0 plannable research resource, 10 prototype, 20 macOS compatibility only; 2 bad usage, an\n"
            "  unknown group or a bad plan; 3 tbmesh.conf unreadable or the record not written.\n");
}

/* ---- small helpers ---- */

/* The first line of s, for messages. */
static void first_line(const char *s, char *buf, size_t len)
{
    char *line;

    s = s ? s : "";
    while (*s == '\n')
        s++;
    line = strndup(s, strcspn(s, "\n"));
    tbm_text_fit(buf, len, line ? line : "");   /* a long one cut between words, marked */
    free(line);
}

/* True when `where` names the Mac `name` ("mac01", "mac01:en2 <-> mac02:en2", ...). */
static int names_mac(const char *where, const char *name)
{
    size_t n = strlen(name);
    const char *s;

    for (s = strstr(where, name); s; s = strstr(s + 1, name))
        if ((s == where || !isalnum((unsigned char)s[-1])) && !isalnum((unsigned char)s[n]))
            return 1;
    return 0;
}

static const tbm_conf_node_t *node_of(const acc_t *c, size_t i)
{
    return &c->conf.nodes[c->grp->nodes[i]];
}

/* ---- set-up: tbmesh.conf, the group, the plan ---- */

static int load_conf(acc_t *c)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text = tbm_read_file(c->conf_path, TBM_CONF_MAX_BYTES, &len, &err);

    if (!text)
        return fprintf(stderr, "tbmesh accept: %s (give the lab's tbmesh.conf with --conf FILE)\n", err.msg), -1;
    if (tbm_conf_parse(text, len, c->conf_path, &c->conf, NULL, &err) < 0) {
        free(text);
        return fprintf(stderr, "tbmesh accept: %s\n", err.msg), -1;
    }
    free(text);
    return 0;
}

static int find_group(acc_t *c, const char *name)
{
    char list[512] = "";
    size_t g, used = 0, i;
    char **names;

    c->grp = tbm_conf_group(&c->conf, name);
    if (!c->grp) {
        for (g = 0; g < c->conf.n_groups && used < sizeof(list); g++)
            used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", g ? ", " : "",
                                     c->conf.groups[g].caps.name);
        fprintf(stderr, "tbmesh accept: no group '%s' in %s; its groups: %s\n", name, c->conf_path,
                list[0] ? list : "none (run tbmesh inventory)");
        return -1;
    }
    snprintf(c->a.group, sizeof(c->a.group), "%s", c->grp->caps.name);
    c->a.n_macs = (int)c->grp->caps.n_nodes;
    c->a.caps = c->grp->caps;
    c->a.link = c->grp->link;
    names = calloc(c->grp->caps.n_nodes + 1, sizeof(*names));
    for (i = 0; names && i < c->grp->caps.n_nodes; i++)
        names[i] = (char *)node_of(c, i)->name;
    if (names) {
        char *hl = tbm_hostlist_compress(names, c->grp->caps.n_nodes);
        snprintf(c->a.nodes, sizeof(c->a.nodes), "%s", hl ? hl : "");
        free(hl);
    }
    free(names);
    for (i = 0; i < TBM_OWNER_ROLES; i++)
        snprintf(c->a.owner[i], sizeof(c->a.owner[i]), "%s", tbm_conf_owner(&c->conf, c->grp, (tbm_owner_role_t)i));
    return 0;
}

static int load_plan(acc_t *c)
{
    tbm_findings_t errors;
    tbm_err_t err = { { 0 } };
    size_t len, i;
    char *text;

    if (!c->plan_path)
        return 0;
    text = tbm_read_file(c->plan_path, TBM_ACCEPT_PLAN_MAX, &len, &err);
    if (!text)
        return fprintf(stderr, "tbmesh accept: --plan: %s (write one as tbmesh-accept(1), PLAN FILE shows, or "
                               "leave --plan out to run the default checks)\n", err.msg), -1;
    tbm_findings_init(&errors);
    if (tbm_accept_plan_parse(text, len, c->plan_path, &c->a.plan, &errors, &err) < 0) {
        for (i = 0; i < errors.n; i++)
            fprintf(stderr, "tbmesh accept: %s: %s: %s\n", errors.items[i].where, errors.items[i].what,
                    errors.items[i].fix);
        fprintf(stderr, "tbmesh accept: the plan %s was not used and nothing ran: fix the lines above\n",
                c->plan_path);
        tbm_findings_free(&errors);
        free(text);
        return -1;
    }
    tbm_findings_free(&errors);
    free(text);
    return 0;
}

/* ---- step 4: the physical design ---- */

/* Slurm's state and reason of a Mac: 0, or -1 (Slurm does not know it: a finding). */
static int read_state(acc_t *c, const char *name, char *state, size_t slen, char *reason, size_t rlen)
{
    char *argv[] = { "scontrol", "show", "node", "-o", (char *)name, NULL };
    const char *s, *r;
    accept_out_t o;

    state[0] = reason[0] = '\0';
    if (accept_run(argv, PROBE_SECONDS, &o) != 0) {
        first_line(o.err, reason, rlen);
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "mac-unknown", name, "check slurm.conf's node lines",
                            "Slurm does not know the Mac: %s", reason);
        accept_out_free(&o);
        return -1;
    }
    if ((s = strstr(o.out, "State=")))
        snprintf(state, slen, "%.*s", (int)strcspn(s + 6, " \n"), s + 6);
    if ((r = strstr(o.out, "Reason=")))
        snprintf(reason, rlen, "%.*s", (int)strcspn(r + 7, "\n["), r + 7);
    while (*reason && reason[strlen(reason) - 1] == ' ')
        reason[strlen(reason) - 1] = '\0';
    accept_out_free(&o);
    return 0;
}

static int unavailable(const char *state)
{
    return strstr(state, "DRAIN") || strstr(state, "DOWN") || strstr(state, "FAIL") || strstr(state, "NOT_RESPONDING");
}

/* Why an unavailable Mac is coming back rather than down (into why; 1), or 0: Slurm has it not responding
 * (its slurmd not yet registered, as after a reboot) while its agent answers, or slurm-tbmesh drained it and
 * its health check passes now (the link watcher or the next health check resumes it). An admin's drain, or a
 * Mac whose agent is silent, is down: no wait. */
static int coming_back(acc_t *c, const tbm_conf_node_t *n, const char *state, const char *reason, char *why,
                       size_t len)
{
    char agent[300];
    char *probe[] = { (char *)c->macnode, "probe", "--agent", agent, "--node", (char *)n->name, NULL };
    char *check[] = { (char *)c->macnode, "check", "--conf", c->conf_path, "--node", (char *)n->name, "--agent",
                      agent, NULL };
    accept_out_t o;
    int rc;

    tbm_conf_agent_of(&c->conf, (int)(n - c->conf.nodes), agent, sizeof(agent));
    if (strstr(state, "NOT_RESPONDING") || strchr(state, '*')) {
        rc = accept_run(probe, PROBE_SECONDS, &o);
        accept_out_free(&o);
        if (rc == 0 || rc == 1)
            return snprintf(why, len, "its slurmd had not registered yet while its agent answered"), 1;
        return 0;
    }
    if (strncmp(reason, "tbmesh: ", 8) || !strstr(state, "DRAIN"))
        return 0;
    rc = accept_run(check, PROBE_SECONDS, &o);
    accept_out_free(&o);
    if (rc == 0)
        return snprintf(why, len, "slurm-tbmesh had drained it and its health check passed again"), 1;
    return 0;
}

/* Slurm's state of a Mac: a Mac it will not give (drained, down) is a finding, and named for step 5. A Mac that
 * is coming back (not yet up, rather than down) is waited for, up to --wait-back seconds, and the record says so. */
static void slurm_state(acc_t *c, const tbm_conf_node_t *n)
{
    const char *name = n->name;
    char state[64], reason[200], why[160] = "";
    size_t used = strlen(c->unavailable);
    long long start = tbm_now_ms(), waited;
    int back;

    if (read_state(c, name, state, sizeof(state), reason, sizeof(reason)) < 0 || !unavailable(state))
        return;
    back = c->back_s > 0 && coming_back(c, n, state, reason, why, sizeof(why));
    if (back) {
        char first[64], first_reason[200];
        snprintf(first, sizeof(first), "%s", state);
        snprintf(first_reason, sizeof(first_reason), "%s", reason);
        while (unavailable(state) && tbm_now_ms() - start < (long long)c->back_s * 1000) {
            sleep(1);
            if (read_state(c, name, state, sizeof(state), reason, sizeof(reason)) < 0)
                return;
        }
        waited = (tbm_now_ms() - start + 500) / 1000;
        if (!unavailable(state)) {
            tbm_accept_step_add(&c->a, 4, TBM_SEV_INFO, "mac-came-back", name, "nothing to do",
                                "Slurm had the Mac %s: %s; it was coming back (%s) and was %s after %lld s of "
                                "waiting", first, first_reason[0] ? first_reason : "no reason given", why, state,
                                waited);
            return;
        }
    }
    waited = back ? (tbm_now_ms() - start + 500) / 1000 : 0;
    if (back)
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "mac-unavailable", name,
                            "look at the Mac's slurmd and the reason; run tbmesh accept again once Slurm has it idle",
                            "Slurm has the Mac %s: %s; not yet up: it seemed to be coming back (%s) but Slurm still "
                            "had it so after %lld s of waiting", state, reason[0] ? reason : "no reason given", why,
                            waited);
    else
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "mac-unavailable", name,
                            "repair what the reason names; slurm-tbmesh resumes a Mac it drained once it is well, "
                            "others: scontrol update NodeName=NAME State=RESUME",
                            "Slurm has the Mac %s: %s (down: not coming back by itself)", state,
                            reason[0] ? reason : "no reason given");
    snprintf(c->unavailable + used, sizeof(c->unavailable) - used, "%s%s", used ? ", " : "", name);
    if (!c->unavailable_why[0])
        snprintf(c->unavailable_why, sizeof(c->unavailable_why), "%s%s%s", state, reason[0] ? ": " : "", reason);
}

/* The Mac's facts through its agent into *f; 0, or -1 with a finding. */
static int mac_facts(acc_t *c, const tbm_conf_node_t *n, tbm_host_facts_t *f)
{
    char agent[300], line[200];
    char *argv[] = { (char *)c->macnode, "probe", "--agent", agent, "--node", (char *)n->name, NULL };
    tbm_err_t err = { { 0 } };
    accept_out_t o;
    int rc;

    tbm_conf_agent_of(&c->conf, (int)(n - c->conf.nodes), agent, sizeof(agent));
    rc = accept_run(argv, PROBE_SECONDS, &o);
    if ((rc != 0 && rc != 1) || tbm_facts_from_json(o.out, strlen(o.out), f, &err) < 0) {
        first_line(err.msg[0] ? err.msg : o.err, line, sizeof(line));
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "facts-missing", n->name,
                            "check that macnoded runs on the Mac and that this host reaches it (macnode probe --agent)",
                            "no facts from the Mac's agent at %s: %s", agent, line);
        accept_out_free(&o);
        return -1;
    }
    accept_out_free(&o);
    return 0;
}

static void mac_health(acc_t *c, const tbm_conf_node_t *n)
{
    char agent[300], line[240];
    char *argv[] = { (char *)c->macnode, "check", "--conf", c->conf_path, "--node", (char *)n->name,
                     "--agent", agent, NULL };
    accept_out_t o;
    int rc;

    tbm_conf_agent_of(&c->conf, (int)(n - c->conf.nodes), agent, sizeof(agent));
    rc = accept_run(argv, PROBE_SECONDS, &o);
    c->a.macs_checked++;
    first_line(o.err[0] ? o.err : o.out, line, sizeof(line));
    if (rc == 0)
        c->a.macs_healthy++;
    else
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, rc == 1 ? "mac-unhealthy" : "health-unknown", n->name,
                            "run macnode check on the Mac and repair what it names",
                            "the health check %s: %s", rc == 1 ? "failed" : "could not run", line);
    accept_out_free(&o);
}

/* The inventory of the group's Macs now: its findings that name them, and the live verdict for step 3. */
static void live_inventory(acc_t *c, tbm_host_facts_t *facts, size_t n)
{
    tbm_topology_t topo;
    tbm_validation_t val;
    tbm_conf_t live;
    tbm_err_t err = { { 0 } };
    size_t i, m;
    int h = -1, b;

    memset(&topo, 0, sizeof(topo));
    memset(&val, 0, sizeof(val));
    tbm_conf_init(&live);
    if (tbm_topology_build(&topo, facts, n, &err) < 0 || tbm_validate(&topo, &val, &err) < 0 ||
        tbm_conf_from_topology(&topo, &val, &c->conf, &live, &err) < 0) {
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "inventory-failed", c->a.group, "run tbmesh inventory by hand",
                            "the inventory of the group failed: %s", err.msg);
        goto out;
    }
    tbm_cables_diff(&c->conf, &live, &val.findings);
    for (i = 0; i < val.findings.n; i++) {
        const tbm_finding_t *f = &val.findings.items[i];
        for (m = 0; m < c->grp->caps.n_nodes; m++)
            if (f->severity >= TBM_SEV_WARNING && names_mac(f->where, node_of(c, m)->name)) {
                tbm_accept_step_add(&c->a, 4, f->severity, f->code, f->where, f->fix, "%s", f->what);
                break;
            }
    }
    for (i = 0; i < topo.n_hosts && h < 0; i++)
        if (!strcmp(tbm_topology_host_name(&topo, (int)i), node_of(c, 0)->name))
            h = topo.host_group[i];
    if (h < 0)
        goto out;
    if (topo.groups[h].n_hosts != c->grp->caps.n_nodes)
        tbm_accept_step_add(&c->a, 4, TBM_SEV_ERROR, "group-changed", c->a.group,
                            "run tbmesh inventory --last tbmesh.conf and repair the cabling it names",
                            "the cables now join %zu of the group's %zu Macs", topo.groups[h].n_hosts,
                            c->grp->caps.n_nodes);
    c->a.caps = val.groups[h].caps;
    snprintf(c->a.caps.name, sizeof(c->a.caps.name), "%s", c->a.group);
    c->a.link = val.groups[h].link;
    for (b = 0; b < TBM_BACKEND_COUNT; b++)
        if (val.groups[h].blocked & TBM_BACKEND_BIT(b))
            snprintf(c->a.why_not[b], sizeof(c->a.why_not[b]), "%s", val.groups[h].why[b]);
out:
    tbm_conf_free(&live);
    tbm_validation_free(&val);
    tbm_topology_free(&topo);
}

static void step_physical(acc_t *c)
{
    size_t n = c->grp->caps.n_nodes, i, got = 0;
    tbm_host_facts_t *facts = calloc(n, sizeof(*facts));
    tbm_accept_step_t *s = &c->a.step[3];

    for (i = 0; i < n; i++) {
        slurm_state(c, node_of(c, i));
        if (facts && mac_facts(c, node_of(c, i), &facts[got]) == 0)
            got++;
        mac_health(c, node_of(c, i));
    }
    if (got)
        live_inventory(c, facts, got);
    free(facts);
    s->state = got == 0 ? TBM_STEP_FAILED
               : tbm_findings_count(&s->findings, TBM_SEV_ERROR) ? TBM_STEP_FINDINGS : TBM_STEP_PASSED;
    snprintf(s->summary, sizeof(s->summary), "facts of %zu of %zu Macs, %d healthy; %zu errors, %zu warnings", got,
             n, c->a.macs_healthy, tbm_findings_count(&s->findings, TBM_SEV_ERROR),
             tbm_findings_count(&s->findings, TBM_SEV_WARNING) - tbm_findings_count(&s->findings, TBM_SEV_ERROR));
}

/* ---- steps 2 and 5: the jobs ---- */

/* The shell words of a rank's reference workload (lib/: a private folder for its output, never a fixed path in
 * /tmp); rank 0 prints its output as one base64 line. */
static void refwork_script(const acc_t *c, char *buf, size_t len)
{
    if (tbm_accept_refwork_script(&c->a.plan.refwork, c->macnode, buf, len) < 0)
        snprintf(buf, len, "echo \"tbmesh accept: --macnode is too long: give a shorter path\" >&2; exit 2");
}

/* One part of a job's script: CMD under srun, then its exit status on a line of its own. */
static size_t part(char *buf, size_t len, const char *name, const char *srun_args, const char *cmd)
{
    int n = snprintf(buf, len, "srun %s %s\necho \"tbmesh-accept-exit %s $?\"\n", srun_args, cmd, name);
    return n > 0 && (size_t)n < len ? (size_t)n : len;
}

/* Every part of a job that did not end with 0 becomes a finding of the step. */
static void part_failures(acc_t *c, int step, const accept_job_t *j)
{
    const char *s = j->o.out;
    char name[32], line[TBM_FINDING_TEXT_MAX];
    int code;

    first_line(strstr(j->o.err, "error") ? strstr(j->o.err, "error") : j->o.err, line, sizeof(line));
    while ((s = strstr(s, "tbmesh-accept-exit "))) {
        if (sscanf(s, "tbmesh-accept-exit %31s %d", name, &code) == 2 && code != 0)
            tbm_accept_step_add(&c->a, step, TBM_SEV_ERROR, "part-failed", c->a.group,
                                "see the job's output (sacct, and the error below); macnode check on its Macs",
                                "%s exited with %d in job %u%s%s", name, code, j->id, line[0] ? ": " : "", line);
        s++;
    }
}

/* A job that did not start: which Macs Slurm would not give and why, then salloc's own words (last: a finding's
 * text has a bound, and salloc's message can be long). A job refused at submit has no id. */
static void not_started(acc_t *c, int step, const accept_job_t *j, int macs)
{
    char why[TBM_FINDING_TEXT_MAX], who[64];
    tbm_accept_step_t *st = &c->a.step[step - 1];

    accept_job_error(j, why, sizeof(why));
    if (j->id) {
        snprintf(who, sizeof(who), "job %u did not get", j->id);
        snprintf(st->summary, sizeof(st->summary), "job %u did not start", j->id);
    } else {   /* no job was made: none is named */
        snprintf(who, sizeof(who), "the job was refused at submit: it got none of the");
        snprintf(st->summary, sizeof(st->summary), "the job was refused at submit (no job id)");
    }
    tbm_accept_step_add(&c->a, step, TBM_SEV_ERROR, "job-not-started", c->a.group,
                        "repair what step 4 names (Slurm gives a drained Mac to no job), then run tbmesh accept again",
                        "%s %d Mac%s of %s within %d s%s%s%s%s%s%s%s", who, macs, macs == 1 ? "" : "s",
                        c->a.group, c->wait_s, c->unavailable[0] ? "; Slurm will not give " : "", c->unavailable,
                        c->unavailable[0] ? " (the first: " : "", c->unavailable_why, c->unavailable[0] ? ")" : "",
                        why[0] ? "; salloc: " : "", why);
}

static void step_baseline(acc_t *c)
{
    char gres[96], rw[1024], rank[2048], script[4096], *opts[] = { gres, NULL };
    const char *h;
    tbm_accept_step_t *s = &c->a.step[1];
    tbm_err_t err = { { 0 } };
    accept_job_t j;
    size_t used;

    snprintf(gres, sizeof(gres), "--gres=tbmesh:%s:1", c->a.group);
    refwork_script(c, rw, sizeof(rw));
    snprintf(rank, sizeof(rank), "'echo \"tbmesh-accept-host $(hostname)\"; %s'", rw);
    used = part(script, sizeof(script), "refwork", "--ntasks=1 sh -c", rank);
    snprintf(rank, sizeof(rank), "%s bench -l 2 -b 8 -e %zu -f 4 -n 5 -w 2 -F csv", c->macnode, c->a.plan.sweep_max);
    part(script + used, sizeof(script) - used, "bench", "--ntasks=1", rank);
    accept_job_run("tbmesh-accept-baseline", c->partition, opts, script, c->wait_s, RUN_MINUTES, &j);
    tbm_accept_add_job(&c->a, 2, j.id);
    if (!j.started) {
        not_started(c, 2, &j, 1);
        s->state = TBM_STEP_FAILED;
        accept_out_free(&j.o);
        return;
    }
    if ((h = strstr(j.o.out, "tbmesh-accept-host ")))
        snprintf(c->a.base_mac, sizeof(c->a.base_mac), "%.*s", (int)strcspn(h + 19, "\n"), h + 19);
    part_failures(c, 2, &j);
    if (tbm_accept_parse_refwork(j.o.out, &c->a.base_rw, &err) < 0)
        tbm_accept_step_add(&c->a, 2, TBM_SEV_ERROR, "refwork-failed", c->a.base_mac, "see the job's output",
                            "%s", err.msg);
    if (tbm_accept_parse_sweep(j.o.out, &c->a.base_sweep, &err) < 0)
        tbm_accept_step_add(&c->a, 2, TBM_SEV_ERROR, "bench-failed", c->a.base_mac, "see the job's output",
                            "%s", err.msg);
    s->state = tbm_findings_count(&s->findings, TBM_SEV_ERROR) ? TBM_STEP_FINDINGS : TBM_STEP_PASSED;
    snprintf(s->summary, sizeof(s->summary), "job %u on %s: refwork %s, bench sweep %s", j.id,
             c->a.base_mac[0] ? c->a.base_mac : "?", c->a.base_rw.ran ? "ran" : "failed",
             c->a.base_sweep.ran ? "ran" : "failed");
    accept_out_free(&j.o);
}

/* The group's cables from tbmesh.conf, to be measured. */
static void plan_cables(acc_t *c)
{
    size_t i, g = (size_t)(c->grp - c->conf.groups);

    for (i = 0; i < c->conf.n_cables && c->a.n_cables < TBM_ACCEPT_CABLES_MAX; i++) {
        const tbm_conf_cable_t *cb = &c->conf.cables[i];
        tbm_accept_cable_t *ac = &c->a.cables[c->a.n_cables];
        int e;
        if (cb->group != (int)g)
            continue;
        memset(ac, 0, sizeof(*ac));
        for (e = 0; e < 2; e++)
            snprintf(ac->end[e], sizeof(ac->end[e]), "%s:%s", c->conf.nodes[cb->end[e].node].name, cb->end[e].iface);
        ac->speed_gbps = cb->speed_gbps;
        ac->share = -1;
        c->a.n_cables++;
    }
}

/* Each rank prints its MLX variables and the files they name, tagged with its rank and host. */
#define ENV_SCRIPT                                                                                              \
    "'h=$(hostname); r=${MLX_RANK:-${JACCL_RANK:-$SLURM_PROCID}}; "                                             \
    "echo \"" TBM_ACCEPT_ENV_TAG "$r $h TBMESH_ACCEPT=1\"; "                                                    \
    "env | grep -E \"^(MLX_|JACCL_)\" | while IFS= read -r l; do echo \"" TBM_ACCEPT_ENV_TAG "$r $h $l\"; done; " \
    "for v in MLX_HOSTFILE MLX_IBV_DEVICES; do eval \"f=\\${$v:-}\"; "                                          \
    "if [ -n \"$f\" ] && [ -r \"$f\" ]; then printf \"" TBM_ACCEPT_FILE_TAG "%s %s %s \" \"$r\" \"$h\" \"$v\"; "   \
    "tr -d \"\\n\" < \"$f\"; echo; fi; done'"

static void step_launch(acc_t *c)
{
    char gres[96], backend[64], rw[1024], cmd[2048], script[8192], *opts[] = { gres, backend, NULL };
    tbm_accept_step_t *s = &c->a.step[4];
    tbm_err_t err = { { 0 } };
    accept_job_t j;
    size_t used = 0;

    plan_cables(c);
    c->a.env_ranks = c->a.n_macs;
    if (c->a.chosen == TBM_BACKEND_AUTO) {
        snprintf(s->summary, sizeof(s->summary), "not run: no backend can run on the group (step 3)");
        return;
    }
    snprintf(gres, sizeof(gres), "--gres=tbmesh:%s:%d", c->a.group, c->a.n_macs);
    snprintf(backend, sizeof(backend), "--mlx-backend=%s", tbm_backend_name(c->a.chosen));
    used += part(script + used, sizeof(script) - used, "environment", "sh -c", ENV_SCRIPT);
    snprintf(cmd, sizeof(cmd), "%s bench -o p2p -b 8 -e %zu -n 3 -w 1 -L 20 -F csv", c->macnode, c->a.plan.p2p_bytes);
    used += part(script + used, sizeof(script) - used, "p2p", "", cmd);
    snprintf(cmd, sizeof(cmd), "%s bench -b 8 -e %zu -f 4 -n 5 -w 2 -F csv", c->macnode, c->a.plan.sweep_max);
    used += part(script + used, sizeof(script) - used, "all-reduce", "", cmd);
    refwork_script(c, rw, sizeof(rw));
    snprintf(cmd, sizeof(cmd), "'%s'", rw);
    part(script + used, sizeof(script) - used, "refwork", "sh -c", cmd);
    accept_job_run("tbmesh-accept-group", c->partition, opts, script, c->wait_s, RUN_MINUTES, &j);
    tbm_accept_add_job(&c->a, 5, j.id);
    if (!j.started) {
        not_started(c, 5, &j, c->a.n_macs);
        s->state = TBM_STEP_FAILED;
        accept_out_free(&j.o);
        return;
    }
    part_failures(c, 5, &j);
    c->a.env_ok = tbm_accept_check_env(j.o.out, c->a.chosen, c->a.n_macs, &s->findings);
    tbm_accept_parse_p2p(j.o.out, c->a.cables, c->a.n_cables, &s->findings);
    tbm_accept_parse_sweep(j.o.out, &c->a.mesh_sweep, &err);
    tbm_accept_parse_refwork(j.o.out, &c->a.mesh_rw, &err);
    s->state = tbm_findings_count(&s->findings, TBM_SEV_ERROR) ? TBM_STEP_FINDINGS : TBM_STEP_PASSED;
    snprintf(s->summary, sizeof(s->summary), "job %u, %s on %d Macs: environment right on %d of %d ranks", j.id,
             tbm_backend_name(c->a.chosen), c->a.n_macs, c->a.env_ok, c->a.env_ranks);
    accept_out_free(&j.o);
}

/* ---- the record ---- */

/* The record store's settings and Slurm's: the cluster's name, where its records go, and Slurm's munged (the
 * agents know callers by MUNGE), handed to the macnode commands this one runs. */
static int open_store(acc_t *c)
{
    tbm_store_t st;
    tbm_err_t err = { { 0 } };
    const char *sc = getenv("SLURM_CONF");

    if (tbm_store_open(&st, c->conf_path, sc && *sc ? sc : "/etc/slurm/slurm.conf", NULL, &err) < 0)
        return fprintf(stderr, "tbmesh accept: %s\n", err.msg), -1;
    snprintf(c->a.cluster, sizeof(c->a.cluster), "%s", st.cluster);
    snprintf(c->store_dir, sizeof(c->store_dir), "%s/%s", st.set.dir, st.cluster);
    if (st.munge_socket[0])
        setenv("TBMESH_MUNGE_SOCKET", st.munge_socket, 0);
    return 0;
}

static int record_dir(acc_t *c, char *dir, size_t len)
{
    char *slash;

    if (c->out_dir) {
        snprintf(dir, len, "%s", c->out_dir);
        return 0;
    }
    snprintf(dir, len, "%.4000s/accept", c->store_dir);
    for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            break;
        *slash = '/';
    }
    if (slash)
        *slash = '/';
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return fprintf(stderr, "tbmesh accept: cannot make %s: %s (run as root, or give --out DIR)\n", dir,
                       strerror(errno)), -1;
    return 0;
}

static int write_record(acc_t *c, const char *dir, const char *md, const char *json)
{
    char stamp[32], path[4200];
    tbm_err_t err = { { 0 } };

    tbm_utc_iso(c->a.started, TBM_UTC_BASIC, stamp, sizeof(stamp));
    snprintf(path, sizeof(path), "%s/%s-%s.md", dir, c->a.group, stamp);
    if (tbm_write_file_atomic(path, md, strlen(md), 0644, &err) < 0)
        return fprintf(stderr, "tbmesh accept: %s (give --out DIR to write it elsewhere)\n", err.msg), -1;
    snprintf(path, sizeof(path), "%s/%s-%s.json", dir, c->a.group, stamp);
    if (tbm_write_file_atomic(path, json, strlen(json), 0644, &err) < 0)
        return fprintf(stderr, "tbmesh accept: %s (give --out DIR to write it elsewhere)\n", err.msg), -1;
    fprintf(stderr, "tbmesh accept: %s: %s; the decision record is %s/%s-%s.md (and .json)\n", c->a.group,
            tbm_accept_level_name(c->a.level), dir, c->a.group, stamp);
    return 0;
}

/* ---- main ---- */

/* The command line, words with anything but [A-Za-z0-9/._=:,+-] single-quoted, for the record. */
static void command_line(acc_t *c, int argc, char **argv)
{
    char *cmd = c->a.command;
    size_t len = sizeof(c->a.command), used = (size_t)snprintf(cmd, len, "tbmesh");
    int i;

    for (i = 0; i < argc && used < len; i++) {
        const char *w = argv[i];
        int plain = *w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._=:,+-") ==
                             strlen(w) && !strchr(w, '\'');
        used += (size_t)snprintf(cmd + used, len - used, plain ? " %s" : " '%s'", w);
    }
}

static int parse_options(acc_t *c, int argc, char **argv)
{
    static const struct option opts[] = {
        { "plan", required_argument, NULL, 'p' },      { "conf", required_argument, NULL, 'c' },
        { "out", required_argument, NULL, 'o' },       { "json", no_argument, NULL, 'j' },
        { "partition", required_argument, NULL, 'P' }, { "timeout", required_argument, NULL, 't' },
        { "macnode", required_argument, NULL, 'm' },   { "help", no_argument, NULL, 'h' },
        { "wait-back", required_argument, NULL, 'b' },
        { NULL, 0, NULL, 0 },
    };
    const char *env = getenv("TBMESH_CONF");
    struct stat st;
    long long v;
    int o;

    optind = 1;
    while ((o = getopt_long(argc, argv, "p:c:o:jP:t:m:b:h", opts, NULL)) != -1) {
        switch (o) {
        case 'p': c->plan_path = optarg; break;
        case 'c': snprintf(c->conf_path, sizeof(c->conf_path), "%s", optarg); break;
        case 'o': c->out_dir = optarg; break;
        case 'j': c->json = 1; break;
        case 'P': c->partition = optarg; break;
        case 'm': c->macnode = optarg; break;
        case 't':
            if (tbm_parse_uint(optarg, 86400, &c->wait_s) < 0)
                return fprintf(stderr, "tbmesh accept: --timeout %s is not a number of seconds from 1 to 86400\n",
                               optarg), -1;
            break;
        case 'b':
            if (strlen(optarg) > 9 || tbm_parse_ll(optarg, 10, 0, 3600, &v) < 0)
                return fprintf(stderr, "tbmesh accept: --wait-back %s is not a number of seconds from 0 to 3600\n",
                               optarg), -1;
            c->back_s = (int)v;
            break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    if (optind != argc - 1)
        return fprintf(stderr, "tbmesh accept: name one group, e.g. tbmesh accept studio-a (see tbmesh accept "
                               "--help)\n"), -1;
    c->group = argv[optind];
    command_line(c, argc, argv);
    if (strspn(c->macnode, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+") != strlen(c->macnode))
        return fprintf(stderr, "tbmesh accept: --macnode %s: give a path of letters, digits and / . _ - +\n",
                       c->macnode), -1;
    if (c->out_dir && (stat(c->out_dir, &st) < 0 || !S_ISDIR(st.st_mode)))
        return fprintf(stderr, "tbmesh accept: --out %s is not a folder; create it first\n", c->out_dir), -1;
    if (!c->conf_path[0]) {
        if (env && *env)
            snprintf(c->conf_path, sizeof(c->conf_path), "%s", env);
        else
            tbm_conf_default_path(getenv("SLURM_CONF"), c->conf_path, sizeof(c->conf_path));
    }
    return 0;
}

int accept_main(int argc, char **argv)
{
    static acc_t c;
    char dir[4096], *md, *json;
    tbm_err_t err = { { 0 } };
    int rc;

    memset(&c, 0, sizeof(c));
    tbm_accept_init(&c.a);
    tbm_conf_init(&c.conf);
    c.macnode = getenv("TBMESH_MACNODE") && *getenv("TBMESH_MACNODE") ? getenv("TBMESH_MACNODE") : "macnode";
    c.wait_s = 120;
    c.back_s = 60;
    rc = EXIT_USAGE;
    if (parse_options(&c, argc, argv) < 0)
        goto out;
    rc = EXIT_NORUN;
    if (load_conf(&c) < 0 || open_store(&c) < 0)
        goto out;
    rc = EXIT_USAGE;
    if (find_group(&c, c.group) < 0 || load_plan(&c) < 0)
        goto out;
    if (!c.partition && c.conf.mac_partition[0])
        c.partition = c.conf.mac_partition;
    c.a.started = time(NULL);
    fprintf(stderr, "tbmesh accept: %s (%s): step 4, the Macs' facts and health\n", c.a.group, c.a.nodes);
    step_physical(&c);
    tbm_accept_choose_backend(&c.a);
    fprintf(stderr, "tbmesh accept: %s: step 2, the single-Mac baseline (a job)\n", c.a.group);
    step_baseline(&c);
    fprintf(stderr, "tbmesh accept: %s: step 5, the group's job (%s)\n", c.a.group,
            c.a.chosen == TBM_BACKEND_AUTO ? "no backend: not run" : tbm_backend_name(c.a.chosen));
    step_launch(&c);
    c.a.ended = time(NULL);
    tbm_accept_decide(&c.a);
    md = tbm_accept_markdown(&c.a);
    json = tbm_accept_write_json(&c.a, &err);
    if (!md || !json) {
        fprintf(stderr, "tbmesh accept: %s\n", !json && tbm_erris(&err) ? err.msg : "out of memory writing the record");
        rc = EXIT_NORUN;
    } else {
        fputs(c.json ? json : md, stdout);
        rc = record_dir(&c, dir, sizeof(dir)) < 0 || write_record(&c, dir, md, json) < 0
                 ? EXIT_NORUN : tbm_accept_exit_status(c.a.level);
    }
    free(md);
    free(json);
out:
    tbm_accept_free(&c.a);
    tbm_conf_free(&c.conf);
    return rc;
}
