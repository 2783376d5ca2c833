/* agent_jobdir.c: the jobs' folders on a Mac. The jobs folder is root's (no one else may write in it; checked
 * at every use, since it sits in a shared folder); the agent makes each job's folder there itself, gives it to
 * the job's user (0700), remembers which folder it made (device and inode, in its state folder) and refuses to
 * use any folder it did not make or a link; the job's files are written by the task's own process once it is
 * the user (0600). Cleanup removes the contents as the owner, the folder as root (see agent.h). */
#include "config.h"
#include "agent.h"
#include "agent_log.h"
#include "agent_privdrop.h"
#include "fileio.h"
#include "jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_LEN     4096

/* Which folder the agent made for a job: "<dev> <ino> <uid>\n" in <state>/jobdir-<job>. */
static void made_record_path(const agent_conf_t *conf, uint32_t job, char *path, size_t len)
{
    snprintf(path, len, "%s/jobdir-%u", conf->state_dir, job);
}

static int remember_made(const agent_conf_t *conf, uint32_t job, const struct stat *st, tbm_err_t *err)
{
    char path[PATH_LEN], text[96];
    int n = snprintf(text, sizeof(text), "%ju %ju %u\n", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
                     (unsigned)st->st_uid);

    made_record_path(conf, job, path, sizeof(path));
    return tbm_write_file_replace(path, text, (size_t)n, 0600, err);   /* the state folder goes at boot */
}

static int made_here(const agent_conf_t *conf, uint32_t job, const struct stat *st)
{
    char path[PATH_LEN], want[96], *text;
    size_t len;
    int same;

    made_record_path(conf, job, path, sizeof(path));
    text = tbm_read_file(path, 95, &len, NULL);
    snprintf(want, sizeof(want), "%ju %ju %u\n", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
             (unsigned)st->st_uid);
    same = text && strcmp(text, want) == 0;
    free(text);
    return same;
}

/* Make the job's folder (root makes it, then gives it to the user), or check the one there. */
static int job_folder(const agent_conf_t *conf, const tbm_grant_t *g, const char *dir, tbm_err_t *err)
{
    struct stat st;
    int fd;

    if (mkdir(dir, 0700) == 0) {
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fchown(fd, g->uid, g->gid) < 0 || fchmod(fd, 0700) < 0 || fstat(fd, &st) < 0) {
            tbm_errprintf(err, "%s: cannot give the new job folder to uid %u: %s", dir, g->uid, strerror(errno));
            if (fd >= 0)
                close(fd);
            rmdir(dir);
            return -1;
        }
        close(fd);
        return remember_made(conf, g->job, &st, err);
    }
    if (errno != EEXIST)
        return tbm_errprintf(err, "%s: cannot create the job folder: %s", dir, strerror(errno));
    if (lstat(dir, &st) < 0)
        return tbm_errprintf(err, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return tbm_errprintf(err, "%s: is %s, not a folder this agent made; an admin must remove it", dir,
                             S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder");
    if (!made_here(conf, g->job, &st))
        return tbm_errprintf(err, "%s: this agent did not make this folder (uid %u made or owns it); an admin "
                             "must remove it (the jobs folder %s must be writable by root only)", dir,
                             (unsigned)st.st_uid, conf->jobs_dir);
    if (st.st_uid != g->uid)
        return tbm_errprintf(err, "%s: belongs to uid %u, not to uid %u of job %u's grant", dir,
                             (unsigned)st.st_uid, g->uid, g->job);
    return 0;
}

int agent_job_write(const char *dir, const tbm_jobfile_t *files, int n, tbm_err_t *err)
{
    char path[PATH_LEN + TBM_FILE_NAME_MAX + 2];
    int i;

    for (i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
        if (tbm_write_file_replace(path, files[i].data, files[i].len, 0600, err) < 0)
            return -1;
    }
    return 0;
}

int agent_jobs_base(const agent_conf_t *conf, tbm_err_t *err)
{
    char note[600];

    if (tbm_jobdir_base(conf->jobs_dir, note, sizeof(note), err) < 0)
        return tbm_errprefix(err, "the jobs folder (--jobs-dir): ");
    if (note[0])
        agent_log("the jobs folder (--jobs-dir): %s", note);
    return 0;
}

int agent_job_folder(const agent_conf_t *conf, const tbm_grant_t *g, const tbm_jobfile_t *files, int n, char *dir,
                     size_t dirlen, tbm_err_t *err)
{
    char lock_path[PATH_LEN];
    int lock, rc, i;

    for (i = 0; i < n; i++)
        if (!tbm_job_file_name_ok(files[i].name))
            return tbm_errprintf(err, "job file name '%s' is not a plain file name", files[i].name);
    if (snprintf(dir, dirlen, "%s/%u", conf->jobs_dir, g->job) >= (int)dirlen)
        return tbm_errprintf(err, "the job folder's path is too long");
    /* one agent process at a time makes or checks a job folder, so that two tasks of a job agree */
    snprintf(lock_path, sizeof(lock_path), "%s/jobdirs.lock", conf->state_dir);
    lock = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lock < 0 || flock(lock, LOCK_EX) < 0) {
        tbm_errprintf(err, "%s: cannot lock: %s", lock_path, strerror(errno));
        if (lock >= 0)
            close(lock);
        return -1;
    }
    rc = agent_jobs_base(conf, err) < 0 ? -1 : job_folder(conf, g, dir, err);
    close(lock);
    return rc;
}

/* As the folder's owner: its contents go (lib/jobdir.c's walk: links removed, never followed). */
static int remove_contents(void *arg, tbm_err_t *err)
{
    return tbm_dir_empty(arg, err);
}

int agent_job_remove(const agent_conf_t *conf, uint32_t job, tbm_err_t *err)
{
    char dir[PATH_LEN], record[PATH_LEN];
    struct stat st;

    snprintf(dir, sizeof(dir), "%s/%u", conf->jobs_dir, job);
    made_record_path(conf, job, record, sizeof(record));
    unlink(record);
    if (agent_jobs_base(conf, err) < 0)
        return -1;
    if (lstat(dir, &st) < 0)
        return errno == ENOENT ? 0 : tbm_errprintf(err, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return unlink(dir) < 0 ? tbm_errprintf(err, "%s: cannot remove: %s", dir, strerror(errno)) : 0;
    if (agent_as_user(st.st_uid, st.st_gid, remove_contents, dir, err) < 0)
        return -1;
    if (rmdir(dir) < 0)
        return tbm_errprintf(err, "%s: cannot remove the job folder: %s", dir, strerror(errno));
    return 0;
}
