/* scalar.c: checks of small values shared by lib/ modules (see scalar.h). */
#include "scalar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

int tbm_parse_uint(const char *s, int max, int *out)
{
    long long v;

    if (strlen(s) > 9 || tbm_parse_ll(s, 10, 1, max, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

long tbm_mlx_version_parse(const char *s)
{
    long long part[3] = {0, 0, 0};
    size_t n;
    int i;

    for (i = 0; s && i < 3; i++) {
        n = strspn(s, "0123456789");
        if (n == 0 || n > 4 || tbm_parse_ll_span(s, n, 10, 0, i ? 999 : 9999, &part[i]) < 0 ||
            s[n] != (i < 2 ? '.' : '\0'))
            return -1;
        s += n + 1;
    }
    return s ? TBM_MLX_VERSION(part[0], part[1], part[2]) : -1;
}

const char *tbm_list_next(const char **list, const char *seps, size_t *n)
{
    const char *item = *list, *end;

    if (!item || !*item)
        return NULL;
    end = item + strcspn(item, seps);
    *n = (size_t)(end - item);
    *list = *end ? end + 1 : end;
    return item;
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

int tbm_parse_ll(const char *s, int base, long long min, long long max, long long *out)
{
    const char *p = s;
    char *end;
    long long v;

    if (!s || (base != 8 && base != 10 && base != 16))
        return -1;
    if (*p == '-' && min < 0)
        p++;
    /* strtoll would skip spaces and take a '+' or a "0x": only digits of the base are a number here. */
    if (!(base == 16 ? strspn(p, "0123456789abcdefABCDEF") : base == 8 ? strspn(p, "01234567")
                     : strspn(p, "0123456789")) || strspn(p, "0123456789abcdefABCDEF") != strlen(p))
        return -1;
    errno = 0;
    v = strtoll(s, &end, base);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int tbm_parse_ll_span(const char *s, size_t n, int base, long long min, long long max, long long *out)
{
    char buf[32];   /* the longest long long, in octal with its sign, is 24 characters */

    if (!s || n >= sizeof(buf) || memchr(s, '\0', n))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return tbm_parse_ll(buf, base, min, max, out);
}

int tbm_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !s[0] || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}
