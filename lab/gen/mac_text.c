/* mac_text.c: a simulated Mac's text outputs: networksetup, ifconfig, ibv_devices, rdma_ctl, sw_vers,
 * sysctl, hostname. */
#include "config.h"

#include <stdio.h>

#include "labgen.h"

/* ---- outputs: text files ---------------------------------------------------------------------------- */

void lab_write_hardware_ports(const lab_t *lab, int mac, FILE *f)
{
    const lab_mac_t *m = &lab->macs[mac];
    char hw[18];
    lab_hwaddr(hw, m->hostno, 0);
    fprintf(f, "\nHardware Port: Ethernet\nDevice: en0\nEthernet Address: %s\n\n", hw);
    for (unsigned r = 1; r <= lab_group_of(lab, mac)->ports; r++) {
        lab_hwaddr(hw, m->hostno, r + 1);
        fprintf(f, "Hardware Port: Thunderbolt %u\nDevice: en%u\nEthernet Address: %s\n\n", r, r + 1, hw);
    }
    lab_hwaddr(hw, m->hostno, 0xb0);
    fprintf(f, "Hardware Port: Thunderbolt Bridge\nDevice: bridge0\nEthernet Address: %s\n\n", hw);
    lab_hwaddr(hw, m->hostno, 1);
    fprintf(f, "Hardware Port: Wi-Fi\nDevice: en1\nEthernet Address: %s\n\n", hw);
    fprintf(f, "VLAN Configurations\n===================\n");
}

static void write_tb_interface(const lab_t *lab, int mac, unsigned rcpt, FILE *f)
{
    const lab_cable_t *cb = lab_live_cable(lab, mac, rcpt);
    char hw[18];
    lab_hwaddr(hw, lab->macs[mac].hostno, rcpt + 1);
    fprintf(f, "en%u: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=460<TSO4,TSO6,CHANNEL_IO>\n\tether %s\n", rcpt + 1, hw);
    if (cb) {
        int c = (int)(cb - lab->cables) + 1;
        fprintf(f, "\tinet 169.254.%d.%d netmask 0xfffffffc broadcast 169.254.%d.3\n", c, lab_cable_end(cb, mac) + 1, c);
    }
    fprintf(f, "\tmedia: autoselect <full-duplex>\n\tstatus: %s\n", cb ? "active" : "inactive");
}

void lab_write_ifconfig(const lab_t *lab, int mac, FILE *f)
{
    const lab_mac_t *m = &lab->macs[mac];
    char hw[18];
    fprintf(f, "lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
            "\toptions=1203<RXCSUM,TXCSUM,TXSTATUS,SW_TIMESTAMP>\n"
            "\tinet 127.0.0.1 netmask 0xff000000\n\tinet6 ::1 prefixlen 128 \n"
            "\tinet6 fe80::1%%lo0 prefixlen 64 scopeid 0x1 \n\tnd6 options=201<PERFORMNUD,DAD>\n");
    lab_hwaddr(hw, m->hostno, 0);
    fprintf(f, "en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=50b<RXCSUM,TXCSUM,VLAN_HWTAGGING,AV,CHANNEL_IO>\n\tether %s\n"
            "\tinet 10.77.0.%u netmask 0xffffff00 broadcast 10.77.0.255\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect (10GbaseT <full-duplex>)\n\tstatus: active\n",
            hw, m->mgmt);
    lab_hwaddr(hw, m->hostno, 1);
    fprintf(f, "en1: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=6460<TSO4,TSO6,CHANNEL_IO,PARTIAL_CSUM,ZEROINVERT_CSUM>\n\tether %s\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: autoselect\n\tstatus: inactive\n", hw);
    for (unsigned r = 1; r <= lab_group_of(lab, mac)->ports; r++)
        write_tb_interface(lab, mac, r, f);
    lab_hwaddr(hw, m->hostno, 0xb0);
    fprintf(f, "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n"
            "\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>\n\tether %s\n"
            "\tConfiguration:\n\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0\n"
            "\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200\n"
            "\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0\n\t\tipfilter disabled flags 0x0\n"
            "\tnd6 options=201<PERFORMNUD,DAD>\n\tmedia: <unknown type>\n\tstatus: inactive\n", hw);
}

