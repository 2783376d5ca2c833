/* time_probe.c: times the probe of one Mac from its captured macOS outputs, as `macnode probe --backend replay`
 * runs it: every output read from its folder (tbm_read_file, as the replay backend does), parsed into the
 * Mac's facts with every cross-check (tbm_facts_parse_all), and the facts written as the probe's JSON. Also
 * the parse alone, on outputs already in memory (what the darwin backend parses once its commands have run).
 * Usage: time_probe FOLDER...  (folders of captured outputs, tests/fixtures/macos/studio-a1 and the like).
 * Prints the median, p95 and max of each over many rounds; the figure is under 20 ms per Mac. Exit 0
 * whatever the figures (no timed assertion), 2 when a folder cannot be read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbmesh.h"
#include "parse_text.h"
#include "timing.h"

#define ROUNDS 500
#define TARGET_MS 20.0
#define MAX_SOURCES 16

/* The folder's outputs into bufs[] and raw (an absent file stays absent, as in the replay backend). -1 when a
 * file is there but cannot be read. */
static int read_outputs(const char *dir, char **bufs, tbm_raw_outputs_t *raw, tbm_err_t *err)
{
    char path[4096];
    size_t i, len;

    memset(raw, 0, sizeof(*raw));
    raw->hostname = "mac01";
    for (i = 0; i < tbm_raw_nsources && i < MAX_SOURCES; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, tbm_raw_sources[i].file);
        bufs[i] = tbm_read_file(path, TBM_RAW_MAX, &len, err);
        if (!bufs[i] && errno != ENOENT)
            return -1;
        tbm_errclear(err);
        tbm_raw_slot(raw, i)->data = bufs[i];
        tbm_raw_slot(raw, i)->len = bufs[i] ? len : 0;
    }
    return 0;
}

static void free_outputs(char **bufs)
{
    size_t i;

    for (i = 0; i < MAX_SOURCES; i++) {
        free(bufs[i]);
        bufs[i] = NULL;
    }
}

/* Parse the outputs into facts and write the probe's JSON; the number of error findings, or -1. */
static int parse_and_write(const tbm_raw_outputs_t *raw, tbm_host_facts_t *f)
{
    tbm_findings_t fs;
    char *json;
    int errors;

    tbm_findings_init(&fs);
    errors = tbm_facts_parse_all(raw, f, &fs);
    json = tbm_facts_to_json_string(f, 1);
    tbm_findings_free(&fs);
    if (!json)
        return -1;
    free(json);
    return errors;
}

static void say(const char *dir, const char *what, double *ms, int errors)
{
    timing_sort(ms, ROUNDS);
    printf("time_probe: %s: %s, %d rounds: median %.3f ms, p95 %.3f ms, max %.3f ms (%d errors found; "
           "the figure wanted: < %.0f ms per Mac)\n", dir, what, ROUNDS, ms[ROUNDS / 2], ms[ROUNDS * 95 / 100],
           ms[ROUNDS - 1], errors, TARGET_MS);
}

int main(int argc, char **argv)
{
    static double whole[ROUNDS], parse[ROUNDS];
    static tbm_host_facts_t facts;
    char *bufs[MAX_SOURCES] = { NULL };
    tbm_raw_outputs_t raw;
    tbm_err_t err = { { 0 } };
    int a, i, errors = 0;
    double t0;

    if (argc < 2) {
        fprintf(stderr, "usage: time_probe FOLDER...   (captured macOS outputs of one Mac each, e.g. "
                        "tests/fixtures/macos/studio-a1)\n");
        return 2;
    }
    for (a = 1; a < argc; a++) {
        for (i = 0; i < ROUNDS; i++) {   /* as the replay backend: read, parse, write */
            t0 = timing_now_ms();
            if (read_outputs(argv[a], bufs, &raw, &err) < 0) {
                fprintf(stderr, "time_probe: %s\n", err.msg);
                free_outputs(bufs);
                return 2;
            }
            errors = parse_and_write(&raw, &facts);
            free_outputs(bufs);
            whole[i] = timing_now_ms() - t0;
        }
        say(argv[a], "read + parse + facts JSON", whole, errors);
        if (read_outputs(argv[a], bufs, &raw, &err) < 0)
            return 2;
        for (i = 0; i < ROUNDS; i++) {   /* the outputs in memory: parse and write only */
            t0 = timing_now_ms();
            errors = parse_and_write(&raw, &facts);
            parse[i] = timing_now_ms() - t0;
        }
        free_outputs(bufs);
        say(argv[a], "parse + facts JSON", parse, errors);
    }
    return 0;
}
