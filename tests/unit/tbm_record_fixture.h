/* tbm_record_fixture.h: the record fixtures (tests/fixtures/records) as parsed records. */
#ifndef TBM_RECORD_FIXTURE_H
#define TBM_RECORD_FIXTURE_H

#include "tbm_fixture.h"
#include "record.h"

static inline json_object *tbm_record_fixture(const char *name)
{
    char rel[256];
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text;
    json_object *rec;

    snprintf(rel, sizeof(rel), "records/%s", name);
    text = tbm_fixture(rel, &len);
    rec = tbm_record_parse(text, len, &err);
    free(text);
    ck_assert_msg(rec != NULL, "%s: %s", name, err.msg);
    return rec;
}

#endif
