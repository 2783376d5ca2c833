/* time_topology.c: times the inventory core on a 64-Mac lab (8 full meshes of 8, TB5 with RDMA):
 * topology from facts, validation, tbmesh.conf written and read back, slurm.conf lines. Target: < 50 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbm_labfacts.h"
#include "tbmesh.h"
#include "timing.h"

#define MACS 64
#define ROUNDS 200
#define TARGET_MS 50.0

/* One inventory pass; returns 0 when the lab came out fit and the file read back equal. */
static int one_pass(const tbm_host_facts_t *lab)
{
    tbm_topology_t t;
    tbm_validation_t v;
    tbm_conf_t c, back;
    tbm_err_t err = {{0}};
    char *text, *nodes;
    int rc = -1;

    if (tbm_topology_build(&t, lab, MACS, &err) < 0)
        return -1;
    if (tbm_validate(&t, &v, &err) == 0) {
        if (tbm_conf_from_topology(&t, &v, NULL, &c, &err) == 0) {
            text = tbm_conf_write(&c);
            nodes = tbm_slurm_node_lines(&t, &c, &err);
            if (text && nodes && tbm_conf_parse(text, strlen(text), "bench", &back, NULL, &err) == 0) {
                rc = tbm_validation_fit(&v) && tbm_conf_equal(&c, &back) ? 0 : -1;
                tbm_conf_free(&back);
            }
            free(text);
            free(nodes);
            tbm_conf_free(&c);
        }
        tbm_validation_free(&v);
    }
    tbm_topology_free(&t);
    if (rc < 0)
        fprintf(stderr, "time_topology: the pass failed: %s\n", err.msg);
    return rc;
}

int main(void)
{
    static tbm_host_facts_t lab[MACS];
    static double ms[ROUNDS];
    int g, c = 0, i;

    lab_hosts(lab, MACS, "mac", 1);
    for (g = 0; g < MACS / 8; g++)
        c = lab_mesh(lab, g * 8, 8, c, 80, 1);
    for (i = 0; i < ROUNDS; i++) {
        double start = timing_now_ms();
        if (one_pass(lab) < 0)
            return 2;
        ms[i] = timing_now_ms() - start;
    }
    timing_sort(ms, ROUNDS);
    printf("time_topology: %d Macs, %d cables, %d rounds: median %.3f ms, p95 %.3f ms, max %.3f ms "
           "(target < %.0f ms): %s\n", MACS, c, ROUNDS, ms[ROUNDS / 2], ms[ROUNDS * 95 / 100], ms[ROUNDS - 1],
           TARGET_MS, ms[ROUNDS / 2] < TARGET_MS ? "ok" : "TOO SLOW");
    return ms[ROUNDS / 2] < TARGET_MS ? 0 : 1;
}
