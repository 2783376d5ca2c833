/* fuzz_common.h: what every libFuzzer harness of the parsers checks after a run: the facts stay within
 * their bounds, and whatever a parser produced is a facts document the JSON reader accepts unchanged. */
#ifndef TBM_FUZZ_COMMON_H
#define TBM_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts_json.h"
#include "parse_macos.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

static inline void fuzz_check_strings(const tbm_host_facts_t *f)
{
    int i;

    FUZZ_REQUIRE(memchr(f->model_name, 0, sizeof(f->model_name)) && memchr(f->chip, 0, sizeof(f->chip)));
    for (i = 0; i < f->n_ports; i++) {
        FUZZ_REQUIRE(memchr(f->ports[i].peer_uuid, 0, sizeof(f->ports[i].peer_uuid)) != NULL);
        FUZZ_REQUIRE(memchr(f->ports[i].hub_peer_uuid, 0, sizeof(f->ports[i].hub_peer_uuid)) != NULL);
        FUZZ_REQUIRE(memchr(f->ports[i].hub, 0, sizeof(f->ports[i].hub)) != NULL);
    }
    for (i = 0; i < f->n_ifaces; i++)
        FUZZ_REQUIRE(memchr(f->ifaces[i].ipv4, 0, sizeof(f->ifaces[i].ipv4)) != NULL);
}

/* Bounds, then facts -> JSON -> facts -> JSON must give the same text. */
static inline void fuzz_check_facts(tbm_host_facts_t *f)
{
    tbm_host_facts_t back;
    tbm_err_t err;
    char *one, *two;

    FUZZ_REQUIRE(f->n_ports >= 0 && f->n_ports <= TBM_MAX_PORTS);
    FUZZ_REQUIRE(f->n_ifaces >= 0 && f->n_ifaces <= TBM_MAX_IFACES);
    FUZZ_REQUIRE(f->n_rdma >= 0 && f->n_rdma <= TBM_MAX_RDMA);
    fuzz_check_strings(f);
    snprintf(f->hostname, sizeof(f->hostname), "fuzz");
    one = tbm_facts_to_json_string(f, 0);
    FUZZ_REQUIRE(one != NULL);
    FUZZ_REQUIRE(tbm_facts_from_json(one, strlen(one), &back, &err) == 0);
    two = tbm_facts_to_json_string(&back, 0);
    FUZZ_REQUIRE(two != NULL && strcmp(one, two) == 0);
    free(one);
    free(two);
}

/* What the parsers promise beyond the document's bounds: a Mac is either cabled to a port or behind a hub
 * on it, never both; no chip or model holds a colon (a `name: value` line read as a value); no core count
 * below 1 is kept. */
static inline void fuzz_check_parsed(const tbm_host_facts_t *f)
{
    int i;

    for (i = 0; i < f->n_ports; i++)
        FUZZ_REQUIRE(!(f->ports[i].peer_uuid[0] && f->ports[i].hub_peer_uuid[0]));
    FUZZ_REQUIRE(!strchr(f->chip, ':') && !strchr(f->model_id, ':'));
    FUZZ_REQUIRE(f->cores_performance >= 0 && f->cores_efficiency >= 0);
}

/* Run one parser over the input and check the result. */
static inline void fuzz_one(int (*parse)(const char *, size_t, tbm_host_facts_t *, tbm_findings_t *), const uint8_t *data,
                     size_t size)
{
    tbm_host_facts_t f;
    tbm_findings_t fs;

    tbm_facts_init(&f);
    tbm_findings_init(&fs);
    parse((const char *)data, size, &f, &fs);
    fuzz_check_parsed(&f);
    fuzz_check_facts(&f);
    tbm_findings_free(&fs);
}

#endif
