/* facts_json.h: one host's facts as a JSON document (what `macnode probe` prints) and back, with every
 * field checked for type and bounds when read.
 *
 * Layout, version 1 (unknown members are ignored, so new members may be added without a new version;
 * a change of meaning or type bumps "tbmesh_facts"). Every member below is required unless said optional.
 * Strings are "" when unknown; they hold printable UTF-8.
 *   {"tbmesh_facts": 1,
 *    "hostname": "studio-a1",                                  non-empty, < 64 bytes
 *    "hardware": {"model_name": "Mac Studio", "model_id": "Mac15,14", "chip": "Apple M3 Ultra",
 *                 "memory_bytes": 274877906944,                0 .. 2^50
 *                 "cores_performance": 24, "cores_efficiency": 8},   0 .. 4096
 *    "os": {"name": "macOS", "version": "26.2", "build": "25C56"},
 *    "rdma": {"enabled": true,                                 true, false or null (unknown)
 *             "devices": ["rdma_en2", ...]},                   at most 16 interface-like names
 *    "thunderbolt": [{"receptacle": 1,                         0 (unknown) .. 99
 *                     "bus": "thunderboltusb4_bus_1", "domain_uuid": "...", "speed_gbps": 80 (0 .. 999),
 *                     "connected": true, "peer_uuid": "...", "peer_name": "Mac Studio", "iface": "en2",
 *                     "hub_peer_uuid": "...", "hub_peer_name": "Mac16,9", "hub": "TS4"}],   at most 16
 *                    (peer_*: a Mac cabled directly; hub_*: a Mac reached only through the hub or dock "hub",
 *                    not a cable. The three hub members are optional: written only when set, absent is "".)
 *    "interfaces": [{"name": "en2", "hwport": "Thunderbolt 1", "mac": "36:a8:4b:01:02:03",
 *                    "ipv4": "169.254.1.1", "prefix_len": 30 (-1 when no address, else 0 .. 32),
 *                    "up": true, "active": true}],            at most 64, name non-empty
 *    "unknown": {"thunderbolt": "the capture failed (why)",    optional, and each member optional: a part whose
 *                "network": ..., "rdma": ..., "os": ...}}     capture failed; nothing is concluded from it
 */
#ifndef TBM_FACTS_JSON_H
#define TBM_FACTS_JSON_H

#include <stddef.h>
#include <json-c/json.h>

#include "errbuf.h"
#include "facts.h"

#define TBM_FACTS_VERSION 1

/* The facts as a JSON object (json_object_put it); NULL when out of memory. */
json_object *tbm_facts_to_json(const tbm_host_facts_t *facts);

/* The facts as JSON text (pretty: indented), malloc'd (free it); NULL when out of memory. */
char *tbm_facts_to_json_string(const tbm_host_facts_t *facts, int pretty);

/* Read a facts document. Returns 0, or -1 with err naming the member ("thunderbolt[2].speed_gbps") and
 * what was wrong; facts is then left empty (tbm_facts_init). */
int tbm_facts_from_json(const char *text, size_t len, tbm_host_facts_t *facts, tbm_err_t *err);

#endif
