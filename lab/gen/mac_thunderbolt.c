/* mac_thunderbolt.c: a simulated Mac's `system_profiler SPThunderboltDataType -json`. */
#include "config.h"

#include <json-c/json.h>
#include <stdio.h>

#include "labgen.h"

/* ---- outputs: system_profiler ----------------------------------------------------------------------- */

static void jset(json_object *o, const char *key, const char *value)
{
    json_object_object_add(o, key, json_object_new_string(value));
}

/* The two generations print as different macOS releases do: a Thunderbolt 5 Mac (as captured from an M3 Ultra
 * Mac Studio) says "80 Gb/s" on a live link and "Up to 120 Gb/s" on an empty port, names a peer Mac by model
 * identifier and lists its buses last-first; a Thunderbolt 4 Mac says "Up to 40 Gb/s" on both, names the peer
 * by model name and lists its buses in order. Parsers must cope with all of it. */
int lab_is_tb5(const lab_group_t *g)
{
    return g->link_gbps >= 80;
}

static void speed_text(char *out, size_t size, const lab_group_t *g, int connected)
{
    if (lab_is_tb5(g))
        snprintf(out, size, connected ? "%u Gb/s" : "Up to 120 Gb/s", g->link_gbps);
    else
        snprintf(out, size, "Up to %u Gb/s", g->link_gbps);
}

/* The XDomain services a peer Mac announces (IP over Thunderbolt). */
static json_object *peer_services(const char *peer)
{
    char uuid[37];
    json_object *list = json_object_new_array(), *ip = json_object_new_object();
    lab_name_uuid(uuid, peer, "service_ip");
    jset(ip, "_name", "service_ip");
    json_object_object_add(ip, "protocol_id_key", json_object_new_int(1));
    json_object_object_add(ip, "protocol_revision_key", json_object_new_int(1));
    json_object_object_add(ip, "protocol_version_key", json_object_new_int(1));
    jset(ip, "service_uuid_key", uuid);
    json_object_array_add(list, ip);
    return list;
}

/* The peer Mac seen through a connected receptacle (keys in system_profiler's sorted order). */
static json_object *peer_item(const lab_t *lab, const lab_cable_t *cb, int mac)
{
    int end = lab_cable_end(cb, mac);
    int peer = cb->mac[!end];
    const lab_group_t *pg = lab_group_of(lab, peer);
    char uuid[37], what[24];
    json_object *item = json_object_new_object();
    snprintf(what, sizeof(what), "receptacle-%u", cb->rcpt[!end]);
    lab_name_uuid(uuid, lab->macs[peer].name, what);
    jset(item, "_name", pg->model_name);
    jset(item, "device_id_key", "0xA");
    jset(item, "device_name_key", lab_is_tb5(lab_group_of(lab, mac)) ? pg->model_id : pg->model_name);
    jset(item, "domain_uuid_key", uuid);
    json_object_object_add(item, "services_title", peer_services(lab->macs[peer].name));
    jset(item, "vendor_id_key", "0x0A27");
    jset(item, "vendor_name_key", "Apple Inc.");
    return item;
}

static json_object *receptacle_tag(const lab_group_t *g, unsigned rcpt, int connected)
{
    char speed[32], id[8];
    json_object *tag = json_object_new_object();
    speed_text(speed, sizeof(speed), g, connected);
    snprintf(id, sizeof(id), "%u", rcpt);
    jset(tag, "current_speed_key", speed);
    jset(tag, "link_status_key", connected ? "0x2" : "0x100");
    if (connected)
        jset(tag, "micro_version_key", "0.0.0");
    jset(tag, "receptacle_id_key", id);
    jset(tag, "receptacle_status_key", connected ? "receptacle_connected" : "receptacle_no_devices_connected");
    return tag;
}

static json_object *bus_object(const lab_t *lab, int mac, unsigned rcpt)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    const lab_cable_t *cb = lab_live_cable(lab, mac, rcpt);
    char name[40], uuid[37], what[24], uid[24];
    json_object *bus = json_object_new_object();
    snprintf(name, sizeof(name), "thunderboltusb4_bus_%u", rcpt - 1);
    snprintf(what, sizeof(what), "receptacle-%u", rcpt);
    lab_name_uuid(uuid, lab->macs[mac].name, what);
    snprintf(uid, sizeof(uid), "0x05AC%08X%04X", (unsigned)(lab_hash64(0, lab->macs[mac].name) >> 32), 0x9810u + rcpt - 1);
    if (cb) {
        json_object *items = json_object_new_array();
        json_object_array_add(items, peer_item(lab, cb, mac));
        json_object_object_add(bus, "_items", items);
    }
    jset(bus, "_name", name);
    jset(bus, "device_name_key", g->model_name);
    jset(bus, "domain_uuid_key", uuid);
    json_object_object_add(bus, "receptacle_1_tag", receptacle_tag(g, rcpt, cb != NULL));
    jset(bus, "route_string_key", "0");
    jset(bus, "switch_uid_key", uid);
    jset(bus, "vendor_name_key", "Apple Inc.");
    return bus;
}

static json_object *thunderbolt_json(const lab_t *lab, int mac)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    json_object *root = json_object_new_object(), *buses = json_object_new_array();
    for (unsigned i = 1; i <= g->ports; i++)
        json_object_array_add(buses, bus_object(lab, mac, lab_is_tb5(g) ? g->ports + 1 - i : i));
    json_object_object_add(root, "SPThunderboltDataType", buses);
    return root;
}

void lab_write_thunderbolt(const lab_t *lab, int mac, FILE *f)
{
    json_object *root = thunderbolt_json(lab, mac);
    fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                            JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
}

