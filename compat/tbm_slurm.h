/* tbm_slurm.h: the one place where the Slurm releases slurm-tbmesh builds against differ.
 *
 * Every file of plugin/ and acct/ that calls Slurm includes this header instead of Slurm's own, and names
 * the types below instead of Slurm's spelling of them. Supported: Slurm 22.05 (Debian 12) to 24.11
 * (Debian 13) and later 24.x/25.x built from source (configure refuses an older one). What differs, and how
 * it is met here:
 *
 *   - Lists and host lists. 22.05 names them by pointer typedefs (List, ListIterator, hostlist_t a pointer);
 *     24.11 dropped List and ListIterator and made list_t, list_itr_t and hostlist_t the structs
 *     themselves. Both keep the struct tags, so tbm_slurm_list_t and friends are pointers to those tags:
 *     the same code compiles against both without a version test.
 *   - slurm_get_errno() is gone in 24.11; it only ever returned errno, which every release sets.
 *     tbm_slurm_errstr() says the last Slurm error in both.
 *   - SPANK's calls, the job_submit entry points (job_submit, job_modify) and the slurmdb queries used by
 *     acct/ keep their signatures from 22.05 to 24.11; plug-ins carry the version they were built against
 *     (plugin_version = SLURM_VERSION_NUMBER), so a plug-in built against one release is refused by another.
 */
#ifndef TBM_SLURM_H
#define TBM_SLURM_H

#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 5, 0)
#error "slurm-tbmesh needs Slurm 22.05 or later"
#endif

typedef struct xlist *tbm_slurm_list_t;              /* 22.05: List;          24.11: list_t *     */
typedef struct listIterator *tbm_slurm_list_iter_t;  /* 22.05: ListIterator;  24.11: list_itr_t * */
typedef struct hostlist *tbm_slurm_hostlist_t;       /* 22.05: hostlist_t;    24.11: hostlist_t * */

/* The last Slurm call's error, in words (after a call that returned an error or NULL). */
static inline const char *tbm_slurm_errstr(void)
{
    return slurm_strerror(errno);
}

#endif
