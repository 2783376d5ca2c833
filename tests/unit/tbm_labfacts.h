/* tbm_labfacts.h: builds hosts' facts for tests and benchmarks: Macs, and cables between them with
 * matching domain UUIDs, interfaces, /30 addresses and RDMA devices (header only). */
#ifndef TBM_LABFACTS_H
#define TBM_LABFACTS_H

#include <stdio.h>
#include <string.h>

#include "facts.h"

/* A Mac with no port yet: macOS 26.2, M3 Ultra, 28 cores, 96 GiB, bridge0 down. */
static inline void lab_host(tbm_host_facts_t *f, const char *name)
{
    memset(f, 0, sizeof(*f));
    snprintf(f->hostname, sizeof(f->hostname), "%s", name);
    snprintf(f->model_name, sizeof(f->model_name), "Mac Studio");
    snprintf(f->model_id, sizeof(f->model_id), "Mac15,14");
    snprintf(f->chip, sizeof(f->chip), "Apple M3 Ultra");
    f->memory_bytes = 96ull << 30;
    f->cores_performance = 20;
    f->cores_efficiency = 8;
    snprintf(f->os_name, sizeof(f->os_name), "macOS");
    snprintf(f->os_version, sizeof(f->os_version), "26.2");
    snprintf(f->os_build, sizeof(f->os_build), "25C56");
    f->rdma_enabled = 1;
    snprintf(f->ifaces[0].name, TBM_IFNAME_MAX, "bridge0");
    snprintf(f->ifaces[0].hwport, TBM_HOST_MAX, "Thunderbolt Bridge");
    f->ifaces[0].prefix_len = -1;
    f->n_ifaces = 1;
}

/* `n` Macs named prefix%02d starting at number `first`. */
static inline void lab_hosts(tbm_host_facts_t *f, size_t n, const char *prefix, int first)
{
    char name[TBM_HOST_MAX];
    size_t i;

    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "%s%02d", prefix, first + (int)i);
        lab_host(&f[i], name);
    }
}

/* Add one port end on host f (index h in the lab): interface en<2+k>, address, RDMA device if rdma. */
static inline int lab_end(tbm_host_facts_t *f, int h, int speed, int rdma, const char *peer_uuid,
                          const char *ip)
{
    unsigned k = (unsigned)f->n_ports % TBM_MAX_PORTS;
    tbm_tb_port_t *p = &f->ports[k];
    tbm_iface_t *i = &f->ifaces[f->n_ifaces];

    p->receptacle = (int)k + 1;
    snprintf(p->bus, sizeof(p->bus), "thunderboltusb4_bus_%u", k);
    snprintf(p->domain_uuid, sizeof(p->domain_uuid), "UUID-%04d-%02u", h, k);
    p->speed_gbps = speed;
    p->connected = 1;
    snprintf(p->peer_uuid, sizeof(p->peer_uuid), "%s", peer_uuid);
    snprintf(p->peer_name, sizeof(p->peer_name), "Mac Studio");
    snprintf(p->iface, sizeof(p->iface), "en%u", k + 2);
    snprintf(i->name, sizeof(i->name), "en%u", k + 2);
    snprintf(i->hwport, sizeof(i->hwport), "Thunderbolt %u", k + 1);
    snprintf(i->ipv4, sizeof(i->ipv4), "%.15s", ip);
    i->prefix_len = 30;
    i->up = i->active = 1;
    if (rdma)
        snprintf(f->rdma_devices[f->n_rdma++], TBM_IFNAME_MAX, "rdma_en%u", k + 2);
    f->n_ifaces++;
    return f->n_ports++;
}

/* Cable number c between hosts a and b of the lab array f: 10.x.y.{1,2}/30. */
static inline void lab_cable(tbm_host_facts_t *f, int a, int b, int c, int speed, int rdma)
{
    char ua[TBM_UUID_MAX], ub[TBM_UUID_MAX], ipa[32], ipb[32];

    snprintf(ua, sizeof(ua), "UUID-%04d-%02d", a, f[a].n_ports);
    snprintf(ub, sizeof(ub), "UUID-%04d-%02d", b, f[b].n_ports);
    snprintf(ipa, sizeof(ipa), "10.%d.0.%d", (c / 64) % 256, (c % 64) * 4 + 1);
    snprintf(ipb, sizeof(ipb), "10.%d.0.%d", (c / 64) % 256, (c % 64) * 4 + 2);
    lab_end(&f[a], a, speed, rdma, ub, ipa);
    lab_end(&f[b], b, speed, rdma, ua, ipb);
}

/* A full mesh over f[first .. first+n); returns the next cable number. */
static inline int lab_mesh(tbm_host_facts_t *f, int first, int n, int c, int speed, int rdma)
{
    int i, j;

    for (i = first; i < first + n; i++)
        for (j = i + 1; j < first + n; j++)
            lab_cable(f, i, j, c++, speed, rdma);
    return c;
}

/* A ring over f[first .. first+n) (n >= 3), or a chain when closed is 0. */
static inline int lab_ring(tbm_host_facts_t *f, int first, int n, int c, int speed, int rdma, int closed)
{
    int i;

    for (i = first; i + 1 < first + n; i++)
        lab_cable(f, i, i + 1, c++, speed, rdma);
    if (closed)
        lab_cable(f, first + n - 1, first, c++, speed, rdma);
    return c;
}

/* The embedded lab: studio-a mac[01-04] TB5 RDMA mesh, mini-b mac[05-08] TB4 ring without RDMA. */
static inline void lab_embedded(tbm_host_facts_t *f)
{
    int c, i;

    lab_hosts(f, 8, "mac", 1);
    for (i = 4; i < 8; i++) {
        snprintf(f[i].model_name, TBM_HOST_MAX, "Mac mini");
        snprintf(f[i].model_id, TBM_HOST_MAX, "Mac16,10");
        snprintf(f[i].chip, TBM_HOST_MAX, "Apple M4");
        f[i].memory_bytes = 16ull << 30;
        f[i].cores_performance = 4;
        f[i].cores_efficiency = 6;
        f[i].rdma_enabled = 1;     /* TB4 Macs may say enabled and list no device */
    }
    c = lab_mesh(f, 0, 4, 0, 80, 1);
    lab_ring(f, 4, 4, c, 40, 0, 1);
}

#endif
