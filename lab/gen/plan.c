/* plan.c: what the lab derives from its spec: hardware addresses, UUIDs, the wiring plan and slurm.conf's
 * node lines. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "labgen.h"
#include "slurmconf.h"

/* ---- derived values --------------------------------------------------------------------------------- */

/* Hardware address of interface `ifno` of host `hostno`: locally administered, unique per (host, iface). */
void lab_hwaddr(char out[18], unsigned hostno, unsigned ifno)
{
    snprintf(out, 18, "02:7b:%02x:%02x:00:%02x", (hostno >> 8) & 0xff, hostno & 0xff, ifno & 0xff);
}

/* FNV-1a over the string, then a mixing step so that near names give unrelated bits. */
uint64_t lab_hash64(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

/* A stable UUID derived from a host name and what it names ("receptacle-2", "service_ip"): the Thunderbolt
 * domain UUID of a port, or the UUID of a service. */
void lab_name_uuid(char out[37], const char *host, const char *what)
{
    char key[LAB_NAME_MAX + 32];
    snprintf(key, sizeof(key), "%s/%s", host, what);
    uint64_t hi = lab_hash64(14695981039346656037ULL, key);
    uint64_t lo = lab_hash64(hi ^ 0x74626d6573680000ULL, key);
    /* Shaped like the random (version 4) UUIDs macOS uses. */
    snprintf(out, 37, "%08X-%04X-%04X-%04X-%012llX", (unsigned)(hi >> 32), (unsigned)(hi >> 16) & 0xffff,
             0x4000u | ((unsigned)hi & 0x0fff), 0x8000u | ((unsigned)(lo >> 48) & 0x3fff),
             (unsigned long long)(lo & 0xffffffffffffULL));
}

/* This Mac's end of cable c: 0 or 1. */
int lab_cable_end(const lab_cable_t *cb, int mac)
{
    return cb->mac[0] == mac ? 0 : 1;
}

const lab_group_t *lab_group_of(const lab_t *lab, int mac)
{
    return &lab->groups[lab->macs[mac].group];
}

/* The cable in a receptacle when it is plugged and not cut, else NULL. */
const lab_cable_t *lab_live_cable(const lab_t *lab, int mac, unsigned rcpt)
{
    int c = lab->macs[mac].cable[rcpt];
    return c >= 0 && !lab->cables[c].cut ? &lab->cables[c] : NULL;
}

/* ---- plan ------------------------------------------------------------------------------------------- */

unsigned lab_slurmd_mgmt(const lab_t *lab, int mac)
{
    const lab_group_t *g = lab_group_of(lab, mac);

    if (!g->bridge)
        return lab->macs[mac].mgmt;
    return g->bridge_host < 0 ? 1 : lab->bridges[g->bridge_host].mgmt;
}

void lab_print_plan(const lab_t *lab, FILE *out)
{
    char hw[18], hwb[18];
    for (int i = 0; i < lab->nmacs; i++) {
        const lab_mac_t *m = &lab->macs[i];
        const lab_group_t *g = lab_group_of(lab, i);
        lab_hwaddr(hw, m->hostno, 0);
        fprintf(out, "node\t%s\tgroup=%s\tmode=%s\tmgmt=10.77.0.%u\tmac=%s\tport=%u", m->name, g->name,
                g->bridge ? "bridge" : "direct", m->mgmt, hw, m->port);
        if (g->bridge && g->bridge_host >= 0)
            fprintf(out, "\tbridge=%s", lab->bridges[g->bridge_host].name);
        fputc('\n', out);
    }
    for (int i = 0; i < lab->nbridges; i++) {
        lab_hwaddr(hw, lab->bridges[i].hostno, 0);
        fprintf(out, "bridgehost\t%s\tmgmt=10.77.0.%u\tmac=%s\n", lab->bridges[i].name, lab->bridges[i].mgmt, hw);
    }
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "linux\t%s\tmgmt=10.77.0.%u\tport=%d\n", lab->linux_nodes[i].name, lab->linux_nodes[i].mgmt,
                LAB_DIRECT_PORT);
    for (int c = 0; c < lab->ncables; c++) {
        const lab_cable_t *cb = &lab->cables[c];
        const lab_mac_t *a = &lab->macs[cb->mac[0]], *b = &lab->macs[cb->mac[1]];
        lab_hwaddr(hw, a->hostno, cb->rcpt[0] + 1);
        lab_hwaddr(hwb, b->hostno, cb->rcpt[1] + 1);
        fprintf(out, "cable\t%s\ten%u\t169.254.%d.1/30\t%s\t%s\ten%u\t169.254.%d.2/30\t%s\tstate=%s\n", a->name,
                cb->rcpt[0] + 1, c + 1, hw, b->name, cb->rcpt[1] + 1, c + 1, hwb, cb->cut ? "cut" : "up");
    }
}

