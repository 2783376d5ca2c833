/* grant.c: `macnode grant` (see grant.h): root on the bridge host makes the job grant that lets one user run
 * tasks of one job step on one Mac's agent until it expires. */
#include "config.h"
#include "grant.h"
#include "auth.h"
#include "proto.h"
#include "scalar.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

static void grant_usage(FILE *out)
{
    fprintf(out,
            "usage: macnode grant --job J --step S --node NAME --uid UID [--gid GID] [--ttl SECONDS] [--hello]\n"
            "                     [--munge-socket PATH]\n"
            "  Print a job grant (a MUNGE credential naming job, step, node, user and expiry) that lets UID run\n"
            "  one task on NAME's agent until the TTL (default 300 s) passes. Root only: agents refuse grants not\n"
            "  made by uid 0. A grant is good once, in a spawn on a connection of UID's (or root's).\n"
            "  --hello: the grant may also be the hello of its own connection, as the SPANK plug-in's are: then\n"
            "  whoever holds it may run that task as UID without a credential of their own; spend it at once.\n");
}

/* An option's number from min to max, or -1 with a message. */
static int number(const char *opt, const char *s, long long min, long long max, long long *out)
{
    if (tbm_parse_ll(s, 10, min, max, out) == 0)
        return 0;
    fprintf(stderr, "macnode grant: %s '%s' must be a number from %lld to %lld\n", opt, s, min, max);
    return -1;
}

static int grant_options(int argc, char **argv, tbm_grant_t *g, long long *ttl, const char **socket)
{
    static const struct option opts[] = {
        { "job", required_argument, NULL, 'j' }, { "step", required_argument, NULL, 's' },
        { "node", required_argument, NULL, 'n' }, { "uid", required_argument, NULL, 'u' },
        { "gid", required_argument, NULL, 'g' }, { "ttl", required_argument, NULL, 't' },
        { "munge-socket", required_argument, NULL, 'm' }, { "help", no_argument, NULL, 'h' },
        { "hello", no_argument, NULL, 'H' },
        { NULL, 0, NULL, 0 },
    };
    long long v, have = 0;
    int o;

    while ((o = getopt_long(argc, argv, "j:s:n:u:g:t:m:h", opts, NULL)) != -1) {
        if (strchr("jsugt", o) && number(o == 't' ? "--ttl" : "an id", optarg, o == 't' ? 1 : 0,
                                         o == 't' ? TBM_GRANT_TTL_MAX : UINT32_MAX, &v) < 0)
            return -1;
        switch (o) {
        case 'j': g->job = (uint32_t)v; have |= 1; break;
        case 's': g->step = (uint32_t)v; have |= 2; break;
        case 'n': snprintf(g->node, sizeof(g->node), "%s", optarg); have |= 4; break;
        case 'u': g->uid = (uint32_t)v; have |= 8; break;
        case 'g': g->gid = (uint32_t)v; have |= 16; break;
        case 't': *ttl = v; break;
        case 'm': *socket = optarg; break;
        case 'H': g->hello = 1; break;
        case 'h': grant_usage(stdout); exit(0);
        default: grant_usage(stderr); return -1;
        }
    }
    if ((have & 15) != 15) {
        fprintf(stderr, "macnode grant: --job, --step, --node and --uid are all needed\n");
        return -1;
    }
    if (!(have & 16)) {
        struct passwd *pw = getpwuid(g->uid);

        if (!pw) {
            fprintf(stderr, "macnode grant: uid %u has no account here; give --gid\n", g->uid);
            return -1;
        }
        g->gid = pw->pw_gid;
    }
    return 0;
}

int macnode_grant(int argc, char **argv)
{
    tbm_grant_t g = { 0 };
    long long ttl = 300;
    const char *socket = getenv("TBMESH_MUNGE_SOCKET");
    tbm_err_t err = { { 0 } };
    char *payload, *cred;

    if (grant_options(argc, argv, &g, &ttl, &socket) < 0)
        return EXIT_USAGE;
    if (geteuid() != 0) {
        fprintf(stderr, "macnode grant: only root makes grants (agents refuse a grant MUNGE says uid %u made)\n",
                (unsigned)geteuid());
        return EXIT_FAIL;
    }
    g.expires = (int64_t)time(NULL) + ttl;
    payload = tbm_grant_payload(&g, &err);
    cred = payload ? auth_encode(socket, payload, strlen(payload), (int)ttl, &err) : NULL;
    free(payload);
    if (!cred) {
        fprintf(stderr, "macnode grant: %s\n", err.msg);
        return EXIT_FAIL;
    }
    printf("%s\n", cred);
    free(cred);
    return 0;
}
