/* fuzz_slurmstate.c: libFuzzer harness of lib/slurmstate.c and lib/health_verdict.c, the texts tbmesh metrics
 * reads: scontrol's node lines, squeue's jobs, sacct's ended jobs, a verdict file. What is read is bounded and clean: node names
 * that are host names, lower-case states, reasons that are UTF-8 without control bytes, jobs with ids and
 * nodes; a verdict of the three kinds. Nothing leaks (the harness frees all). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health.h"
#include "parse_text.h"
#include "slurmstate.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    tbm_slurm_nodes_t ns;
    tbm_slurm_jobs_t js;
    tbm_ended_jobs_t e;
    tbm_health_verdict_t v;
    tbm_err_t err;
    size_t i, k;

    if (tbm_slurm_nodes_parse(text, size, &ns, &err) == 0) {
        for (i = 0; i < ns.n; i++) {
            const tbm_slurm_node_t *n = &ns.v[i];
            FUZZ_REQUIRE(n->name[0] && memchr(n->name, '\0', sizeof(n->name)));
            FUZZ_REQUIRE(memchr(n->state, '\0', sizeof(n->state)));
            for (k = 0; n->state[k]; k++)
                FUZZ_REQUIRE((n->state[k] >= 'a' && n->state[k] <= 'z') || n->state[k] == '_');
            FUZZ_REQUIRE(tbm_utf8_check(n->reason, strlen(n->reason)) == strlen(n->reason));
            for (k = 0; n->reason[k]; k++)
                FUZZ_REQUIRE((unsigned char)n->reason[k] >= 0x20 && n->reason[k] != 0x7f);
        }
        tbm_slurm_nodes_free(&ns);
    }
    if (tbm_slurm_jobs_parse(text, size, &js, &err) == 0) {
        for (i = 0; i < js.n; i++)
            FUZZ_REQUIRE(js.v[i].id > 0 && js.v[i].n_nodes > 0);
        tbm_slurm_jobs_free(&js);
    }
    if (tbm_sacct_ended_parse(text, size, 2000000000LL, 60, &e, &err) == 0) {
        for (i = 0; i < e.n; i++) {
            FUZZ_REQUIRE(e.id[i] > 0 && e.id[i] < UINT32_MAX);
            for (k = 0; k < i; k++)
                FUZZ_REQUIRE(e.id[k] != e.id[i]);   /* each job once */
        }
        tbm_ended_jobs_free(&e);
    }
    if (tbm_health_verdict_parse(text, size, NULL, &v, &err) == 0)
        FUZZ_REQUIRE(v.verdict <= TBM_HEALTH_UNKNOWN && v.time > 0 && v.node[0]);
    return 0;
}
