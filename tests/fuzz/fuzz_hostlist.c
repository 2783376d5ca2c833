/* fuzz_hostlist.c: libFuzzer harness of the hostlist expander: any string expands or is refused with a
 * message; what expands compresses to an expression naming the same set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted and without repeats, the two lists are equal. */
static int same_set(char **a, size_t na, char **b, size_t nb)
{
    size_t i, j, m = 0;

    qsort(a, na, sizeof(char *), by_name);
    qsort(b, nb, sizeof(char *), by_name);
    for (i = 0, j = 0; i < na; i++)
        if (i == 0 || strcmp(a[i - 1], a[i]) != 0) {
            if (j >= nb || strcmp(a[i], b[j]) != 0)
                return 0;
            j++;
            m++;
        }
    return j == nb && m == nb;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *expr = malloc(size + 1), *packed, **names, **again;
    tbm_err_t err = {{0}};
    size_t n, m;

    if (!expr)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    if (tbm_hostlist_expand(expr, &names, &n, &err) == 0) {
        packed = tbm_hostlist_compress(names, n);
        if (!packed || tbm_hostlist_expand(packed, &again, &m, &err) != 0 || !same_set(names, n, again, m))
            abort();
        tbm_hostlist_free(again, m);
        tbm_hostlist_free(names, n);
        free(packed);
    } else if (!err.msg[0]) {
        abort();
    }
    free(expr);
    return 0;
}
