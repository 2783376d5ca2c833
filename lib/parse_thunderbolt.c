/* parse_thunderbolt.c: `system_profiler SPThunderboltDataType -json` -> Thunderbolt ports of this host,
 * each with its receptacle, domain UUID, speed, status and the Mac at the other end (if any). */
#include "parse_macos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "parse_text.h"

#define TB_SOURCE "system_profiler SPThunderboltDataType"
#define TB_PEER_DEPTH 4     /* hubs between a port and a peer Mac that we look through */
#define TB_FIX_CAPTURE "run `system_profiler SPThunderboltDataType -json` again and capture all of it"

/* The Mac found behind a port (a direct one first), and how many there were. */
typedef struct tb_peer {
    const char *uuid;
    const char *name;
    const char *hub;             /* the device cabled to the port in front of that Mac; NULL: cabled directly */
    int behind_hub;              /* 1 when that Mac sits behind another device */
    int count;
} tb_peer_t;

int tbm_parse_tb_speed(const char *text)
{
    tbm_span_t s = tbm_span_trim(text, strlen(text)), num;
    long long gbps;
    size_t i;

    if (tbm_span_starts(s, "Up to "))
        s = tbm_span_after(s, 6);
    if (s.n < 5 || !tbm_span_eq(tbm_span_trim(s.p + s.n - 5, 5), "Gb/s"))
        return -1;
    num = tbm_span_trim(s.p, s.n - 5);
    for (i = 0; i < num.n && num.p[i] != '.'; i++)
        ;
    if (i < num.n && tbm_span_long(tbm_span_trim(num.p + i + 1, num.n - i - 1), 0, 99, &gbps) < 0)
        return -1;     /* a fraction ("2.5 Gb/s") is allowed and dropped, nothing else */
    num.n = i;
    if (tbm_span_long(num, 1, 999, &gbps) < 0)
        return -1;
    return (int)gbps;
}

/* Depth-first through _items: a device with its own domain UUID is a Mac; others (displays, drives,
 * hubs, docks) are skipped, but what sits behind them is searched. A Mac in the port's own _items is cabled
 * to it; one deeper sits behind `hub`, the device cabled to the port (system_profiler nests it one level
 * down per hub). A directly cabled Mac wins over one behind a hub. */
static void find_peer(json_object *items, int depth, const char *hub, tb_peer_t *peer)
{
    size_t i, n;
    json_object *item;
    const char *uuid, *name;

    if (!items || depth > TB_PEER_DEPTH)
        return;
    n = json_object_array_length(items);
    for (i = 0; i < n; i++) {
        item = json_object_array_get_idx(items, i);
        uuid = tbm_json_str(item, "domain_uuid_key");
        if (uuid) {
            if (peer->count++ == 0 || (peer->behind_hub && depth == 0)) {
                peer->uuid = uuid;
                peer->name = tbm_json_str(item, "device_name_key");
                peer->hub = depth ? hub : NULL;
                peer->behind_hub = depth > 0;
            }
            continue;
        }
        name = tbm_json_str(item, "device_name_key");
        if (!name)
            name = tbm_json_str(item, "_name");
        find_peer(tbm_json_typed(item, "_items", json_type_array), depth + 1, depth ? hub : name, peer);
    }
}

/* Copy an optional value into a field; a value too long or malformed is dropped with a finding. */
static void take(tbm_parse_ctx_t *ctx, char *dst, size_t size, const char *val, int (*valid)(const char *),
                 const char *key, const char *bus)
{
    if (!val)
        return;
    if (strlen(val) >= size || !valid(val) ||
        tbm_span_copy(dst, size, tbm_span_trim(val, strlen(val))) < 0) {
        dst[0] = '\0';
        tbm_note(ctx, TBM_SEV_WARNING, "tb-bad-value", 0, TB_FIX_CAPTURE,
                 "%s: %s \"%.*s\" is too long or malformed; ignored", bus, key, TBM_STR_SHOW(val));
    }
}

static int receptacle_of(json_object *tag)
{
    const char *id = tbm_json_str(tag, "receptacle_id_key");
    long long n;

    if (!id || tbm_span_long(tbm_span_trim(id, strlen(id)), 1, 99, &n) < 0)
        return 0;
    return (int)n;
}

/* The receptacle number ("Thunderbolt N"), which names the port from here on; the bus names it until then. */
static json_object *read_receptacle(tbm_parse_ctx_t *ctx, json_object *bus, const char *label, tbm_tb_port_t *port)
{
    json_object *tag = tbm_json_typed(bus, "receptacle_1_tag", json_type_object);

    if (!tag) {
        tbm_note(ctx, TBM_SEV_WARNING, "tb-no-receptacle", 0,
                 "this bus cannot be tied to a \"Thunderbolt N\" interface; check the macOS version",
                 "%s has no receptacle_1_tag object", label);
        return NULL;
    }
    port->receptacle = receptacle_of(tag);
    if (port->receptacle == 0)
        tbm_note(ctx, TBM_SEV_WARNING, "tb-receptacle-invalid", 0, TB_FIX_CAPTURE,
                 "%s: receptacle_id_key is missing or not a number 1-99 in a string", label);
    return tag;
}

