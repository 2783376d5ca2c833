/* test_record_crate.c: unit tests of lib/record_crate.c (the Workflow Run RO-Crate of a record). */
#include "tbm_record_fixture.h"

#include "json_read.h"

#define WORKFLOW_PROFILE "https://w3id.org/ro/wfrun/workflow/0.5"
#define PROCESS_PROFILE "https://w3id.org/ro/wfrun/process/0.5"
#define WFCRATE_PROFILE "https://w3id.org/workflowhub/workflow-ro-crate/1.0"

static json_object *by_id(json_object *graph, const char *id)
{
    size_t i;

    for (i = 0; i < json_object_array_length(graph); i++)
        if (!strcmp(tbm_json_str(json_object_array_get_idx(graph, i), "@id"), id))
            return json_object_array_get_idx(graph, i);
    return NULL;
}

static const char *ref_of(json_object *o, const char *key)
{
    return tbm_json_str(json_object_object_get(o, key), "@id");
}

/* 1 when the member `key` of o (a reference or an array of references) refers to id. */
static int refers(json_object *o, const char *key, const char *id)
{
    json_object *v = json_object_object_get(o, key);
    size_t i;

    if (v && json_object_is_type(v, json_type_object))
        return !strcmp(tbm_json_str(v, "@id"), id);
    for (i = 0; v && json_object_is_type(v, json_type_array) && i < json_object_array_length(v); i++)
        if (!strcmp(tbm_json_str(json_object_array_get_idx(v, i), "@id"), id))
            return 1;
    return 0;
}

/* 1 when the value (string or array of strings) holds s. */
static int holds(json_object *v, const char *s)
{
    size_t i;

    if (v && json_object_is_type(v, json_type_string))
        return !strcmp(json_object_get_string(v), s);
    for (i = 0; v && json_object_is_type(v, json_type_array) && i < json_object_array_length(v); i++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(v, i)), s))
            return 1;
    return 0;
}

/* Every {"@id": X} inside an entity refers to an entity of the graph, but for the vocabulary's own IRIs. */
static void refs_resolve(json_object *graph, json_object *v, int top)
{
    size_t i;
    const char *id;

    if (json_object_is_type(v, json_type_array)) {
        for (i = 0; i < json_object_array_length(v); i++)
            refs_resolve(graph, json_object_array_get_idx(v, i), 0);
        return;
    }
    if (!json_object_is_type(v, json_type_object))
        return;
    if (!top && (id = tbm_json_str(v, "@id")) && json_object_object_length(v) == 1) {
        ck_assert_msg(by_id(graph, id) || !strcmp(id, "https://w3id.org/ro/crate/1.1") ||
                          !strncmp(id, "http://schema.org/", 18),
                      "%s is referred to but is not an entity of the crate", id);
        return;
    }
    json_object_object_foreach(v, key, val) {
        (void)key;
        refs_resolve(graph, val, 0);
    }
}

static json_object *crate_of(json_object *rec, json_object **graph)
{
    tbm_err_t err = { { 0 } };
    char *text = tbm_record_crate(rec, "record.json", &err);
    json_object *crate;
    size_t i;

    ck_assert_msg(text != NULL, "%s", err.msg);
    crate = tbm_json_parse(text, strlen(text), &err);
    free(text);
    ck_assert_msg(crate != NULL, "%s", err.msg);
    *graph = json_object_object_get(crate, "@graph");
    for (i = 0; i < json_object_array_length(*graph); i++)
        refs_resolve(*graph, json_object_array_get_idx(*graph, i), 1);
    return crate;
}

START_TEST(a_workflow_run_crate)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *crate, *graph, *action, *root, *meta, *wf, *e, *ctx;
    const char *main_id;

    crate = crate_of(rec, &graph);
    ctx = json_object_object_get(crate, "@context");
    ck_assert(holds(ctx, "https://w3id.org/ro/crate/1.1/context"));
    ck_assert(holds(ctx, "https://w3id.org/ro/terms/workflow-run/context"));   /* sha256, environment */
    meta = by_id(graph, "ro-crate-metadata.json");
    ck_assert(refers(meta, "conformsTo", "https://w3id.org/ro/crate/1.1"));
    ck_assert(refers(meta, "conformsTo", WFCRATE_PROFILE));
    root = by_id(graph, "./");
    ck_assert_str_eq(tbm_json_str(root, "@type"), "Dataset");
    ck_assert(refers(root, "conformsTo", PROCESS_PROFILE));
    ck_assert(refers(root, "conformsTo", WORKFLOW_PROFILE));
    ck_assert(refers(root, "conformsTo", WFCRATE_PROFILE));
    e = by_id(graph, WORKFLOW_PROFILE);
    ck_assert_str_eq(tbm_json_str(e, "name"), "Workflow Run Crate");
    ck_assert_str_eq(tbm_json_str(e, "version"), "0.5");
    ck_assert_str_eq(tbm_json_str(by_id(graph, PROCESS_PROFILE), "version"), "0.5");
    ck_assert(refers(root, "license", "https://spdx.org/licenses/CC0-1.0"));
    /* the main workflow: the batch script, the action's instrument */
    action = by_id(graph, "#job-102");
    ck_assert_str_eq(tbm_json_str(action, "@type"), "CreateAction");
    ck_assert(refers(root, "mentions", "#job-102"));
    main_id = ref_of(root, "mainEntity");
    ck_assert_str_eq(main_id, "#batch-script");   /* the fixture does not say where the script was */
    ck_assert_str_eq(ref_of(action, "instrument"), main_id);
    wf = by_id(graph, main_id);
    ck_assert(holds(json_object_object_get(wf, "@type"), "File"));
    ck_assert(holds(json_object_object_get(wf, "@type"), "SoftwareSourceCode"));
    ck_assert(holds(json_object_object_get(wf, "@type"), "ComputationalWorkflow"));
    ck_assert_str_eq(tbm_json_str(wf, "version"), "0123456789abcdef0123456789abcdef01234567");
    ck_assert_str_eq(tbm_json_str(by_id(graph, ref_of(wf, "programmingLanguage")), "@type"), "ComputerLanguage");
    ck_assert(refers(root, "hasPart", main_id));
    ck_assert(refers(root, "hasPart", "record.json"));
    /* the run */
    ck_assert_str_eq(tbm_json_str(action, "startTime"), "2025-12-01T14:40:02Z");
    ck_assert_str_eq(ref_of(action, "actionStatus"), "http://schema.org/CompletedActionStatus");
    ck_assert_str_eq(ref_of(action, "agent"), "#user-tbm-alice");
    ck_assert_str_eq(tbm_json_str(action, "description"), "sbatch --gres=tbmesh:4 --repro-seed=7 job.sh");
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(action, "environment")), 12);
    json_object_put(crate);
    json_object_put(rec);
}
END_TEST

