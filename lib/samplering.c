/* samplering.c: the ring of GPU and power samples (samplering.h). */
#include "samplering.h"

#include <string.h>

#define MAGIC "TBMRING1"

size_t tbm_ring_bytes(uint32_t cap)
{
    return sizeof(tbm_ring_header_t) + (size_t)cap * sizeof(tbm_ring_point_t);
}

void tbm_ring_header_init(tbm_ring_header_t *h, uint32_t cap)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, MAGIC, 8);
    h->cap = cap;
    h->point_size = sizeof(tbm_ring_point_t);
}

int tbm_ring_header_check(const tbm_ring_header_t *h, size_t len, tbm_err_t *err)
{
    if (memcmp(h->magic, MAGIC, 8) != 0)
        return tbm_errprintf(err, "the sample ring is not one (its first bytes are not %s): remove it", MAGIC);
    if (h->point_size != sizeof(tbm_ring_point_t) || h->cap == 0 || h->cap > 10u * TBM_RING_POINTS)
        return tbm_errprintf(err, "the sample ring was written by another version (%u points of %u bytes): "
                             "remove it", h->cap, h->point_size);
    if (len != tbm_ring_bytes(h->cap))
        return tbm_errprintf(err, "the sample ring is %zu bytes where %u points take %zu: remove it", len, h->cap,
                             tbm_ring_bytes(h->cap));
    return 0;
}

int tbm_ring_check(const void *buf, size_t len, tbm_err_t *err)
{
    tbm_ring_header_t h;

    if (len < sizeof(h))
        return tbm_errprintf(err, "the sample ring is %zu bytes, shorter than its header: remove it (the agent "
                             "starts a new one)", len);
    memcpy(&h, buf, sizeof(h));
    return tbm_ring_header_check(&h, len, err);
}

size_t tbm_ring_next_offset(const tbm_ring_header_t *h)
{
    return sizeof(*h) + (size_t)(h->count % h->cap) * sizeof(tbm_ring_point_t);
}

void tbm_ring_window(const void *buf, size_t len, double from, double to, double max_gap_s, tbm_task_gpu_t *out)
{
    tbm_ring_header_t h;
    tbm_ring_point_t p, prev;
    uint64_t n, i, first;
    double sum = 0, dt;
    int have_prev = 0;

    memset(out, 0, sizeof(*out));
    if (tbm_ring_check(buf, len, NULL) < 0 || !(to >= from))
        return;
    memcpy(&h, buf, sizeof(h));
    n = h.count < h.cap ? h.count : h.cap;
    first = h.count - n;
    for (i = first; i < h.count; i++) {
        memcpy(&p, (const char *)buf + sizeof(h) + (size_t)(i % h.cap) * sizeof(p), sizeof(p));
        if (p.t >= from && p.t <= to) {
            if (p.gpu >= 0 && p.gpu <= 1) {
                sum += p.gpu;
                if (out->samples == 0 || p.gpu > out->gpu_peak)
                    out->gpu_peak = p.gpu;
                out->samples++;
            }
            if (p.watts >= 0) {
                out->power_samples++;
                if (have_prev && p.t > prev.t) {   /* a sample's power holds since the one before it */
                    dt = p.t - (prev.t > from ? prev.t : from);
                    out->energy_j += p.watts * (dt > max_gap_s ? max_gap_s : dt);
                }
            }
        }
        if (p.t <= to) {
            prev = p;
            have_prev = 1;
        }
    }
    if (out->samples > 0)
        out->gpu_mean = sum / out->samples;
}
