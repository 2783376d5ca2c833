/* health.c: one Mac's facts against tbmesh.conf (see health.h). */
#include "health.h"
#include "slurmstate.h"

#include <stdio.h>
#include <string.h>

static const tbm_iface_t *iface_of(const tbm_host_facts_t *f, const char *name)
{
    int i;

    for (i = 0; i < f->n_ifaces; i++)
        if (strcmp(f->ifaces[i].name, name) == 0)
            return &f->ifaces[i];
    return NULL;
}

static const tbm_tb_port_t *port_of(const tbm_host_facts_t *f, const char *iface)
{
    int i;

    for (i = 0; i < f->n_ports; i++)
        if (strcmp(f->ports[i].iface, iface) == 0)
            return &f->ports[i];
    return NULL;
}

static int has_rdma(const tbm_host_facts_t *f, const char *dev)
{
    int i;

    for (i = 0; i < f->n_rdma; i++)
        if (strcmp(f->rdma_devices[i], dev) == 0)
            return 1;
    return 0;
}

/* One end of a cable, on this node. */
static void check_end(const tbm_conf_t *c, const tbm_conf_cable_t *cb, int e, const tbm_host_facts_t *f, int rdma,
                      tbm_findings_t *fs)
{
    const tbm_conf_end_t *me = &cb->end[e], *peer = &cb->end[!e];
    const tbm_tb_port_t *port = port_of(f, me->iface);
    const tbm_iface_t *ifc = iface_of(f, me->iface);
    char where[TBM_FINDING_WHERE_MAX];

    snprintf(where, sizeof(where), "%s:%s <-> %s:%s", c->nodes[me->node].name, me->iface, c->nodes[peer->node].name,
             peer->iface);
    if (!port)
        tbm_finding_add(fs, TBM_SEV_ERROR, "port-missing", where, "check networksetup -listallhardwareports; run "
                        "tbmesh inventory again if the Mac was re-cabled", "no Thunderbolt port is bound to %s",
                        me->iface);
    else if (!port->connected || !port->peer_uuid[0])
        tbm_finding_add(fs, TBM_SEV_ERROR, "cable-missing", where, "plug the cable back in (or run tbmesh "
                        "inventory if the lab was re-cabled)", "nothing is at the other end of Thunderbolt %d",
                        port->receptacle);
    else if (cb->speed_gbps > 0 && port->speed_gbps > 0 && port->speed_gbps < cb->speed_gbps)
        tbm_finding_add(fs, TBM_SEV_WARNING, "link-slow", where, "reseat the cable or use a Thunderbolt 5 cable",
                        "the link runs at %d Gb/s; tbmesh.conf says %d", port->speed_gbps, cb->speed_gbps);
    if (!ifc)
        tbm_finding_add(fs, TBM_SEV_ERROR, "iface-missing", where, "check the Thunderbolt network ports in System "
                        "Settings", "interface %s does not exist", me->iface);
    else if (!ifc->up)
        tbm_finding_add(fs, TBM_SEV_ERROR, "iface-down", where, "bring it up: macnode netplan --apply",
                        "interface %s is down", me->iface);
    else if (me->ipv4[0] && strcmp(ifc->ipv4, me->ipv4) != 0)
        tbm_finding_add(fs, TBM_SEV_ERROR, "addr-wrong", where, "put the plan back: macnode netplan --apply",
                        "%s has %s, tbmesh.conf plans %s", me->iface, ifc->ipv4[0] ? ifc->ipv4 : "no IPv4 address",
                        me->ipv4);
    if (rdma && me->rdma[0]) {
        if (f->rdma_enabled == 0)
            tbm_finding_add(fs, TBM_SEV_ERROR, "rdma-disabled", where, "enable it from Recovery: rdma_ctl enable",
                            "RDMA is disabled on this Mac");
        else if (!has_rdma(f, me->rdma))
            tbm_finding_add(fs, TBM_SEV_ERROR, "rdma-missing", where, "check ibv_devices; reseat the cable",
                            "RDMA device %s is missing", me->rdma);
    }
}

size_t tbm_health_check(const tbm_conf_t *conf, const char *node, const tbm_host_facts_t *facts, tbm_findings_t *fs)
{
    size_t before = tbm_findings_count(fs, TBM_SEV_ERROR), i;
    const tbm_iface_t *br;
    int n = tbm_conf_node(conf, node), e, cables = 0;

    if (n < 0) {
        tbm_finding_add(fs, TBM_SEV_ERROR, "node-unknown", node, "add it with tbmesh inventory, or check the name",
                        "%s is not a node of tbmesh.conf", node);
        return tbm_findings_count(fs, TBM_SEV_ERROR) - before;
    }
    for (i = 0; i < conf->n_cables; i++)
        for (e = 0; e < 2; e++)
            if (conf->cables[i].end[e].node == n) {
                check_end(conf, &conf->cables[i], e, facts,
                          conf->groups[conf->nodes[n].group].caps.rdma || conf->nodes[n].rdma_subset, fs);
                cables++;
            }
    if (cables == 0)
        tbm_finding_add(fs, TBM_SEV_WARNING, "no-cables", node, "run tbmesh inventory once the Mac is cabled",
                        "tbmesh.conf lists no cable of %s", node);
    br = iface_of(facts, "bridge0");
    if (br && br->up)
        tbm_finding_add(fs, TBM_SEV_ERROR, "bridge0-up", node, "take it down: macnode netplan --apply",
                        "bridge0 is up: it takes the Thunderbolt interfaces that MLX needs one by one");
    return tbm_findings_count(fs, TBM_SEV_ERROR) - before;
}

void tbm_health_reason(const tbm_findings_t *fs, char *buf, size_t len)
{
    size_t i, errors = tbm_findings_count(fs, TBM_SEV_ERROR), room;
    char more[48] = "";

    if (len == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < fs->n && fs->items[i].severity < TBM_SEV_ERROR; i++)
        ;
    if (i == fs->n)
        return;
    if (errors > 1)
        snprintf(more, sizeof(more), " (and %zu more)", errors - 1);
    room = len > strlen(more) + 1 ? len - strlen(more) : len;
    snprintf(buf, room, TBM_HEALTH_REASON_PREFIX "%s at %s: %s", fs->items[i].code, fs->items[i].where,
             fs->items[i].what);
    if (strlen(buf) + strlen(more) < len)
        strcat(buf, more);
}

tbm_drain_state_t tbm_health_drain_state(const char *line)
{
    tbm_slurm_node_t n;

    if (!line || tbm_slurm_node_parse(line, strcspn(line, "\n"), &n, NULL) < 0)
        return TBM_DRAIN_UNKNOWN;
    if (!n.drain)
        return TBM_DRAIN_NONE;
    return strncmp(n.reason, TBM_HEALTH_REASON_PREFIX, strlen(TBM_HEALTH_REASON_PREFIX)) == 0 ? TBM_DRAIN_OURS
                                                                                              : TBM_DRAIN_OTHER;
}
