/* coll_mpi.c: the MPI transport of libtbmcoll: the same operations mapped onto Open MPI's collectives over
 * MPI_COMM_WORLD, so benchmarks can compare the TCP algorithms with MPI_Allreduce and friends. */
#include "coll.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

typedef struct mpi_state {
    int initialised_here;
    MPI_Datatype f16, bf16;           /* two bytes each; told apart by handle in the user operations */
    MPI_Op sum16, max16;              /* user operations for float16 / bfloat16 */
} mpi_state_t;

static mpi_state_t *state_of(tbmcoll_comm_t *c)
{
    return c->transport;
}

/* MPI_Op callbacks: inout = in op inout, computed by lib/reduce.c. */
static MPI_Datatype g_f16 = MPI_DATATYPE_NULL;

static void user_apply(void *in, void *inout, int *len, MPI_Datatype *dt, tbm_redop_t op)
{
    tbm_reduce(inout, in, inout, (size_t)*len, *dt == g_f16 ? TBM_DT_F16 : TBM_DT_BF16, op);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_apply(in, inout, len, dt, TBM_OP_SUM);
}

static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_apply(in, inout, len, dt, TBM_OP_MAX);
}

static int mpi_check(tbmcoll_comm_t *c, int rc, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return 0;
    MPI_Error_string(rc, text, &len);
    return tbmcoll_fail(c, "%s: MPI failed: %.*s", what, len, text);
}

static int mpi_count(tbmcoll_comm_t *c, size_t count, const char *what, int *out)
{
    if (count > INT_MAX)
        return tbmcoll_fail(c, "%s: %zu elements are more than MPI's int count allows", what, count);
    *out = (int)count;
    return 0;
}

static MPI_Datatype mpi_type(tbmcoll_comm_t *c, tbm_dtype_t dt)
{
    switch (dt) {
    case TBM_DT_F32:
        return MPI_FLOAT;
    case TBM_DT_I32:
        return MPI_INT32_T;
    case TBM_DT_F16:
        return state_of(c)->f16;
    case TBM_DT_BF16:
        return state_of(c)->bf16;
    }
    return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(tbmcoll_comm_t *c, tbm_dtype_t dt, tbm_redop_t op)
{
    if (dt == TBM_DT_F16 || dt == TBM_DT_BF16)
        return op == TBM_OP_SUM ? state_of(c)->sum16 : state_of(c)->max16;
    return op == TBM_OP_SUM ? MPI_SUM : MPI_MAX;
}

static int mpi_allreduce(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                         tbm_redop_t op)
{
    int n = 0;

    if (mpi_count(c, count, "all-reduce", &n) < 0)
        return -1;
    return mpi_check(c, MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, n, mpi_type(c, dt),
                                      mpi_op(c, dt, op), MPI_COMM_WORLD), "all-reduce");
}

static int mpi_allgather(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt)
{
    size_t bytes = count * tbm_dtype_size(dt);
    int n = 0;

    if (mpi_count(c, count * (size_t)c->size, "all-gather", &n) < 0)
        return -1;
    n = (int)count;
    if (send == (unsigned char *)recv + (size_t)c->rank * bytes)
        return mpi_check(c, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, mpi_type(c, dt),
                                          MPI_COMM_WORLD), "all-gather");
    return mpi_check(c, MPI_Allgather(send, n, mpi_type(c, dt), recv, n, mpi_type(c, dt), MPI_COMM_WORLD),
                     "all-gather");
}

static int mpi_reduce_scatter(tbmcoll_comm_t *c, const void *send, void *recv, size_t count, tbm_dtype_t dt,
                              tbm_redop_t op)
{
    size_t bytes = count * tbm_dtype_size(dt);
    unsigned char *out = recv;
    int n = 0, rc;

    if (mpi_count(c, count * (size_t)c->size, "reduce-scatter", &n) < 0)
        return -1;
    n = (int)count;
    if (recv == (const unsigned char *)send + (size_t)c->rank * bytes && !(out = tbmcoll_scratch(c, bytes)))
        return -1;    /* in place: MPI's in-place form differs from ours, so go through scratch */
    rc = mpi_check(c, MPI_Reduce_scatter_block(send, out, n, mpi_type(c, dt), mpi_op(c, dt, op), MPI_COMM_WORLD),
                   "reduce-scatter");
    if (rc == 0 && out != recv)
        memcpy(recv, out, bytes);
    return rc;
}

