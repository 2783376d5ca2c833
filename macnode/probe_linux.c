/* probe_linux.c: the Linux probe backend (the bridge host, Linux nodes, the lab): host name, OS, memory and
 * cores by kind from hwloc (cpukinds, the same source a Mac's hwloc uses), interfaces and IPv4 addresses
 * from getifaddrs. Linux has no Thunderbolt peers to report: the port list stays empty. */
#include "config.h"
#include "probe.h"

#include <arpa/inet.h>
#include <hwloc.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#ifdef __linux__
#include <netpacket/packet.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int prefix_of(const struct sockaddr *mask)
{
    uint32_t m = ntohl(((const struct sockaddr_in *)mask)->sin_addr.s_addr);
    int n = 0;

    while (m & 0x80000000u) {
        n++;
        m <<= 1;
    }
    return n;
}

static void add_ifaces(tbm_host_facts_t *f, tbm_findings_t *fs)
{
    struct ifaddrs *ifa, *it;
    tbm_iface_t *iface;

    if (getifaddrs(&ifa) < 0) {
        tbm_finding_add(fs, TBM_SEV_WARNING, "ifaddrs-failed", f->hostname, "check /proc and the network stack",
                        "cannot list network interfaces");
        return;
    }
    for (it = ifa; it; it = it->ifa_next) {
        if (!it->ifa_name || strlen(it->ifa_name) >= TBM_IFNAME_MAX)
            continue;
        iface = tbm_facts_get_iface(f, it->ifa_name);
        if (!iface)
            continue;
        iface->up = (it->ifa_flags & IFF_UP) != 0;
        iface->active = (it->ifa_flags & IFF_RUNNING) != 0;
#ifdef __linux__
        if (it->ifa_addr && it->ifa_addr->sa_family == AF_PACKET) {
            const struct sockaddr_ll *ll = (const struct sockaddr_ll *)it->ifa_addr;
            if (ll->sll_halen == 6)
                snprintf(iface->mac, sizeof(iface->mac), "%02x:%02x:%02x:%02x:%02x:%02x", ll->sll_addr[0],
                         ll->sll_addr[1], ll->sll_addr[2], ll->sll_addr[3], ll->sll_addr[4], ll->sll_addr[5]);
        }
#endif
        if (it->ifa_addr && it->ifa_addr->sa_family == AF_INET && !iface->ipv4[0]) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)it->ifa_addr)->sin_addr, iface->ipv4, sizeof(iface->ipv4));
            iface->prefix_len = it->ifa_netmask ? prefix_of(it->ifa_netmask) : 32;
        }
    }
    freeifaddrs(ifa);
}

/* Cores by kind: hwloc ranks CPU kinds by efficiency; the highest is "performance". One kind (or none
 * known): every core counts as performance. */
static void add_cores(hwloc_topology_t topo, tbm_host_facts_t *f)
{
    int nkinds = hwloc_cpukinds_get_nr(topo, 0), k, eff, best = -1, best_eff = -1;
    int total = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int perf = total;

    for (k = 0; set && k < nkinds; k++) {
        if (hwloc_cpukinds_get_info(topo, (unsigned)k, set, &eff, NULL, NULL, 0) == 0 && eff > best_eff) {
            best_eff = eff;
            best = k;
        }
    }
    if (set && nkinds > 1 && best >= 0 && hwloc_cpukinds_get_info(topo, (unsigned)best, set, NULL, NULL, NULL, 0) == 0)
        perf = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
    hwloc_bitmap_free(set);
    f->cores_performance = perf;
    f->cores_efficiency = total - perf;
}

int probe_linux_facts(tbm_host_facts_t *f, tbm_findings_t *fs, tbm_err_t *err)
{
    hwloc_topology_t topo;
    struct utsname un;
    const char *model;

    tbm_facts_init(f);
    if (gethostname(f->hostname, sizeof(f->hostname)) < 0)
        return tbm_errprintf(err, "cannot read this host's name");
    f->hostname[sizeof(f->hostname) - 1] = '\0';
    if (uname(&un) == 0) {
        snprintf(f->os_name, sizeof(f->os_name), "%.*s", (int)sizeof(f->os_name) - 1, un.sysname);
        snprintf(f->os_version, sizeof(f->os_version), "%.*s", (int)sizeof(f->os_version) - 1, un.release);
    }
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0)
        return tbm_errprintf(err, "hwloc cannot read this host's topology; check that /sys and /proc are mounted");
    f->memory_bytes = hwloc_get_root_obj(topo)->total_memory;
    model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "CPUModel");
    if (!model && hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0))
        model = hwloc_obj_get_info_by_name(hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0), "CPUModel");
    if (model)
        snprintf(f->chip, sizeof(f->chip), "%s", model);
    add_cores(topo, f);
    hwloc_topology_destroy(topo);
    f->rdma_enabled = -1;
    add_ifaces(f, fs);
    return 0;
}
