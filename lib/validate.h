/* validate.h: the lab's cabling checked against what JACCL and MLX need (mesh or ring, mesh <= 8,
 * Thunderbolt 5 and RDMA devices on every RDMA cable, IPv4 on one /30, bridge0 down, equal macOS),
 * a verdict per group (usable backends), and the placement question "can group G run backend B on N Macs?". */
#ifndef TBM_VALIDATE_H
#define TBM_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "finding.h"
#include "topology.h"

#define TBM_JACCL_MESH_MAX 8     /* a JACCL mesh has at most this many ranks */
#define TBM_TB5_MIN_GBPS   41    /* Thunderbolt 5: above 40 Gb/s */
#define TBM_GROUP_NAME_MAX 32    /* group names, with the NUL: [a-z][a-z0-9_-]{0,30} */

typedef enum tbm_backend {
    TBM_BACKEND_JACCL = 0,       /* JACCL mesh over RDMA */
    TBM_BACKEND_JACCL_RING,      /* JACCL ring over RDMA */
    TBM_BACKEND_RING,            /* MLX ring over TCP on the Thunderbolt links */
    TBM_BACKEND_MPI,             /* Open MPI */
    TBM_BACKEND_AUTO,            /* whichever of the above fits (not a bit of a mask) */
} tbm_backend_t;

#define TBM_BACKEND_COUNT 4                 /* real backends: AUTO excluded */
#define TBM_BACKEND_BIT(b) (1u << (b))
#define TBM_BACKENDS_ALL   0xfu
#define TBM_BACKENDS_RDMA  (TBM_BACKEND_BIT(TBM_BACKEND_JACCL) | TBM_BACKEND_BIT(TBM_BACKEND_JACCL_RING))

const char *tbm_backend_name(tbm_backend_t b);            /* "jaccl", "jaccl-ring", "ring", "mpi", "auto" */

/* A backend by name (auto included). Returns 0, or -1 with `err` naming what was given and the choices:
 * "nccl is unknown: use auto, jaccl, jaccl-ring, ring or mpi"; the caller puts in front where the name came
 * from, e.g. tbm_errprefix(err, "--mlx-backend="). */
int tbm_backend_parse(const char *s, tbm_backend_t *b, tbm_err_t *err);

/* The names a user may give, from the one table of backends, for messages (buf is returned):
 * one backend: "auto, jaccl, jaccl-ring, ring or mpi"; a group's list: "jaccl, jaccl-ring, ring, mpi
 * (comma-separated) or none". */
#define TBM_BACKEND_CHOICES_MAX 80
const char *tbm_backend_choices(char *buf, size_t len);
const char *tbm_backends_choices(char *buf, size_t len);

/* A mask as "jaccl,jaccl-ring,ring,mpi" ("none" when empty), and back (with a message on error). */
void tbm_backends_format(unsigned mask, char *buf, size_t len);
int tbm_backends_parse(const char *s, unsigned *mask, tbm_err_t *err);

typedef enum tbm_link {
    TBM_LINK_NONE = 0,           /* no cable */
    TBM_LINK_TB4,                /* some cable at 40 Gb/s or less (or unknown speed) */
    TBM_LINK_TB5,                /* every cable above 40 Gb/s */
} tbm_link_t;

const char *tbm_link_name(tbm_link_t l);                  /* "none", "tb4", "tb5" */
int tbm_link_parse(const char *s, tbm_link_t *l);

/* What job placement needs to know of a group; made by validation or read from tbmesh.conf. */
typedef struct tbm_group_caps {
    char name[TBM_GROUP_NAME_MAX];
    size_t n_nodes;
    tbm_topo_class_t topology;
    unsigned backends;           /* usable backends (TBM_BACKEND_BIT mask) */
    int rdma;                    /* every cable does RDMA (TB5, devices on both ends) */
} tbm_group_caps_t;

/* Can `nnodes` Macs placed anywhere in group g run backend b? JACCL mesh: a full mesh, nnodes <= 8
 * (any part of a mesh is a mesh); jaccl-ring and ring: any part of a mesh, or a whole ring; mpi: any
 * part of a mesh, one Mac, or the whole group; auto: any of them. Returns 1, or 0 with `why` saying
 * why not and what to ask for instead. */
int tbm_group_supports(const tbm_group_caps_t *g, tbm_backend_t b, size_t nnodes, tbm_err_t *why);

/* The verdict on one group of the topology (same index). */
typedef struct tbm_group_verdict {
    tbm_group_caps_t caps;       /* name is left empty: tbmesh.conf names groups */
    tbm_link_t link;
    int rdma_wanted;             /* some Mac of the group lists an RDMA device */
    unsigned blocked;            /* backends ruled out by findings */
    uint32_t rdma_subset;        /* when some cables keep JACCL from the whole group (rdma-subset): the largest
                                    full mesh of its Macs (bit i: the group's host i, in the topology's order)
                                    whose cables all do RDMA, with no finding ruling RDMA out on them or on
                                    the group; 0 when none (2 Macs at least) */
    char why[TBM_BACKEND_COUNT][TBM_FINDING_TEXT_MAX];  /* "code: what" of the first finding ruling each out */
} tbm_group_verdict_t;

typedef struct tbm_validation {
    tbm_findings_t findings;     /* the model's findings, then the checklist's */
    size_t n_groups;
    tbm_group_verdict_t *groups;
    unsigned char *cable_severity;   /* per cable: 0 no finding, else worst severity + 1 */
    unsigned char *host_severity;    /* per host, the same */
} tbm_validation_t;

/* Do the two ends' addresses (host order; prefix -1 when not given) make one link: two different usable
 * host addresses on one /30, or on one network of the prefix both ends give? */
int tbm_link_addrs_ok(uint32_t a, int prefix_a, uint32_t b, int prefix_b);

/* Check the topology against the checklist. Returns -1 only when out of memory. */
int tbm_validate(const tbm_topology_t *t, tbm_validation_t *v, tbm_err_t *err);
void tbm_validation_free(tbm_validation_t *v);

/* True when the lab is fit: no finding of severity error. */
int tbm_validation_fit(const tbm_validation_t *v);

/* A group name as a Slurm feature: "tbmesh_" + name with '-' turned to '_' ("tbmesh_studio_a"). */
void tbm_group_feature(const char *group, char *buf, size_t len);

/* The feature of the Macs of a group's RdmaSubset= (tbmesh.conf): "tbmesh_rdma_" + name, '-' turned to '_'
 * ("tbmesh_rdma_studio_a"). */
void tbm_group_rdma_feature(const char *group, char *buf, size_t len);

/* True when `name` is a valid group name: [a-z][a-z0-9_-]{0,30}. */
int tbm_group_name_valid(const char *name);

#endif
