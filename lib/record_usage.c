/* record_usage.c: a record's "usage" from what each step's end left on its node (the parts): Slurm's step
 * accounting in direct mode, the Mac's agent per task in bridge mode, or why a node could not say. */
#include "record.h"

#include <stdio.h>
#include <string.h>

#include "json_read.h"

#define SRC_SLURM "slurmstepd (Slurm's step accounting)"
#define SRC_AGENT "macnoded (the Mac's agent: wait4 of the task, and its wall time)"

static void add_str(json_object *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_object_add(o, key, json_object_new_string(v));
}

static void add_int(json_object *to, const char *key, json_object *from, const char *from_key)
{
    json_object *v = tbm_json_typed(from, from_key, json_type_int);

    if (v)
        json_object_object_add(to, key, json_object_new_int64(json_object_get_int64(v)));
}

static json_object *entry(const char *node, const char *step, const char *source)
{
    json_object *u = json_object_new_object();

    add_str(u, "node", node ? node : "?");
    add_str(u, "step", step);
    add_str(u, "source", source);
    return u;
}

static void add_why(json_object *usage, const char *node, const char *step, const char *why)
{
    json_object *u = entry(node, step, SRC_AGENT);

    add_str(u, "why", why);
    json_object_array_add(usage, u);
}

/* The entries of one part (one step on one node). */
static void part_usage(json_object *p, json_object *usage)
{
    json_object *tasks = tbm_json_typed(p, "agent_usage", json_type_array), *v, *u;
    const char *node = tbm_json_str(p, "node");
    char step[24], why[200];
    size_t i;

    snprintf(step, sizeof(step), "%lld", (long long)json_object_get_int64(json_object_object_get(p, "step")));
    if (tbm_json_typed(p, "cpu_user_us", json_type_int)) {
        u = entry(node, step, SRC_SLURM);
        add_int(u, "cpu_user_us", p, "cpu_user_us");
        add_int(u, "cpu_system_us", p, "cpu_system_us");
        add_int(u, "max_rss_kb", p, "max_rss_kb");
        json_object_array_add(usage, u);
    }
    if (!json_object_get_boolean(json_object_object_get(p, "bridge")))
        return;
    for (i = 0; tasks && i < json_object_array_length(tasks); i++) {
        json_object *t = json_object_array_get_idx(tasks, i), *ru = tbm_json_typed(t, "rusage", json_type_object);
        u = entry(node, step, SRC_AGENT);
        add_int(u, "task", t, "task");
        add_int(u, "cpu_user_us", ru, "utime_us");
        add_int(u, "cpu_system_us", ru, "stime_us");
        add_int(u, "max_rss_kb", ru, "maxrss_kb");
        add_int(u, "wall_us", ru, "wall_us");
        json_object_array_add(usage, u);
    }
    if ((v = tbm_json_typed(p, "agent_running", json_type_int)) && json_object_get_int64(v) > 0) {
        snprintf(why, sizeof(why), "%lld task(s) still ran on the Mac when the step ended on the bridge host; the "
                 "agent had not reaped them", (long long)json_object_get_int64(v));
        add_why(usage, node, step, why);
    } else if (!tasks) {
        v = tbm_json_typed(p, "agent_usage_why", json_type_string);
        add_why(usage, node, step, v ? json_object_get_string(v) : "the step's end did not ask the Mac's agent");
    } else if (json_object_array_length(tasks) == 0) {
        add_why(usage, node, step, "the agent ran no task of this step (the forwarder failed before the spawn)");
    }
}

json_object *tbm_record_usage_of_parts(json_object *parts, int bridge)
{
    json_object *usage = json_object_new_array();
    size_t i;

    for (i = 0; parts && i < json_object_array_length(parts); i++) {
        json_object *p = json_object_array_get_idx(parts, i);
        if (json_object_is_type(p, json_type_object) && !json_object_object_get_ex(p, "unreadable", NULL)) {
            bridge |= json_object_get_boolean(json_object_object_get(p, "bridge"));
            part_usage(p, usage);
        }
    }
    if (json_object_array_length(usage))
        return usage;
    json_object_put(usage);
    return tbm_record_absent(bridge ? "no srun step ran on the Macs (a bridge-mode batch script itself runs on "
                                      "the bridge host)"
                                    : "no step of the job reported its resource use");
}
