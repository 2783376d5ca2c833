/* fuzz_json_read.c: libFuzzer harness of the one JSON reader (lib/json_read.c). The first byte picks the
 * rules; the rest is the text. Whatever is accepted has no NUL, fits the limits, and written back by json-c
 * is read again to the same text (so no key twice, no single quotes, no NaN survived); whatever is refused
 * says why, starting with the text's name. The same text is also read as TBMESH_JOB_FILES is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "proto.h"

#define FUZZ_REQUIRE(cond) do { if (!(cond)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_back(json_object *doc, const tbm_json_rules_t *r)
{
    tbm_err_t err;
    const char *one = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN), *two;
    char *copy = strdup(one);
    json_object *back;
    tbm_json_rules_t again = *r;

    again.max_len = 0;   /* written back, a text may be longer (escapes) */
    back = tbm_json_read(copy, strlen(copy), &again, &err);
    FUZZ_REQUIRE(back != NULL);
    two = json_object_to_json_string_ext(back, JSON_C_TO_STRING_PLAIN);
    FUZZ_REQUIRE(strcmp(copy, two) == 0);
    json_object_put(back);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tbm_json_rules_t r = { .what = "fuzz" };
    tbm_jobfile_t files[TBM_FILES_MAX];
    const char *text = (const char *)data + 1;
    size_t len = size ? size - 1 : 0;
    json_object *doc;
    tbm_err_t err;
    int n, i;

    if (size == 0)
        return 0;
    r.max_len = data[0] & 1 ? 256 : 0;
    r.max_depth = data[0] & 2 ? 4 : 0;
    r.want_object = (data[0] & 12) == 4;
    r.want_array = (data[0] & 12) == 8;
    r.fix = data[0] & 16 ? "fix it" : NULL;
    doc = tbm_json_read(text, len, &r, &err);
    if (doc) {
        FUZZ_REQUIRE(memchr(text, 0, len) == NULL && len <= (r.max_len ? r.max_len : 4u << 20));
        FUZZ_REQUIRE(!r.want_object || json_object_is_type(doc, json_type_object));
        FUZZ_REQUIRE(!r.want_array || json_object_is_type(doc, json_type_array));
        read_back(doc, &r);
        json_object_put(doc);
    } else {
        FUZZ_REQUIRE(strncmp(err.msg, "fuzz: ", 6) == 0);
    }
    doc = tbm_proto_json(text, len, "TBMESH_JOB_FILES", &err);
    if (doc && tbm_job_files_read(doc, "TBMESH_JOB_FILES", files, &n, &err) == 0) {
        FUZZ_REQUIRE(n >= 0 && n <= TBM_FILES_MAX);
        for (i = 0; i < n; i++)
            FUZZ_REQUIRE(tbm_job_file_name_ok(files[i].name) && files[i].len <= TBM_FILE_DATA_MAX &&
                         strlen(files[i].data) == files[i].len);
    } else {
        FUZZ_REQUIRE(strncmp(err.msg, "TBMESH_JOB_FILES: ", 18) == 0);
    }
    if (doc)
        json_object_put(doc);
    return 0;
}