static void read_link(tbm_parse_ctx_t *ctx, json_object *tag, const char *label, tbm_tb_port_t *port)
{
    const char *speed = tbm_json_str(tag, "current_speed_key");
    const char *status = tbm_json_str(tag, "receptacle_status_key");

    if (!tag)
        return;
    port->speed_gbps = speed ? tbm_parse_tb_speed(speed) : -1;
    if (port->speed_gbps < 0) {
        tbm_note(ctx, TBM_SEV_WARNING, "tb-speed-unknown", 0,
                 "check the cable and port; the speed is needed to tell Thunderbolt 5 from 4",
                 "%s: current_speed_key \"%.*s\" is not a speed like \"Up to 80 Gb/s\"", label,
                 TBM_STR_SHOW(speed ? speed : "(missing)"));
        port->speed_gbps = 0;
    }
    port->connected = status && strcmp(status, "receptacle_connected") == 0;
}

static void read_peer(tbm_parse_ctx_t *ctx, json_object *bus, const char *label, tbm_tb_port_t *port)
{
    tb_peer_t peer = { NULL, NULL, NULL, 0, 0 };

    find_peer(tbm_json_typed(bus, "_items", json_type_array), 0, NULL, &peer);
    if (peer.count > 1)
        tbm_note(ctx, TBM_SEV_WARNING, "tb-peer-ambiguous", 0,
                 "cable each Mac directly to one port of the other; hubs and chains hide the topology",
                 "%s: %d Macs found behind this port; only the first (%.*s) is used", label, peer.count,
                 TBM_STR_SHOW(peer.uuid));
    if (!peer.behind_hub) {
        take(ctx, port->peer_uuid, sizeof(port->peer_uuid), peer.uuid, tbm_valid_uuid, "peer domain_uuid_key",
             label);
        take(ctx, port->peer_name, sizeof(port->peer_name), peer.name, tbm_valid_text, "peer device_name_key",
             label);
        return;
    }
    take(ctx, port->hub_peer_uuid, sizeof(port->hub_peer_uuid), peer.uuid, tbm_valid_uuid, "peer domain_uuid_key",
         label);
    take(ctx, port->hub_peer_name, sizeof(port->hub_peer_name), peer.name, tbm_valid_text, "peer device_name_key",
         label);
    take(ctx, port->hub, sizeof(port->hub), peer.hub, tbm_valid_text, "hub device_name_key", label);
    tbm_note(ctx, TBM_SEV_WARNING, "tb-peer-behind-hub", 0,
             "cable the two Macs directly, port to port, with no hub, dock or daisy chain between them: JACCL's "
             "RDMA needs direct cables",
             "%s: the Mac %.*s (%.*s) is reached through %s%.*s%s, not by a direct cable; it is not counted as a "
             "cable", label, TBM_STR_SHOW(peer.uuid), TBM_STR_SHOW(peer.name ? peer.name : "no name"),
             port->hub[0] ? "the hub or dock \"" : "a hub or dock", TBM_STR_SHOW(port->hub),
             port->hub[0] ? "\"" : "");
}

static void read_model(tbm_parse_ctx_t *ctx, json_object *bus, const char *label, tbm_host_facts_t *facts)
{
    const char *model = tbm_json_str(bus, "device_name_key");

    if (!model)
        return;
    if (!facts->model_name[0])
        take(ctx, facts->model_name, sizeof(facts->model_name), model, tbm_valid_text, "device_name_key",
             label);
    else if (strcmp(facts->model_name, model) != 0)
        tbm_note(ctx, TBM_SEV_WARNING, "tb-model-differs", 0, TB_FIX_CAPTURE,
                 "%s: device_name_key \"%.*s\" differs from \"%s\" on another bus", label,
                 TBM_STR_SHOW(model), facts->model_name);
}