static int mpi_broadcast(tbmcoll_comm_t *c, void *buf, size_t count, tbm_dtype_t dt, int root)
{
    int n = 0;

    if (mpi_count(c, count, "broadcast", &n) < 0)
        return -1;
    return mpi_check(c, MPI_Bcast(buf, n, mpi_type(c, dt), root, MPI_COMM_WORLD), "broadcast");
}

static int mpi_p2p(tbmcoll_comm_t *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes)
{
    int n = 0;

    if (mpi_count(c, bytes, "send/recv", &n) < 0)
        return -1;
    if (to >= 0 && from >= 0)
        return mpi_check(c, MPI_Sendrecv(sbuf, n, MPI_BYTE, to, 0, rbuf, n, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE), "send/recv");
    if (to >= 0)
        return mpi_check(c, MPI_Send(sbuf, n, MPI_BYTE, to, 0, MPI_COMM_WORLD), "send");
    return mpi_check(c, MPI_Recv(rbuf, n, MPI_BYTE, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
}

static void mpi_destroy(tbmcoll_comm_t *c)
{
    mpi_state_t *s = state_of(c);
    int finalized = 0;

    if (!s)
        return;
    MPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Op_free(&s->sum16);
        MPI_Op_free(&s->max16);
        MPI_Type_free(&s->f16);
        MPI_Type_free(&s->bf16);
        if (s->initialised_here)
            MPI_Finalize();
    }
    g_f16 = MPI_DATATYPE_NULL;
    free(s);
    c->transport = NULL;
}

static const tbmcoll_ops_t mpi_ops = {
    .allreduce = mpi_allreduce,
    .allgather = mpi_allgather,
    .reduce_scatter = mpi_reduce_scatter,
    .broadcast = mpi_broadcast,
    .p2p = mpi_p2p,
    .destroy = mpi_destroy,
};

static int make_types(mpi_state_t *s)
{
    if (MPI_Type_contiguous(2, MPI_BYTE, &s->f16) != MPI_SUCCESS || MPI_Type_commit(&s->f16) != MPI_SUCCESS ||
        MPI_Type_contiguous(2, MPI_BYTE, &s->bf16) != MPI_SUCCESS || MPI_Type_commit(&s->bf16) != MPI_SUCCESS ||
        MPI_Op_create(user_sum, 1, &s->sum16) != MPI_SUCCESS || MPI_Op_create(user_max, 1, &s->max16) != MPI_SUCCESS)
        return -1;
    g_f16 = s->f16;
    return 0;
}

tbmcoll_comm_t *tbmcoll_comm_from_mpi(int *argc, char ***argv, tbm_err_t *err)
{
    tbmcoll_comm_t *c = calloc(1, sizeof(*c));
    mpi_state_t *s = calloc(1, sizeof(*s));
    int inited = 0, provided;

    if (!c || !s) {
        free(c);
        free(s);
        tbm_errprintf(err, "out of memory");
        return NULL;
    }
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        free(c);
        free(s);
        tbm_errprintf(err, "MPI_Init failed: start the program with mpirun (Open MPI)");
        return NULL;
    }
    s->initialised_here = !inited;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->algo = TBMCOLL_ALGO_MPI;
    c->ops = &mpi_ops;
    c->transport = s;
    c->left.fd = c->right.fd = -1;
    tbmcoll_opts_fill(&c->opts, NULL);
    if (make_types(s) < 0) {
        tbm_errprintf(err, "cannot create the MPI types and operations for float16/bfloat16");
        tbmcoll_comm_free(c);
        return NULL;
    }
    return c;
}
