/* sample_darwin.c: the sampler's OS readings on macOS (sample_os.h): the CPU ticks of host_statistics
 * (HOST_CPU_LOAD_INFO), memory from hw.memsize and host_statistics64 (HOST_VM_INFO64: in use is what
 * Activity Monitor calls used, app memory + wired + compressed), the pressure level from
 * kern.memorystatus_vm_pressure_level, and an interface's flags and 64-bit counters from the routing
 * sysctl (NET_RT_IFLIST2, struct if_msghdr2). Built on macOS only. */
#include "config.h"
#include "sample_os.h"

#ifdef __APPLE__
#include <errno.h>
#include <mach/mach.h>
#include <net/if.h>
#include <net/route.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysctl.h>

int sample_os_cpu(tbm_cpu_ticks_t *t, tbm_err_t *err)
{
    host_cpu_load_info_data_t info;
    mach_msg_type_number_t count = HOST_CPU_LOAD_INFO_COUNT;
    kern_return_t kr = host_statistics(mach_host_self(), HOST_CPU_LOAD_INFO, (host_info_t)&info, &count);

    if (kr != KERN_SUCCESS)
        return tbm_errprintf(err, "host_statistics(HOST_CPU_LOAD_INFO) failed: %s", mach_error_string(kr));
    t->busy = (uint64_t)info.cpu_ticks[CPU_STATE_USER] + info.cpu_ticks[CPU_STATE_SYSTEM] +
              info.cpu_ticks[CPU_STATE_NICE];
    t->total = t->busy + info.cpu_ticks[CPU_STATE_IDLE];
    return 0;
}

int sample_os_memory(tbm_mac_sample_t *s, tbm_err_t *err)
{
    uint64_t memsize = 0;
    size_t len = sizeof(memsize);
    vm_statistics64_data_t vm;
    mach_msg_type_number_t count = HOST_VM_INFO64_COUNT;
    vm_size_t page = 0;
    int level = 0;
    uint64_t app;
    kern_return_t kr;

    if (sysctlbyname("hw.memsize", &memsize, &len, NULL, 0) < 0)
        return tbm_errprintf(err, "sysctl hw.memsize: %s", strerror(errno));
    s->mem_total = tbm_reported((double)memsize);
    kr = host_statistics64(mach_host_self(), HOST_VM_INFO64, (host_info64_t)&vm, &count);
    if (kr != KERN_SUCCESS || host_page_size(mach_host_self(), &page) != KERN_SUCCESS)
        return tbm_errprintf(err, "host_statistics64(HOST_VM_INFO64) failed: %s", mach_error_string(kr));
    app = vm.internal_page_count > vm.purgeable_count ? vm.internal_page_count - vm.purgeable_count : 0;
    s->mem_used = tbm_reported((double)((app + vm.wire_count + vm.compressor_page_count) * (uint64_t)page));
    len = sizeof(level);
    if (sysctlbyname("kern.memorystatus_vm_pressure_level", &level, &len, NULL, 0) == 0)
        s->mem_pressure = tbm_memory_pressure_level(level);
    return 0;
}

int sample_os_link(const char *iface, tbm_ms_link_t *l, tbm_err_t *err)
{
    int mib[6] = { CTL_NET, PF_ROUTE, 0, 0, NET_RT_IFLIST2, 0 };
    unsigned idx = if_nametoindex(iface);
    size_t len = 0;
    char *buf, *p;

    if (idx == 0) {
        l->up = -1;
        return 0;
    }
    mib[5] = (int)idx;
    if (sysctl(mib, 6, NULL, &len, NULL, 0) < 0 || !(buf = malloc(len)))
        return tbm_errprintf(err, "%s: sysctl NET_RT_IFLIST2: %s", iface, strerror(errno));
    if (sysctl(mib, 6, buf, &len, NULL, 0) < 0) {
        free(buf);
        return tbm_errprintf(err, "%s: sysctl NET_RT_IFLIST2: %s", iface, strerror(errno));
    }
    l->up = -1;
    for (p = buf; p + sizeof(struct if_msghdr) <= buf + len;) {
        const struct if_msghdr *ifm = (const struct if_msghdr *)(void *)p;
        if (ifm->ifm_msglen == 0)
            break;
        if (ifm->ifm_type == RTM_IFINFO2 && ifm->ifm_index == idx && p + sizeof(struct if_msghdr2) <= buf + len) {
            const struct if_msghdr2 *m2 = (const struct if_msghdr2 *)(void *)p;
            l->up = (m2->ifm_flags & IFF_UP) && (m2->ifm_flags & IFF_RUNNING);
            l->rx_bytes = tbm_reported((double)m2->ifm_data.ifi_ibytes);
            l->tx_bytes = tbm_reported((double)m2->ifm_data.ifi_obytes);
            l->rx_packets = tbm_reported((double)m2->ifm_data.ifi_ipackets);
            l->tx_packets = tbm_reported((double)m2->ifm_data.ifi_opackets);
            l->rx_errors = tbm_reported((double)m2->ifm_data.ifi_ierrors);
            l->tx_errors = tbm_reported((double)m2->ifm_data.ifi_oerrors);
            break;
        }
        p += ifm->ifm_msglen;
    }
    free(buf);
    return 0;
}
#endif
