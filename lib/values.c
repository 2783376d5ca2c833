/* values.c: checks of small values shared by lib/ modules (see values.h). */
#include "values.h"

#include <stdio.h>
#include <string.h>

#include "facts.h"

int tbm_parse_uint(const char *s, int max, int *out)
{
    long v = 0;
    size_t i;

    if (!s[0] || strlen(s) > 9)
        return -1;
    for (i = 0; s[i]; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

int tbm_iface_name_valid(const char *s)
{
    size_t i;

    if (!(s[0] >= 'a' && s[0] <= 'z'))
        return 0;
    for (i = 1; s[i]; i++)
        if (i >= TBM_IFNAME_MAX - 1 || !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

int tbm_ipv4_parse(const char *s, uint32_t *out)
{
    unsigned a, b, c, d;
    char tail;

    if (strlen(s) >= TBM_IPV4_MAX || strspn(s, "0123456789.") != strlen(s) ||
        sscanf(s, "%3u.%3u.%3u.%3u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
        return -1;
    *out = ((uint32_t)a << 24) | ((uint32_t)b << 16) | ((uint32_t)c << 8) | d;
    return 0;
}
