/* facts_json.c: host facts <-> JSON (layout in facts_json.h). One table per object says each member's name,
 * kind, place in the C struct and bounds; writing and reading both follow it. */
#include "facts_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "parse_text.h"

typedef enum fkind {
    FK_TEXT,       /* char[size], printable */
    FK_IFNAME,     /* char[size], "" or an interface name */
    FK_UUID,       /* char[size], "" or a domain UUID */
    FK_IPV4,       /* char[size], "" or a dotted quad */
    FK_MAC,        /* char[size], "" or aa:bb:cc:dd:ee:ff */
    FK_INT,        /* int in [min, max] */
    FK_U64,        /* uint64_t in [min, max] */
    FK_BOOL,       /* int 0/1 <-> false/true */
    FK_TRISTATE,   /* int -1/0/1 <-> null/false/true */
} fkind_t;

typedef struct field {
    const char *key;
    fkind_t kind;
    size_t offset;
    size_t size;          /* of char arrays */
    long long min, max;   /* of numbers */
    int optional;         /* text added after version 1 first shipped: written only when set, absent reads "" */
} field_t;

#define TEXT(k, kind, type, m) { k, kind, offsetof(type, m), sizeof(((type *)0)->m), 0, 0, 0 }
#define OPT_TEXT(k, kind, type, m) { k, kind, offsetof(type, m), sizeof(((type *)0)->m), 0, 0, 1 }
#define NUM(k, kind, type, m, lo, hi) { k, kind, offsetof(type, m), 0, lo, hi, 0 }
#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static const field_t hardware_fields[] = {
    TEXT("model_name", FK_TEXT, tbm_host_facts_t, model_name),
    TEXT("model_id", FK_TEXT, tbm_host_facts_t, model_id),
    TEXT("chip", FK_TEXT, tbm_host_facts_t, chip),
    NUM("memory_bytes", FK_U64, tbm_host_facts_t, memory_bytes, 0, 1ll << 50),
    NUM("cores_performance", FK_INT, tbm_host_facts_t, cores_performance, 0, 4096),
    NUM("cores_efficiency", FK_INT, tbm_host_facts_t, cores_efficiency, 0, 4096),
};

static const field_t os_fields[] = {
    TEXT("name", FK_TEXT, tbm_host_facts_t, os_name),
    TEXT("version", FK_TEXT, tbm_host_facts_t, os_version),
    TEXT("build", FK_TEXT, tbm_host_facts_t, os_build),
};

static const field_t rdma_fields[] = {
    NUM("enabled", FK_TRISTATE, tbm_host_facts_t, rdma_enabled, -1, 1),
};

static const field_t port_fields[] = {
    NUM("receptacle", FK_INT, tbm_tb_port_t, receptacle, 0, 99),
    TEXT("bus", FK_TEXT, tbm_tb_port_t, bus),
    TEXT("domain_uuid", FK_UUID, tbm_tb_port_t, domain_uuid),
    NUM("speed_gbps", FK_INT, tbm_tb_port_t, speed_gbps, 0, 999),
    NUM("connected", FK_BOOL, tbm_tb_port_t, connected, 0, 1),
    TEXT("peer_uuid", FK_UUID, tbm_tb_port_t, peer_uuid),
    TEXT("peer_name", FK_TEXT, tbm_tb_port_t, peer_name),
    TEXT("iface", FK_IFNAME, tbm_tb_port_t, iface),
    OPT_TEXT("hub_peer_uuid", FK_UUID, tbm_tb_port_t, hub_peer_uuid),
    OPT_TEXT("hub_peer_name", FK_TEXT, tbm_tb_port_t, hub_peer_name),
    OPT_TEXT("hub", FK_TEXT, tbm_tb_port_t, hub),
};

/* "unknown": {"thunderbolt": "the capture failed (...)", ...}: optional, written only when a part is unknown. */
#define UNKNOWN(k, part) OPT_TEXT(k, FK_TEXT, tbm_host_facts_t, unknown[part])
static const field_t unknown_fields[] = {
    UNKNOWN("thunderbolt", TBM_PART_THUNDERBOLT), UNKNOWN("network", TBM_PART_NETWORK),
    UNKNOWN("rdma", TBM_PART_RDMA), UNKNOWN("os", TBM_PART_OS),
};

static const field_t iface_fields[] = {
    TEXT("name", FK_IFNAME, tbm_iface_t, name),
    TEXT("hwport", FK_TEXT, tbm_iface_t, hwport),
    TEXT("mac", FK_MAC, tbm_iface_t, mac),
    TEXT("ipv4", FK_IPV4, tbm_iface_t, ipv4),
    NUM("prefix_len", FK_INT, tbm_iface_t, prefix_len, -1, 32),
    NUM("up", FK_BOOL, tbm_iface_t, up, 0, 1),
    NUM("active", FK_BOOL, tbm_iface_t, active, 0, 1),
};