/* ---- slurm-nodes ------------------------------------------------------------------------------------ */

/* "26.2" -> "26_2" for a Slurm feature name. */
static void feature_word(char *out, size_t size, const char *s)
{
    snprintf(out, size, "%s", s);
    for (char *p = out; *p; p++)
        if (*p == '.' || *p == '-')
            *p = '_';
}

void lab_print_slurm_nodes(const lab_t *lab, FILE *out)
{
    char gname[LAB_NAME_MAX], os[LAB_NAME_MAX];
    for (int i = 0; i < lab->nmacs; i++) {
        const lab_mac_t *m = &lab->macs[i];
        const lab_group_t *g = lab_group_of(lab, i);
        unsigned long long mib = (unsigned long long)tbm_slurm_real_memory_mib((uint64_t)g->mem_gib << 30);
        feature_word(gname, sizeof(gname), g->name);
        feature_word(os, sizeof(os), g->os);
        fprintf(out, "NodeName=%s NodeAddr=10.77.0.%u Port=%u CPUs=%u RealMemory=%llu Gres=tbmesh:1 "
                "Features=tbmesh,tbmesh_%s%s,macos_%s State=UNKNOWN\n", m->name, lab_slurmd_mgmt(lab, i), m->port,
                g->pcores + g->ecores, mib, gname, g->rdma ? ",rdma" : "", os);
    }
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "NodeName=%s NodeAddr=10.77.0.%u Port=%d CPUs=2 RealMemory=2048 Features=linux State=UNKNOWN\n",
                lab->linux_nodes[i].name, lab->linux_nodes[i].mgmt, LAB_DIRECT_PORT);
    fprintf(out, "PartitionName=mac Nodes=");
    for (int i = 0; i < lab->nmacs; i++)
        fprintf(out, "%s%s", i ? "," : "", lab->macs[i].name);
    fprintf(out, " Default=NO MaxTime=INFINITE State=UP\n");
    if (lab->nlinux == 0)
        return;
    fprintf(out, "PartitionName=linux Nodes=");
    for (int i = 0; i < lab->nlinux; i++)
        fprintf(out, "%s%s", i ? "," : "", lab->linux_nodes[i].name);
    fprintf(out, " Default=YES MaxTime=INFINITE State=UP\n");
}


/* ---- hint ------------------------------------------------------------------------------------------- */

void lab_print_hint(const lab_t *lab, FILE *out)
{
    for (int g = 0; g < lab->ngroups; g++) {
        const lab_group_t *gr = &lab->groups[g];
        int first = 1;
        fprintf(out, "Group=%s Nodes=", gr->name);
        for (int i = 0; i < lab->nmacs; i++)
            if (lab->macs[i].group == g) {
                fprintf(out, "%s%s", first ? "" : ",", lab->macs[i].name);
                first = 0;
            }
        fprintf(out, " Topology=%s Mode=%s Backends=mpi\n", gr->ring ? "ring" : "mesh", gr->bridge ? "bridge" : "direct");
    }
}
