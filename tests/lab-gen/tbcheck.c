/* tbcheck.c: reads a generated system_profiler_SPThunderboltDataType.json with json-c and prints one line per
 * bus for the lab-gen shell test: receptacle, own domain UUID, status, peer UUID, peer name, speed. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

/* A string member of obj, or "-" when absent or not a string. */
static const char *member(json_object *obj, const char *key)
{
    json_object *v;
    if (!obj || !json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return "-";
    return json_object_get_string(v);
}

/* Prints one bus; returns -1 when its shape is wrong. */
static int print_bus(json_object *bus)
{
    json_object *tag = NULL, *items = NULL, *peer = NULL;
    if (!json_object_object_get_ex(bus, "receptacle_1_tag", &tag)) {
        fprintf(stderr, "tbcheck: bus %s has no receptacle_1_tag\n", member(bus, "_name"));
        return -1;
    }
    if (json_object_object_get_ex(bus, "_items", &items)) {
        if (!json_object_is_type(items, json_type_array) || json_object_array_length(items) != 1) {
            fprintf(stderr, "tbcheck: bus %s: _items is not a list of one peer\n", member(bus, "_name"));
            return -1;
        }
        peer = json_object_array_get_idx(items, 0);
    }
    printf("%s\t%s\t%s\t%s\t%s\t%s\n", member(tag, "receptacle_id_key"), member(bus, "domain_uuid_key"),
           member(tag, "receptacle_status_key"), member(peer, "domain_uuid_key"), member(peer, "device_name_key"),
           member(tag, "current_speed_key"));
    return 0;
}

int main(int argc, char **argv)
{
    json_object *root, *buses;
    int rc = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: tbcheck FILE.json\n");
        return 2;
    }
    root = json_object_from_file(argv[1]);
    if (!root) {
        fprintf(stderr, "tbcheck: %s: not valid JSON: %s\n", argv[1], json_util_get_last_err());
        return 1;
    }
    if (!json_object_object_get_ex(root, "SPThunderboltDataType", &buses) ||
        !json_object_is_type(buses, json_type_array)) {
        fprintf(stderr, "tbcheck: %s: no SPThunderboltDataType list\n", argv[1]);
        json_object_put(root);
        return 1;
    }
    for (size_t i = 0; i < json_object_array_length(buses) && rc == 0; i++)
        rc = print_bus(json_object_array_get_idx(buses, i));
    json_object_put(root);
    return rc == 0 ? 0 : 1;
}