/* The declared data, model and seed are entities of the crate, objects of the action, each realizing a formal
 * parameter of the workflow's input; the outputs realize its output. */
START_TEST(inputs_and_outputs_are_entities)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *crate, *graph, *action, *wf, *e, *p;

    crate = crate_of(rec, &graph);
    action = by_id(graph, "#job-102");
    wf = by_id(graph, ref_of(action, "instrument"));
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(action, "object")), 3);
    ck_assert(refers(action, "object", "file:///data/train.jsonl"));
    ck_assert(refers(action, "object", "#model"));
    ck_assert(refers(action, "object", "#seed"));
    e = by_id(graph, "#model");
    ck_assert_str_eq(tbm_json_str(e, "@type"), "CreativeWork");
    ck_assert_str_eq(tbm_json_str(e, "identifier"), "mlx-community/Llama-3.2-1B");
    ck_assert_str_eq(tbm_json_str(e, "version"), "abc123");
    ck_assert_str_eq(ref_of(e, "exampleOfWork"), "#param-repro-model");
    e = by_id(graph, "#seed");
    ck_assert_str_eq(tbm_json_str(e, "@type"), "PropertyValue");
    ck_assert_str_eq(tbm_json_str(e, "name"), "repro-seed");
    ck_assert_str_eq(tbm_json_str(e, "value"), "7");
    ck_assert_str_eq(ref_of(e, "exampleOfWork"), "#param-repro-seed");
    p = by_id(graph, "#param-repro-seed");
    ck_assert_str_eq(tbm_json_str(p, "@type"), "FormalParameter");
    ck_assert_str_eq(tbm_json_str(p, "name"), "repro-seed");
    ck_assert_str_eq(tbm_json_str(p, "additionalType"), "Integer");
    e = by_id(graph, "file:///data/train.jsonl");
    ck_assert_str_eq(tbm_json_str(e, "@type"), "File");
    ck_assert_str_eq(tbm_json_str(e, "contentSize"), "1000");
    ck_assert_str_eq(ref_of(e, "exampleOfWork"), "#param-repro-data");
    ck_assert(refers(wf, "input", "#param-repro-data"));
    ck_assert(refers(wf, "input", "#param-repro-model"));
    ck_assert(refers(wf, "input", "#param-repro-seed"));
    ck_assert(refers(action, "result", "file:///home/tbm-alice/run/mesh.bin"));
    ck_assert_str_eq(ref_of(by_id(graph, "file:///home/tbm-alice/run/mesh.bin"), "exampleOfWork"),
                     "#param-repro-output");
    ck_assert(refers(wf, "output", "#param-repro-output"));
    ck_assert(refers(by_id(graph, "./"), "hasPart", "file:///data/train.jsonl"));
    ck_assert(refers(by_id(graph, "./"), "hasPart", "file:///home/tbm-alice/run/mesh.bin"));
    json_object_put(crate);
    json_object_put(rec);
}
END_TEST

/* The script's path (relative to the submit folder) names the workflow; a record that declared nothing has no
 * model, seed or parameters, and every reference still resolves. */
START_TEST(script_path_and_nothing_declared)
{
    json_object *rec = tbm_record_fixture("four-mac.json"), *crate, *graph, *action, *root;

    json_object_object_add(json_object_object_get(rec, "submit"), "script", json_object_new_string("run me.sh"));
    json_object_object_del(rec, "declared");
    crate = crate_of(rec, &graph);
    root = by_id(graph, "./");
    action = by_id(graph, "#job-102");
    ck_assert_str_eq(ref_of(root, "mainEntity"), "file:///home/tbm-alice/run/run%20me.sh");
    ck_assert_str_eq(ref_of(action, "instrument"), "file:///home/tbm-alice/run/run%20me.sh");
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(action, "object")), 0);
    ck_assert_ptr_null(by_id(graph, "#model"));
    ck_assert_ptr_null(by_id(graph, "#seed"));
    ck_assert_ptr_null(by_id(graph, "#param-repro-seed"));
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(action, "result")), 1);
    json_object_put(crate);
    json_object_put(rec);
}
END_TEST

static Suite *crate_suite(void)
{
    Suite *s = suite_create("record_crate");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, a_workflow_run_crate);
    tcase_add_test(tc, inputs_and_outputs_are_entities);
    tcase_add_test(tc, script_path_and_nothing_declared);
    suite_add_tcase(s, tc);
    return s;
}

TBM_CHECK_MAIN(crate_suite)
