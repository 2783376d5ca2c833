/* record_node.c: a node's facts in its record, from `macnode probe`'s facts (lib/facts.h). */
#include "record.h"

#include <stdio.h>
#include <string.h>

#include "facts.h"

void tbm_record_node_absent(json_object *node, const char *why)
{
    static const char *const keys[] = { "macos", "chip", "memory_bytes", "rdma", "links" };
    size_t i;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        tbm_record_set(node, keys[i], NULL, why);
}

static json_object *str_or_absent(const char *s, const char *why)
{
    return s && *s ? json_object_new_string(s) : tbm_record_absent(why);
}

void tbm_record_node_facts(json_object *node, const tbm_host_facts_t *f)
{
    json_object *macos, *links = json_object_new_array(), *l;
    const tbm_iface_t *ifc;
    char rdma[TBM_MAX_RDMA * (TBM_IFNAME_MAX + 2) + 40];
    int i;

    if (f->os_version[0]) {
        macos = json_object_new_object();
        json_object_object_add(macos, "version", json_object_new_string(f->os_version));
        if (f->os_build[0])
            json_object_object_add(macos, "build", json_object_new_string(f->os_build));
        json_object_object_add(node, "macos", macos);
    } else {
        tbm_record_set(node, "macos", NULL, "sw_vers gave no ProductVersion on the node");
    }
    tbm_record_set(node, "chip", str_or_absent(f->chip, "sysctl gave no machdep.cpu.brand_string"), NULL);
    tbm_record_set(node, "memory_bytes", f->memory_bytes ? json_object_new_int64((int64_t)f->memory_bytes)
                                                         : tbm_record_absent("sysctl gave no hw.memsize"), NULL);
    if (f->rdma_enabled < 0) {
        tbm_record_set(node, "rdma", NULL, "rdma_ctl status gave no answer");
    } else {
        tbm_record_fmt(rdma, sizeof(rdma), "%s", f->rdma_enabled ? "enabled" : "disabled");
        for (i = 0; i < f->n_rdma; i++)
            tbm_record_fmt(rdma + strlen(rdma), sizeof(rdma) - strlen(rdma), "%s%s", i ? "," : ": ",
                           f->rdma_devices[i]);
        if (f->rdma_enabled && !f->n_rdma)
            tbm_record_fmt(rdma + strlen(rdma), sizeof(rdma) - strlen(rdma), ", no devices");
        json_object_object_add(node, "rdma", json_object_new_string(rdma));
    }
    for (i = 0; i < f->n_ports; i++) {
        const tbm_tb_port_t *p = &f->ports[i];
        l = json_object_new_object();
        json_object_object_add(l, "port", json_object_new_int(p->receptacle));
        if (p->iface[0])
            json_object_object_add(l, "iface", json_object_new_string(p->iface));
        json_object_object_add(l, "speed_gbps", json_object_new_int(p->speed_gbps));
        if (p->peer_uuid[0])
            json_object_object_add(l, "peer", json_object_new_string(p->peer_uuid));
        ifc = NULL;
        for (int k = 0; p->iface[0] && k < f->n_ifaces; k++)
            if (!strcmp(f->ifaces[k].name, p->iface))
                ifc = &f->ifaces[k];
        if (ifc && ifc->ipv4[0])
            json_object_object_add(l, "ipv4", json_object_new_string(ifc->ipv4));
        if (ifc)
            json_object_object_add(l, "up", json_object_new_boolean(ifc->up && ifc->active));
        json_object_array_add(links, l);
    }
    json_object_object_add(node, "links", links);
}