/* ---- writing ---- */

static json_object *field_to_json(const field_t *f, const char *base)
{
    const void *p = base + f->offset;
    int v;

    switch (f->kind) {
    case FK_INT:
        return json_object_new_int(*(const int *)p);
    case FK_U64:
        return json_object_new_uint64(*(const uint64_t *)p);
    case FK_BOOL:
        return json_object_new_boolean(*(const int *)p != 0);
    case FK_TRISTATE:
        v = *(const int *)p;
        return v < 0 ? NULL : json_object_new_boolean(v != 0);
    default:
        return json_object_new_string((const char *)p);
    }
}

static json_object *object_to_json(const field_t *fields, size_t n, const void *base)
{
    json_object *obj = json_object_new_object();
    size_t i;

    for (i = 0; obj && i < n; i++)
        if (!(fields[i].optional && !((const char *)base + fields[i].offset)[0]))   /* optional: only when set */
            json_object_object_add(obj, fields[i].key, field_to_json(&fields[i], base));
    return obj;
}

/* An array of count records of `stride` bytes each, written with the same field table. */
static json_object *array_to_json(const field_t *fields, size_t n, const void *first, int count, size_t stride,
                                  int max)
{
    json_object *arr = json_object_new_array();
    int i;

    for (i = 0; arr && i < count && i < max; i++)
        json_object_array_add(arr, object_to_json(fields, n, (const char *)first + (size_t)i * stride));
    return arr;
}

json_object *tbm_facts_to_json(const tbm_host_facts_t *facts)
{
    json_object *doc = json_object_new_object(), *rdma, *devs;
    int i;

    if (!doc)
        return NULL;
    json_object_object_add(doc, "tbmesh_facts", json_object_new_int(TBM_FACTS_VERSION));
    json_object_object_add(doc, "hostname", json_object_new_string(facts->hostname));
    json_object_object_add(doc, "hardware", object_to_json(hardware_fields, NFIELDS(hardware_fields), facts));
    json_object_object_add(doc, "os", object_to_json(os_fields, NFIELDS(os_fields), facts));
    rdma = object_to_json(rdma_fields, NFIELDS(rdma_fields), facts);
    devs = json_object_new_array();
    for (i = 0; devs && i < facts->n_rdma && i < TBM_MAX_RDMA; i++)
        json_object_array_add(devs, json_object_new_string(facts->rdma_devices[i]));
    json_object_object_add(rdma, "devices", devs);
    json_object_object_add(doc, "rdma", rdma);
    json_object_object_add(doc, "thunderbolt", array_to_json(port_fields, NFIELDS(port_fields), facts->ports,
                                                             facts->n_ports, sizeof(facts->ports[0]),
                                                             TBM_MAX_PORTS));
    json_object_object_add(doc, "interfaces", array_to_json(iface_fields, NFIELDS(iface_fields), facts->ifaces,
                                                            facts->n_ifaces, sizeof(facts->ifaces[0]),
                                                            TBM_MAX_IFACES));
    for (i = 0; i < TBM_PART_COUNT && !facts->unknown[i][0]; i++)
        ;
    if (i < TBM_PART_COUNT)
        json_object_object_add(doc, "unknown", object_to_json(unknown_fields, NFIELDS(unknown_fields), facts));
    return doc;
}

char *tbm_facts_to_json_string(const tbm_host_facts_t *facts, int pretty)
{
    json_object *doc = tbm_facts_to_json(facts);
    int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
                (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);
    char *text;

    if (!doc)
        return NULL;
    text = strdup(json_object_to_json_string_ext(doc, flags));
    json_object_put(doc);
    return text;
}

/* ---- reading ---- */

static int valid_text_kind(fkind_t kind, const char *s)
{
    if (!s[0])
        return 1;   /* "" is "unknown" for every text member */
    switch (kind) {
    case FK_IFNAME: return tbm_valid_ifname(s);
    case FK_UUID:   return tbm_valid_uuid(s);
    case FK_IPV4:   return tbm_valid_ipv4(s);
    case FK_MAC:    return tbm_valid_mac(s);
    default:        return tbm_valid_text(s);
    }
}

static const char *kind_wanted(fkind_t kind)
{
    switch (kind) {
    case FK_IFNAME: return "an interface name like \"en2\"";
    case FK_UUID:   return "a domain UUID (hex digits and '-')";
    case FK_IPV4:   return "an IPv4 address like \"169.254.1.1\"";
    case FK_MAC:    return "a MAC address like \"36:a8:4b:01:02:03\"";
    default:        return "printable text";
    }
}