static void read_bus(tbm_parse_ctx_t *ctx, json_object *bus, size_t idx, tbm_host_facts_t *facts)
{
    const char *name = tbm_json_str(bus, "_name");
    const char *shown = name ? name : "no _name";
    tbm_tb_port_t port;
    json_object *tag;
    char label[TBM_HOST_MAX + 40];

    memset(&port, 0, sizeof(port));
    snprintf(label, sizeof(label), "bus %zu (%.*s)", idx, tbm_show_len(shown, strlen(shown), TBM_HOST_MAX - 1),
             shown);
    if (!json_object_is_type(bus, json_type_object)) {
        tbm_note(ctx, TBM_SEV_WARNING, "tb-bad-bus", 0, TB_FIX_CAPTURE,
                 "bus %zu is %s, not an object; skipped", idx, tbm_json_type_name(json_object_get_type(bus)));
        return;
    }
    tag = read_receptacle(ctx, bus, label, &port);
    if (port.receptacle > 0)   /* the port's name, as networksetup and the inventory say it */
        snprintf(label, sizeof(label), "Thunderbolt %d", port.receptacle);
    take(ctx, port.bus, sizeof(port.bus), name, tbm_valid_text, "_name", label);
    take(ctx, port.domain_uuid, sizeof(port.domain_uuid), tbm_json_str(bus, "domain_uuid_key"),
         tbm_valid_uuid, "domain_uuid_key", label);
    if (!port.domain_uuid[0])
        tbm_note(ctx, TBM_SEV_WARNING, "tb-port-no-uuid", 0, TB_FIX_CAPTURE,
                 "%s has no usable domain_uuid_key: no cable on it can be matched", label);
    read_model(ctx, bus, label, facts);
    read_link(ctx, tag, label, &port);
    read_peer(ctx, bus, label, &port);
    if (facts->n_ports >= TBM_MAX_PORTS) {
        tbm_note(ctx, TBM_SEV_ERROR, "tb-too-many-ports", 0, TB_FIX_CAPTURE,
                 "%s: more than %d Thunderbolt buses; the rest are ignored", label, TBM_MAX_PORTS);
        return;
    }
    facts->ports[facts->n_ports++] = port;
}

static int by_receptacle(const void *a, const void *b)
{
    const tbm_tb_port_t *x = a, *y = b;

    if (x->receptacle != y->receptacle)
        return x->receptacle < y->receptacle ? -1 : 1;
    return strcmp(x->domain_uuid, y->domain_uuid);
}

/* Problems between two ports of this host (each pair once). A cable from one to the other is said once the
 * ports have their interfaces (tbm_facts_parse_all), as the inventory says it. */
static void check_pair(tbm_parse_ctx_t *ctx, const tbm_tb_port_t *a, const tbm_tb_port_t *b)
{
    char na[TBM_PORT_NAME_MAX], nb[TBM_PORT_NAME_MAX];

    tbm_facts_port_name("", a, na, sizeof(na));
    tbm_facts_port_name("", b, nb, sizeof(nb));
    if (strcmp(na, nb) == 0) {   /* one receptacle claimed twice: only the buses tell them apart */
        snprintf(na, sizeof(na), "bus %s", a->bus);
        snprintf(nb, sizeof(nb), "bus %s", b->bus);
    }
    if (a->domain_uuid[0] && strcmp(a->domain_uuid, b->domain_uuid) == 0)
        tbm_note(ctx, TBM_SEV_ERROR, "tb-duplicate-uuid", 0, TB_FIX_CAPTURE,
                 "%s and %s both have domain UUID %s", na, nb, a->domain_uuid);
    if (a->receptacle > 0 && a->receptacle == b->receptacle)
        tbm_note(ctx, TBM_SEV_ERROR, "tb-duplicate-receptacle", 0, TB_FIX_CAPTURE,
                 "buses %s and %s both claim receptacle %d", a->bus, b->bus, a->receptacle);
}

static void check_ports(tbm_parse_ctx_t *ctx, tbm_host_facts_t *facts)
{
    int i, j;

    qsort(facts->ports, (size_t)facts->n_ports, sizeof(facts->ports[0]), by_receptacle);
    for (i = 0; i < facts->n_ports; i++)
        for (j = i + 1; j < facts->n_ports; j++)
            check_pair(ctx, &facts->ports[i], &facts->ports[j]);
}

int tbm_parse_thunderbolt(const char *text, size_t len, tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    tbm_parse_ctx_t ctx;
    tbm_err_t err;
    json_object *doc, *buses;
    size_t i, n;

    tbm_parse_begin(&ctx, fs, TB_SOURCE);
    if (tbm_raw_usable(&ctx, text, len, 0) < 0)
        return -1;
    doc = tbm_json_parse(text, len, &err);
    if (!doc) {
        tbm_note(&ctx, TBM_SEV_ERROR, "tb-json-invalid", 0, TB_FIX_CAPTURE, "%s", err.msg);
        return -1;
    }
    buses = tbm_json_typed(doc, "SPThunderboltDataType", json_type_array);
    if (!buses) {
        tbm_note(&ctx, TBM_SEV_ERROR, "tb-json-shape", 0, TB_FIX_CAPTURE,
                 "the document has no SPThunderboltDataType array at its top");
        json_object_put(doc);
        return -1;
    }
    n = json_object_array_length(buses);
    for (i = 0; i < n; i++)
        read_bus(&ctx, json_object_array_get_idx(buses, i), i, facts);
    check_ports(&ctx, facts);
    json_object_put(doc);
    return 0;
}
