/* time_inventory.c: times the whole inventory of a lab from raw macOS outputs: every Mac's outputs parsed
 * (system_profiler JSON, networksetup, ifconfig, ibv_devices, rdma_ctl, sw_vers, sysctl), the topology built
 * and validated, tbmesh.conf made. Usage: time_inventory DIR (DIR/<mac>/replay/, as tbmlab-gen writes them).
 * The files are read once before timing; target for 64 Macs: under 50 ms. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbmesh.h"
#include "parse_text.h"
#include "timing.h"

#define MAX_MACS 1024
#define ROUNDS 50

typedef struct mac {
    char name[TBM_HOST_MAX];
    char *buf[16];
    tbm_raw_outputs_t raw;
} mac_t;

static int load(const char *dir, const char *name, mac_t *m)
{
    char path[4096];
    tbm_err_t err = { { 0 } };
    size_t i, len;

    snprintf(m->name, sizeof(m->name), "%s", name);
    m->raw.hostname = m->name;
    for (i = 0; i < tbm_raw_nsources; i++) {
        snprintf(path, sizeof(path), "%s/%s/replay/%s", dir, name, tbm_raw_sources[i].file);
        m->buf[i] = tbm_read_file(path, TBM_RAW_MAX, &len, &err);
        if (!m->buf[i])
            return fprintf(stderr, "time_inventory: %s\n", err.msg), -1;
        tbm_raw_slot(&m->raw, i)->data = m->buf[i];
        tbm_raw_slot(&m->raw, i)->len = len;
    }
    return 0;
}

/* One inventory; returns the number of error findings (parse and validation), or -1. */
static int one_pass(mac_t *macs, size_t n, tbm_host_facts_t *facts)
{
    tbm_findings_t fs;
    tbm_topology_t t;
    tbm_validation_t v;
    tbm_conf_t c;
    tbm_err_t err = { { 0 } };
    size_t i;
    int errors = 0;

    tbm_findings_init(&fs);
    for (i = 0; i < n; i++) {
        errors += tbm_facts_parse_all(&macs[i].raw, &facts[i], &fs);
        snprintf(facts[i].hostname, sizeof(facts[i].hostname), "%.*s", (int)sizeof(facts[i].hostname) - 1, macs[i].name);
    }
    tbm_findings_free(&fs);
    if (tbm_topology_build(&t, facts, n, &err) < 0)
        return -1;
    if (tbm_validate(&t, &v, &err) == 0) {
        errors += (int)tbm_findings_count(&v.findings, TBM_SEV_ERROR);
        if (tbm_conf_from_topology(&t, &v, NULL, &c, &err) == 0)
            tbm_conf_free(&c);
        else
            errors = -1;
        tbm_validation_free(&v);
    } else {
        errors = -1;
    }
    tbm_topology_free(&t);
    return errors;
}

int main(int argc, char **argv)
{
    static mac_t macs[MAX_MACS];
    tbm_host_facts_t *facts;
    double t[ROUNDS], t0;
    struct dirent *de;
    size_t n = 0, i, k;
    DIR *d;
    int errors = 0;

    if (argc != 2 || !(d = opendir(argv[1]))) {
        fprintf(stderr, "usage: time_inventory DIR   (DIR/<mac>/replay/ from `tbmlab-gen outputs`)\n");
        return 2;
    }
    while ((de = readdir(d)) && n < MAX_MACS)
        if (de->d_name[0] != '.' && load(argv[1], de->d_name, &macs[n]) == 0)
            n++;
    closedir(d);
    facts = calloc(n ? n : 1, sizeof(*facts));
    for (i = 0; i < ROUNDS; i++) {
        t0 = timing_now_ms();
        errors = one_pass(macs, n, facts);
        t[i] = timing_now_ms() - t0;
    }
    timing_sort(t, ROUNDS);
    printf("time_inventory: %zu Macs from raw macOS outputs (parse + topology + validation + tbmesh.conf), "
           "%d rounds: median %.2f ms, p95 %.2f ms, max %.2f ms; %d errors found; target < 50 ms\n",
           n, ROUNDS, t[ROUNDS / 2], t[ROUNDS * 95 / 100], t[ROUNDS - 1], errors);
    for (i = 0; i < n; i++)
        for (k = 0; k < 16; k++)
            free(macs[i].buf[k]);
    free(facts);
    return errors == 0 ? 0 : 1;
}
