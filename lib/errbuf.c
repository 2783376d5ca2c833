/* errbuf.c: the error message buffer shared by every lib/ module (see errbuf.h). */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void mark_cut(tbm_err_t *err, int wanted)
{
    if (wanted >= (int)sizeof(err->msg))
        memcpy(err->msg + sizeof(err->msg) - 4, "...", 4);
}

int tbm_errprintf(tbm_err_t *err, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!err)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    if (n < 0)
        err->msg[0] = '\0';
    else
        mark_cut(err, n);
    return -1;
}

int tbm_errprefix(tbm_err_t *err, const char *fmt, ...)
{
    char prefix[TBM_ERR_MAX];
    char old[TBM_ERR_MAX];
    va_list ap;
    int n;

    if (!err)
        return -1;
    va_start(ap, fmt);
    n = vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    memcpy(old, err->msg, sizeof(old));
    n = snprintf(err->msg, sizeof(err->msg), "%s%s", prefix, old);
    mark_cut(err, n);
    return -1;
}

void tbm_errclear(tbm_err_t *err)
{
    if (err)
        err->msg[0] = '\0';
}

int tbm_erris(const tbm_err_t *err)
{
    return err && err->msg[0] != '\0';
}
