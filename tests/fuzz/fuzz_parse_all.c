/* fuzz_parse_all.c: libFuzzer harness of tbm_facts_parse_all (lib/facts_parse.c): the input is cut at
 * 0x1e bytes into the outputs of the eight commands, so the cross-checks see mixed inputs. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_raw_outputs_t raw;
    tbm_host_facts_t f;
    tbm_findings_t fs;
    const uint8_t *p = data, *end = data + size, *sep;
    size_t i;

    memset(&raw, 0, sizeof(raw));
    for (i = 0; i < tbm_raw_nsources && p <= end; i++) {
        sep = memchr(p, 0x1e, (size_t)(end - p));
        tbm_raw_slot(&raw, i)->data = (const char *)p;
        tbm_raw_slot(&raw, i)->len = (size_t)((sep ? sep : end) - p);
        p = sep ? sep + 1 : end + 1;
    }
    tbm_findings_init(&fs);
    tbm_facts_parse_all(&raw, &f, &fs);
    fuzz_check_parsed(&f);
    fuzz_check_facts(&f);
    tbm_findings_free(&fs);
    return 0;
}
