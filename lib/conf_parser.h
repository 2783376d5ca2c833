/* conf_parser.h: what the files of the tbmesh.conf parser share: the state of one parse and the steps that
 * conf_parse.c (the file, all or nothing) runs: conf_tokens.c (Key=Value words, errors with file:line),
 * conf_lines.c (the four kinds of line) and conf_checks.c (the checks across lines). Private to those
 * files; the library's interface is conf.h. */
#ifndef TBM_CONF_PARSER_H
#define TBM_CONF_PARSER_H

#include <stddef.h>

#include "conf.h"

/* Settings of a NodeName line, one per node it names, resolved once every group is known. */
typedef struct pending_node {
    char name[TBM_HOSTNAME_MAX];
    char group[TBM_GROUP_NAME_MAX];
    tbm_conf_node_t set;           /* agent_addr, agent_port, slurmd_port */
    int line;
} pending_node_t;

/* A Cable line, its node names resolved once every group is known. */
typedef struct pending_cable {
    char node[2][TBM_HOSTNAME_MAX];
    tbm_conf_cable_t cable;
    int has_addr, has_rdma;
    int bad;                       /* its line or its ends had an error: no further checks */
} pending_cable_t;

typedef struct conf_parser {
    const char *file;
    int line;
    tbm_findings_t *errors;
    size_t n_errors;
    tbm_conf_t *c;
    int global_line[11];           /* where each global setting was set (order of its table), 0: not yet */
    int owner_line[TBM_OWNER_ROLES];   /* where each global owner was set, 0: not yet */
    int record_line[3];            /* where RecordDir, RecordReaders and Records were set, 0: not yet */
    size_t line_tokens;            /* settings on the line being read */
    pending_node_t *pn;            /* NodeName settings */
    size_t n_pn, cap_pn;
    pending_cable_t *pc;           /* Cable lines */
    size_t n_pc, cap_pc;
    size_t cap_groups, cap_nodes, cap_bad;
    unsigned char *group_bad;      /* per group: its line had an error, so no further checks */
    size_t line_errors;            /* errors before the line being read */
    int *index;                    /* node indices sorted by name */
    /* the line being read */
    tbm_conf_group_t *group;
    int has_backends, has_topology, has_nodes;
    pending_node_t node;
    char **node_names;
    size_t n_node_names;
    char **subset_names;           /* RdmaSubset= of the Group line being read */
    size_t n_subset_names;
} conf_parser_t;

/* A key of one kind of line and what reads its value (key: the key's own spelling; -1 when reported). */
typedef int (*conf_setter_t)(conf_parser_t *p, const char *key, const char *val);

typedef struct conf_key {
    const char *name;
    conf_setter_t set;
} conf_key_t;

/* One Key=Value word of a line (both point into the line's own copy). */
typedef struct conf_token {
    char *key;
    char *val;
} conf_token_t;

/* ---- conf_tokens.c ---- */

/* Report an error of the file at `line` as a finding "file:line", what, fix; returns -1. */
int tbm_conf_bad_at(conf_parser_t *p, int line, const char *code, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* An error of the file at a line, and of the line being read. */
#define BAD_AT(p, line, fix, ...) tbm_conf_bad_at((p), (line), "conf-error", (fix), __VA_ARGS__)
#define BAD(p, fix, ...) BAD_AT((p), (p)->line, (fix), __VA_ARGS__)

/* Split the line s[0..len) into Key=Value tokens (comments dropped) held in buf (TBM_CONF_LINE_MAX + 1
 * bytes). Returns 0 with *n tokens (0 for a blank line), or -1 when the line was reported as bad. */
int tbm_conf_tokenize_line(conf_parser_t *p, const char *s, size_t len, char *buf, conf_token_t *tok, size_t *n);

/* Apply every token of a line through the table of keys of its kind ("Group", ...), each key at most once. */
void tbm_conf_apply_keys(conf_parser_t *p, const conf_key_t *keys, const char *kind, conf_token_t *tok, size_t n);

/* True when the table holds `key` (case-insensitive). */
int tbm_conf_is_key(const conf_key_t *keys, const char *key);

/* The table's keys as "A, B, C" for messages. */
void tbm_conf_key_names(const conf_key_t *keys, char *buf, size_t len);

/* ---- conf_lines.c ---- */

/* Read one line's tokens as the kind of line its first key names: Group, NodeName, Cable or a setting. */
void tbm_conf_read_tokens(conf_parser_t *p, conf_token_t *tok, size_t n);

/* ---- conf_checks.c ---- */

/* Once every line is read: nodes indexed by name, NodeName settings and cables resolved to their nodes,
 * then the checks that need the whole file (a node in two groups, cables against Topology=, ...). */
void tbm_conf_check_across_lines(conf_parser_t *p);

#endif
