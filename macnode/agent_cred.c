/* agent_cred.c: the agent's MUNGE credentials: its proof for a prove, made; a hello's or a grant's, checked
 * once: decoded by munged, then recorded in the state folder so that a replay is refused even when munged has
 * forgotten it (see agent.h). */
#include "config.h"
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *agent_proof(const agent_conf_t *conf, const char *nonce, tbm_err_t *err)
{
    char *payload = tbm_proof_payload(conf->node, nonce, err), *cred;

    if (!payload)
        return NULL;
    cred = auth_encode(conf->munge_socket, payload, strlen(payload), 0, err);
    free(payload);
    return cred;
}

int agent_cred_once(const agent_conf_t *conf, const char *what, const char *cred, auth_cred_t *out,
                    const char **code, tbm_err_t *err)
{
    tbm_err_t why_err = { { 0 } };
    auth_fail_t why = auth_decode(conf->munge_socket, cred, out, &why_err);
    int seen;

    if (why != AUTH_OK) {
        *code = auth_fail_code(why);
        return tbm_errprintf(err, "%s credential refused: %s", what, why_err.msg);
    }
    seen = agent_seen(conf, cred, out->expires, &why_err);
    if (seen > 0)
        return 0;
    auth_cred_free(out);
    *code = seen < 0 ? "internal" : "replay";
    return seen < 0 ? tbm_errprintf(err, "%s", why_err.msg)
                    : tbm_errprintf(err, "%s credential refused: it was used before (replayed)", what);
}
