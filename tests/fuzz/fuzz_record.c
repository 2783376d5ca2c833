/* fuzz_record.c: libFuzzer harness of the record reader (lib/record.c) and the TBM1 decoder
 * (lib/record_codec.c): any bytes give a record or a clear error, never a crash; a record that reads writes
 * back to text that reads again to the same text, compares equal to itself, and its summary round-trips. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_record(json_object *rec)
{
    tbm_err_t err;
    json_object *back, *s, *s2;
    tbm_diff_t d;
    size_t n1, n2;
    char *one = tbm_record_text(rec, &n1, &err), *two, *tbm1, *crate;

    FUZZ_REQUIRE(one != NULL);
    back = tbm_record_parse(one, n1, &err);
    FUZZ_REQUIRE(back != NULL);
    two = tbm_record_text(back, &n2, &err);
    FUZZ_REQUIRE(two != NULL && n1 == n2 && memcmp(one, two, n1) == 0);
    FUZZ_REQUIRE(tbm_record_diff(rec, back, &d, &err) == 0 && d.n == 0 && d.why != NULL);
    tbm_diff_free(&d);
    s = tbm_summary_of_record(rec, NULL);
    tbm1 = tbm_summary_encode(s, &err);
    if (tbm1) {   /* a summary too large for AdminComment is refused, never cut */
        s2 = tbm_summary_decode(tbm1, &err);
        FUZZ_REQUIRE(s2 != NULL);
        json_object_put(s2);
    } else {
        FUZZ_REQUIRE(strstr(err.msg, "TBM1 summary: ") == err.msg);
    }
    crate = tbm_record_crate(rec, "record.json", &err);
    FUZZ_REQUIRE(crate != NULL);
    free(crate);
    free(tbm1);
    json_object_put(s);
    free(one);
    free(two);
    json_object_put(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_err_t err;
    json_object *rec, *s;
    char *text = malloc(size + 1);

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    err.msg[0] = '\0';
    rec = tbm_record_parse(text, size, &err);
    if (rec) {
        check_record(rec);
        json_object_put(rec);
    } else {
        FUZZ_REQUIRE(strncmp(err.msg, "record: ", 8) == 0);
    }
    s = tbm_summary_decode(text, &err);
    if (s)
        json_object_put(s);
    else
        FUZZ_REQUIRE(err.msg[0] != '\0');
    free(text);
    return 0;
}
