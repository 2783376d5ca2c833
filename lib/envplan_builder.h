/* envplan_builder.h: what the files of the environment planner share: the state of one plan and the one
 * interface every backend's builder fills (envplan_jaccl.c, envplan_ring.c, envplan_mpi.c). envplan.c checks
 * the request and runs the steps; envplan_choose.c picks the backend, envplan_cables.c and envplan_order.c
 * find the cables and the rank order, envplan_vars.c holds the plan's variables and files. Private to those
 * files; the library's interface is envplan.h. */
#ifndef TBM_ENVPLAN_BUILDER_H
#define TBM_ENVPLAN_BUILDER_H

#include <stddef.h>

#include "envplan.h"
#include "strbuf.h"

/* MLX versions whose rules differ (see REFERENCE.md). */
#define JACCL_FIRST         TBM_MLX_VERSION(0, 30, 1)   /* JACCL first shipped */
#define JACCL_DEVICES_ONLY  TBM_MLX_VERSION(0, 30, 3)   /* read MLX_JACCL_DEVICES instead of MLX_IBV_DEVICES */
#define JACCL_RING_FIRST    TBM_MLX_VERSION(0, 30, 6)   /* JACCL ring mode */
#define JACCL_ALIASES_FIRST TBM_MLX_VERSION(0, 31, 2)   /* JACCL_* aliases */

#define TBM_ENVPLAN_MAX_VARS 16          /* variables of one plan */
#define TBM_ENVPLAN_OOM "out of memory while planning the job's environment: free some memory and retry"

/* The cables joining two of the job's nodes. */
typedef struct envplan_rails {
    int n;                                /* cables joining the pair, at most TBM_ENVPLAN_MAX_RAILS kept */
    int cable[TBM_ENVPLAN_MAX_RAILS];     /* indices into conf->cables, in tbmesh.conf order */
} envplan_rails_t;

typedef struct envplan_ctx envplan_ctx_t;

/* One backend's builder: what it needs of the cabling and what it exports. */
typedef struct envplan_builder {
    int ring_order;              /* neighbouring ranks must be cabled: the ranks go round the cables' cycle */
    int needs_rdma;              /* every cable end it uses names an RDMA device */
    int needs_ipv4;              /* every cable end it uses has an IPv4 address */
    /* How many cables of rank r facing rank s (r != s) the plan uses: the first ones of the pair. */
    int (*cables)(const envplan_ctx_t *c, int r, int s);
    /* Its own needs of the cabling once the ranks are ordered (NULL: none). 0, or -1 with c->err. */
    int (*check)(envplan_ctx_t *c);
    /* The highest port the plan uses, with the tbmesh.conf key and value it counts from (NULL: no port). */
    int (*last_port)(const envplan_ctx_t *c, const char **key, int *base);
    /* Its variables and files, after the common ones. 0, or -1 with c->err. */
    int (*vars)(envplan_ctx_t *c);
} envplan_builder_t;

extern const envplan_builder_t tbm_envplan_jaccl_builder;        /* envplan_jaccl.c */
extern const envplan_builder_t tbm_envplan_jaccl_ring_builder;   /* envplan_jaccl.c */
extern const envplan_builder_t tbm_envplan_ring_builder;         /* envplan_ring.c */
extern const envplan_builder_t tbm_envplan_mpi_builder;          /* envplan_mpi.c */

struct envplan_ctx {
    const tbm_conf_t *conf;
    const char *const *nodes;
    size_t n;
    int self;                             /* job index of this node */
    int *cnode;                           /* conf node of each job index */
    envplan_rails_t *rails;               /* n x n, by job index */
    const tbm_conf_group_t *group;
    int on_subset;                        /* the job runs JACCL on its group's RdmaSubset= (JacclOnSubsets) */
    tbm_backend_t backend;
    const envplan_builder_t *builder;     /* the backend's, once chosen */
    long version;
    int offset;
    int k;                                /* cables used between ring neighbours */
    char job_dir[TBM_ENVPLAN_DIR_MAX + 1];
    const char *libname;
    tbm_envplan_t *plan;
    tbm_err_t *err;
};

static inline const char *tbm_envplan_node_name(const envplan_ctx_t *c, int job_index)
{
    return c->nodes[job_index];
}

/* ---- envplan_choose.c ---- */

/* Resolve auto to the first backend the group and the MLX version allow, or check the one asked for: jaccl
 * and jaccl-ring asked for by name also by the rules of the group's RdmaSubset= when every Mac of the job is
 * in it and tbmesh.conf says JacclOnSubsets=yes (c->on_subset). Sets c->backend; 0, or -1 with c->err. */
int tbm_envplan_choose_backend(envplan_ctx_t *c, tbm_backend_t b);

/* Why auto chose backend b, for the job's note. */
const char *tbm_envplan_auto_reason(tbm_backend_t b);

/* ---- envplan_cables.c ---- */

/* Gather the cables joining each pair of the job's nodes, in tbmesh.conf order. 0, or -1 with c->err. */
int tbm_envplan_collect_rails(envplan_ctx_t *c);

/* The cables joining job nodes a and b; those joining ranks r and s. */
const envplan_rails_t *tbm_envplan_rails(const envplan_ctx_t *c, int a, int b);
const envplan_rails_t *tbm_envplan_rank_rails(const envplan_ctx_t *c, int r, int s);

/* How many cables of rank r facing rank s the plan uses (0 for r == s). */
int tbm_envplan_used(const envplan_ctx_t *c, int r, int s);

/* The end of a cable on conf node `node`. */
const tbm_conf_end_t *tbm_envplan_end_on(const envplan_ctx_t *c, int cable, int node);

/* What the backend needs of one cable end on conf node `node`. 0, or -1 with c->err naming the cable. */
int tbm_envplan_check_end(envplan_ctx_t *c, int cable, int node);

/* ---- envplan_order.c ---- */

/* Rank order (c->plan->order) and, for a ring order, c->k. 0, or -1 with c->err. */
int tbm_envplan_make_order(envplan_ctx_t *c);

/* For a ring order: the c->k cables between neighbouring ranks, none between the others. */
int tbm_envplan_neighbour_cables(const envplan_ctx_t *c, int r, int s);

/* ---- envplan_vars.c ---- */

/* Add a variable (printf-style value) or a file of the job folder (takes sb's text; the path goes into
 * path[0..len)). 0, or -1 with c->err. */
int tbm_envplan_add_var(envplan_ctx_t *c, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tbm_envplan_add_file(envplan_ctx_t *c, const char *name, tbm_strbuf_t *sb, char *path, size_t len);

/* The JSON list of the ranks' rows, one per line: "[\n  [row 0],\n  [row 1]\n]\n". */
void tbm_envplan_json_rows(const envplan_ctx_t *c, tbm_strbuf_t *sb,
                           void (*row)(const envplan_ctx_t *, tbm_strbuf_t *, int));

#endif
