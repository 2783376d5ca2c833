/* fuzz_conf.c: libFuzzer harness of the tbmesh.conf parser: any bytes give a configuration or errors,
 * never a crash; an accepted file is written and read back equal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_findings_t errors;
    tbm_err_t err = {{0}};
    tbm_conf_t c, back;
    char *text;

    tbm_findings_init(&errors);
    if (tbm_conf_parse((const char *)data, size, "fuzz.conf", &c, &errors, &err) == 0) {
        text = tbm_conf_write(&c);
        if (!text || tbm_conf_parse(text, strlen(text), "written", &back, NULL, &err) != 0 ||
            !tbm_conf_equal(&c, &back))
            abort();
        tbm_conf_free(&back);
        free(text);
        tbm_conf_free(&c);
    } else if (errors.n == 0 || !err.msg[0]) {
        abort();
    }
    tbm_findings_free(&errors);
    return 0;
}
