/* tbm_fixture.h: reading captured outputs from tests/fixtures for the parser tests (lib/ does no file I/O). */
#ifndef TBM_FIXTURE_H
#define TBM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbm_check.h"
#include "parse_macos.h"
#include "parse_text.h"
#include "conf.h"

/* The whole file tests/fixtures/<rel>, malloc'd, NUL-terminated after *len bytes; NULL when absent. */
static inline char *tbm_fixture_try(const char *rel, size_t *len)
{
    char path[4096];
    FILE *f;
    char *buf = NULL;
    long n;

    snprintf(path, sizeof(path), "%s/%s", tbm_fixtures_dir(), rel);
    f = fopen(path, "rb");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

/* Like tbm_fixture_try, but a missing fixture fails the test. */
static inline char *tbm_fixture(const char *rel, size_t *len)
{
    char *buf = tbm_fixture_try(rel, len);

    ck_assert_msg(buf != NULL, "fixture %s/%s cannot be read", tbm_fixtures_dir(), rel);
    return buf;
}

/* Every replay file of one host folder (tests/fixtures/<dir>/) into raw; absent files stay NULL. */
static inline void tbm_fixture_host(const char *dir, tbm_raw_outputs_t *raw)
{
    char rel[512];
    tbm_raw_t *slot;
    size_t i;

    memset(raw, 0, sizeof(*raw));
    for (i = 0; i < tbm_raw_nsources; i++) {
        snprintf(rel, sizeof(rel), "%s/%s", dir, tbm_raw_sources[i].file);
        slot = tbm_raw_slot(raw, i);
        slot->data = tbm_fixture_try(rel, &slot->len);
    }
}

static inline void tbm_fixture_host_free(tbm_raw_outputs_t *raw)
{
    size_t i;

    for (i = 0; i < tbm_raw_nsources; i++)
        free((void *)tbm_raw_slot(raw, i)->data);
    memset(raw, 0, sizeof(*raw));
}

/* Parse one fixture file with one parser into fresh facts and findings; returns the parser's result. */
typedef int (*tbm_parser_fn)(const char *, size_t, tbm_host_facts_t *, tbm_findings_t *);

static inline int tbm_fixture_parse(const char *rel, tbm_parser_fn parse, tbm_host_facts_t *facts,
                                    tbm_findings_t *fs)
{
    size_t len = 0;
    char *text = tbm_fixture(rel, &len);
    int rc;

    tbm_facts_init(facts);
    tbm_findings_init(fs);
    rc = parse(text, len, facts, fs);
    free(text);
    return rc;
}

/* Parse a string literal the same way. */
static inline int tbm_text_parse(const char *text, tbm_parser_fn parse, tbm_host_facts_t *facts,
                                 tbm_findings_t *fs)
{
    tbm_facts_init(facts);
    tbm_findings_init(fs);
    return parse(text, strlen(text), facts, fs);
}

/* etc/tbmesh.conf.example (the lab's two groups), parsed into c; a bad file fails the test. */
static inline void tbm_example_conf(tbm_conf_t *c)
{
    tbm_err_t err = { { 0 } };
    size_t len;
    char *text = tbm_fixture("../../etc/tbmesh.conf.example", &len);

    ck_assert_msg(tbm_conf_parse(text, len, "tbmesh.conf.example", c, NULL, &err) == 0, "%s", err.msg);
    free(text);
}

#endif