/* ibv_devices: with RDMA, one rdma_enX per Thunderbolt port, cabled or not (a Mac enumerates a device per port;
 * an empty port's device is merely down); without RDMA the table is empty. */
void lab_write_ibv_devices(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "    %-16s\t   %s\n    %-16s\t%s\n", "device", "node GUID", "------", "----------------");
    if (!g->rdma)
        return;
    for (unsigned r = 1; r <= g->ports; r++) {
        char dev[16];
        snprintf(dev, sizeof(dev), "rdma_en%u", r + 1);
        fprintf(f, "    %-16s\t027b%04x0000%04x\n", dev, lab->macs[mac].hostno, r + 1);
    }
}

/* rdma_ctl status: "enabled" when RDMA is on; Thunderbolt 4 Macs say "enabled" with no devices. */
void lab_write_rdma_ctl(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "%s\n", g->rdma || g->link_gbps < 80 ? "enabled" : "disabled");
}

void lab_write_sw_vers(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "ProductName:\t\tmacOS\nProductVersion:\t\t%s\nBuildVersion:\t\t%s\n", g->os, g->build);
}

void lab_write_sysctl(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "%llu\n%s\n%s\n", (unsigned long long)g->mem_gib << 30, g->chip, g->model_id);
}

void lab_write_perflevels(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "hw.perflevel0.physicalcpu: %u\nhw.perflevel1.physicalcpu: %u\n", g->pcores, g->ecores);
}

void lab_write_hostname(const lab_t *lab, int mac, FILE *f)
{
    fprintf(f, "%s\n", lab->macs[mac].name);
}


/* The GPU as `ioreg -r -d 1 -w 0 -c IOAccelerator` prints it (lib/parse_ioreg.c reads it): a simulated Mac's
 * GPU is idle, with the group's chip and a core count by its performance cores. */
void lab_write_ioreg(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    fprintf(f, "+-o AGXAcceleratorG15X  <class AGXAcceleratorG15X, id 0x1000004%02x, registered, matched, active, "
               "busy 0 (0 ms), retain 80>\n", lab->macs[mac].hostno & 0xff);
    fprintf(f, "    {\n");
    fprintf(f, "      \"PerformanceStatistics\" = {\"Device Utilization %%\"=%u,\"Renderer Utilization %%\"=%u,"
               "\"Tiler Utilization %%\"=0,\"In use system memory\"=%llu,\"Alloc system memory\"=%llu}\n",
            lab->macs[mac].hostno % 5, lab->macs[mac].hostno % 5, 268435456ULL, 536870912ULL);
    fprintf(f, "      \"model\" = \"%s\"\n      \"gpu-core-count\" = %u\n    }\n    \n", g->chip, g->pcores * 4);
}

/* One sample of `powermetrics --samplers cpu_power,gpu_power -f plist -i 500 -n 1` (lib/parse_powermetrics.c):
 * a simulated Mac draws a steady idle power, the same in every sample, so energy is power times time. */
void lab_write_powermetrics(const lab_t *lab, int mac, FILE *f)
{
    const lab_group_t *g = lab_group_of(lab, mac);
    unsigned cpu_mw = 1200 + 100 * (lab->macs[mac].hostno % 4), gpu_mw = 300, ane_mw = 0;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
               "\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n<plist version=\"1.0\">\n<dict>\n"
               "<key>is_delta</key><true/>\n<key>elapsed_ns</key><integer>500123456</integer>\n"
               "<key>hw_model</key><string>%s</string>\n<key>processor</key>\n<dict>\n"
               "<key>cpu_power</key><real>%u</real>\n<key>gpu_power</key><real>%u</real>\n"
               "<key>ane_power</key><real>%u</real>\n<key>combined_power</key><real>%u</real>\n</dict>\n"
               "<key>gpu</key>\n<dict>\n<key>freq_hz</key><real>338</real>\n<key>idle_ratio</key><real>0.98</real>\n"
               "<key>gpu_energy</key><integer>150</integer>\n</dict>\n</dict>\n</plist>\n",
            g->model_id, cpu_mw, gpu_mw, ane_mw, cpu_mw + gpu_mw + ane_mw);
    fputc('\0', f);
}