static int read_string(const field_t *f, json_object *v, char *dst, const char *path, tbm_err_t *err)
{
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);

    if (!json_object_is_type(v, json_type_string))
        return tbm_errprintf(err, "%s: expected a string, got %s", path,
                             tbm_json_type_name(json_object_get_type(v)));
    if (n >= f->size || strlen(s) != n)
        return tbm_errprintf(err, "%s: string of %zu bytes is longer than %zu or holds a NUL byte", path, n,
                             f->size - 1);
    if (!valid_text_kind(f->kind, s))
        return tbm_errprintf(err, "%s: \"%.*s\" is not %s", path, TBM_STR_SHOW(s), kind_wanted(f->kind));
    memcpy(dst, s, n + 1);
    return 0;
}

static int read_number(const field_t *f, json_object *v, void *dst, const char *path, tbm_err_t *err)
{
    int64_t x;

    if (f->kind == FK_TRISTATE && json_object_is_type(v, json_type_null)) {
        *(int *)dst = -1;
        return 0;
    }
    if (f->kind == FK_BOOL || f->kind == FK_TRISTATE) {
        if (!json_object_is_type(v, json_type_boolean))
            return tbm_errprintf(err, "%s: expected %s, got %s", path,
                                 f->kind == FK_BOOL ? "true or false" : "true, false or null",
                                 tbm_json_type_name(json_object_get_type(v)));
        *(int *)dst = json_object_get_boolean(v) ? 1 : 0;
        return 0;
    }
    if (!json_object_is_type(v, json_type_int))
        return tbm_errprintf(err, "%s: expected an integer %lld..%lld, got %s", path, f->min, f->max,
                             tbm_json_type_name(json_object_get_type(v)));
    x = json_object_get_int64(v);
    if (x < f->min || x > f->max)
        return tbm_errprintf(err, "%s: %lld is out of range %lld..%lld", path, (long long)x, f->min, f->max);
    if (f->kind == FK_U64)
        *(uint64_t *)dst = (uint64_t)x;
    else
        *(int *)dst = (int)x;
    return 0;
}

static int read_object(const field_t *fields, size_t n, json_object *obj, void *base, const char *path,
                       tbm_err_t *err)
{
    char sub[160];
    json_object *v;
    size_t i;
    int rc;

    if (!json_object_is_type(obj, json_type_object))
        return tbm_errprintf(err, "%s: expected an object, got %s", path,
                             tbm_json_type_name(json_object_get_type(obj)));
    for (i = 0; i < n; i++) {
        snprintf(sub, sizeof(sub), "%s.%s", path, fields[i].key);
        if (!json_object_object_get_ex(obj, fields[i].key, &v)) {
            if (fields[i].optional)
                continue;   /* the record was zeroed: "" */
            return tbm_errprintf(err, "%s: missing", sub);
        }
        if (fields[i].size)
            rc = read_string(&fields[i], v, (char *)base + fields[i].offset, sub, err);
        else
            rc = read_number(&fields[i], v, (char *)base + fields[i].offset, sub, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The array member `key` of doc, with at most max elements. */
static json_object *get_array(json_object *doc, const char *key, int max, tbm_err_t *err)
{
    json_object *v;

    if (!json_object_object_get_ex(doc, key, &v))
        return tbm_errprintf(err, "%s: missing", key), NULL;
    if (!json_object_is_type(v, json_type_array))
        return tbm_errprintf(err, "%s: expected an array, got %s", key,
                             tbm_json_type_name(json_object_get_type(v))), NULL;
    if (json_object_array_length(v) > (size_t)max)
        return tbm_errprintf(err, "%s: %zu entries, more than the %d allowed", key, json_object_array_length(v),
                             max), NULL;
    return v;
}

static int read_array(const field_t *fields, size_t n, json_object *doc, const char *key, void *first,
                      int *count, size_t stride, int max, tbm_err_t *err)
{
    json_object *arr = get_array(doc, key, max, err);
    char path[64];
    size_t i;

    if (!arr)
        return -1;
    for (i = 0; i < json_object_array_length(arr); i++) {
        snprintf(path, sizeof(path), "%s[%zu]", key, i);
        if (read_object(fields, n, json_object_array_get_idx(arr, i), (char *)first + i * stride, path, err) < 0)
            return -1;
        *count = (int)i + 1;
    }
    return 0;
}

static int read_rdma(json_object *doc, tbm_host_facts_t *facts, tbm_err_t *err)
{
    static const field_t dev = TEXT("devices[]", FK_IFNAME, tbm_host_facts_t, rdma_devices[0]);
    json_object *rdma = tbm_json_typed(doc, "rdma", json_type_object), *devs;
    char path[64];
    size_t i;

    if (!rdma)
        return tbm_errprintf(err, "rdma: missing or not an object");
    if (read_object(rdma_fields, NFIELDS(rdma_fields), rdma, facts, "rdma", err) < 0)
        return -1;
    if (!(devs = get_array(rdma, "devices", TBM_MAX_RDMA, err)))
        return tbm_errprefix(err, "rdma.");
    for (i = 0; i < json_object_array_length(devs); i++) {
        snprintf(path, sizeof(path), "rdma.devices[%zu]", i);
        if (read_string(&dev, json_object_array_get_idx(devs, i), facts->rdma_devices[i], path, err) < 0)
            return -1;
        if (!facts->rdma_devices[i][0])
            return tbm_errprintf(err, "%s: empty device name", path);
        facts->n_rdma = (int)i + 1;
    }
    return 0;
}

static int read_header(json_object *doc, tbm_host_facts_t *facts, tbm_err_t *err)
{
    static const field_t host = TEXT("hostname", FK_TEXT, tbm_host_facts_t, hostname);
    json_object *v;

    if (!json_object_is_type(doc, json_type_object))
        return tbm_errprintf(err, "the document is %s, not an object",
                             tbm_json_type_name(json_object_get_type(doc)));
    if (!json_object_object_get_ex(doc, "tbmesh_facts", &v) || !json_object_is_type(v, json_type_int))
        return tbm_errprintf(err, "tbmesh_facts: missing or not an integer: this is not a facts document");
    if (json_object_get_int64(v) != TBM_FACTS_VERSION)
        return tbm_errprintf(err, "tbmesh_facts: version %lld is not %d: use a probe of the same release",
                             (long long)json_object_get_int64(v), TBM_FACTS_VERSION);
    if (!json_object_object_get_ex(doc, "hostname", &v))
        return tbm_errprintf(err, "hostname: missing");
    if (read_string(&host, v, facts->hostname, "hostname", err) < 0)
        return -1;
    if (!facts->hostname[0])
        return tbm_errprintf(err, "hostname: empty");
    return 0;
}

/* Objects whose members live directly in tbm_host_facts_t. */
static int read_sections(json_object *doc, tbm_host_facts_t *facts, tbm_err_t *err)
{
    json_object *v;

    if (!json_object_object_get_ex(doc, "hardware", &v))
        return tbm_errprintf(err, "hardware: missing");
    if (read_object(hardware_fields, NFIELDS(hardware_fields), v, facts, "hardware", err) < 0)
        return -1;
    if (!json_object_object_get_ex(doc, "os", &v))
        return tbm_errprintf(err, "os: missing");
    return read_object(os_fields, NFIELDS(os_fields), v, facts, "os", err);
}

static int read_doc(json_object *doc, tbm_host_facts_t *facts, tbm_err_t *err)
{
    json_object *v;
    int i;

    if (read_header(doc, facts, err) < 0 || read_sections(doc, facts, err) < 0 || read_rdma(doc, facts, err) < 0)
        return -1;
    if (read_array(port_fields, NFIELDS(port_fields), doc, "thunderbolt", facts->ports, &facts->n_ports,
                   sizeof(facts->ports[0]), TBM_MAX_PORTS, err) < 0 ||
        read_array(iface_fields, NFIELDS(iface_fields), doc, "interfaces", facts->ifaces, &facts->n_ifaces,
                   sizeof(facts->ifaces[0]), TBM_MAX_IFACES, err) < 0)
        return -1;
    for (i = 0; i < facts->n_ifaces; i++)
        if (!facts->ifaces[i].name[0])
            return tbm_errprintf(err, "interfaces[%d].name: empty", i);
    if (json_object_object_get_ex(doc, "unknown", &v))   /* optional */
        return read_object(unknown_fields, NFIELDS(unknown_fields), v, facts, "unknown", err);
    return 0;
}

int tbm_facts_from_json(const char *text, size_t len, tbm_host_facts_t *facts, tbm_err_t *err)
{
    tbm_err_t why;
    json_object *doc;
    int rc;

    tbm_facts_init(facts);
    tbm_errclear(&why);
    doc = tbm_json_parse(text, len, &why);
    rc = doc ? read_doc(doc, facts, &why) : -1;
    json_object_put(doc);
    if (rc < 0) {
        tbm_facts_init(facts);
        return tbm_errprintf(err, "facts: %s; produce the document again with `macnode probe` of this release",
                             why.msg);
    }
    return 0;
}
