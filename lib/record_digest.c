/* record_digest.c: SHA-256 digests of declared data and outputs (OpenSSL), files and folders, with a cache
 * keyed by device, inode, size and modification time so that unchanged files are not read again. */
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_read.h"
#include "strbuf.h"

#define READ_CHUNK (1u << 20)
#define MAX_DEPTH 64
#define MAX_FILES 1000000

struct tbm_digest_cache {
    json_object *map;   /* "dev:ino:size:mtime" -> hex digest */
    size_t reads;
    uint64_t bytes;
};

static void hex_of(const unsigned char *md, char hex[TBM_SHA256_HEX])
{
    static const char digits[] = "0123456789abcdef";
    int i;

    for (i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

void tbm_sha256_hex(const void *data, size_t len, char hex[TBM_SHA256_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
        memset(md, 0, sizeof(md));
    hex_of(md, hex);
}

tbm_digest_cache_t *tbm_digest_cache_new(void)
{
    tbm_digest_cache_t *c = calloc(1, sizeof(*c));

    if (c && !(c->map = json_object_new_object())) {
        free(c);
        return NULL;
    }
    return c;
}

void tbm_digest_cache_free(tbm_digest_cache_t *c)
{
    if (!c)
        return;
    json_object_put(c->map);
    free(c);
}

int tbm_digest_cache_load(tbm_digest_cache_t *c, const char *text, size_t len, tbm_err_t *err)
{
    json_object *doc = tbm_json_parse(text, len, err);

    if (!doc)
        return tbm_errprefix(err, "digest cache: ");
    if (!json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return tbm_errprintf(err, "digest cache: not a JSON object; remove the file (it is rebuilt)");
    }
    {
        json_object_object_foreach(doc, key, val) {
            const char *s = json_object_get_string(val);
            if (!json_object_is_type(val, json_type_string) || strlen(s) != 64 ||
                strspn(s, "0123456789abcdef") != 64) {
                tbm_errprintf(err, "digest cache: the entry %.80s is not a SHA-256; remove the file (it is rebuilt)",
                              key);
                json_object_put(doc);
                return -1;
            }
            json_object_object_add(c->map, key, json_object_get(val));
        }
    }
    json_object_put(doc);
    return 0;
}

char *tbm_digest_cache_text(const tbm_digest_cache_t *c)
{
    const char *s = json_object_to_json_string_ext(c->map, JSON_C_TO_STRING_PLAIN);
    return s ? strdup(s) : NULL;
}

size_t tbm_digest_cache_reads(const tbm_digest_cache_t *c)
{
    return c ? c->reads : 0;
}

uint64_t tbm_digest_cache_bytes(const tbm_digest_cache_t *c)
{
    return c ? c->bytes : 0;
}

/* A file is unchanged while its device, inode, size, mtime and ctime are: its owner may set the mtime back
 * after a change (utimensat), but not the ctime, which that call sets to now. */
static void cache_key(const struct stat *st, char *key, size_t len)
{
    snprintf(key, len, "%ju:%ju:%jd:%jd.%09ld:%jd.%09ld", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
             (intmax_t)st->st_size, (intmax_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
             (intmax_t)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec);
}

/* The digest of an open regular file (from the cache when unchanged). 0, or -1 with why. */
static int file_digest(int fd, const struct stat *st, tbm_digest_cache_t *c, char hex[TBM_SHA256_HEX],
                       const char **why)
{
    unsigned char md[EVP_MAX_MD_SIZE], *buf;
    unsigned int n = 0;
    EVP_MD_CTX *ctx;
    json_object *hit;
    char key[128];
    ssize_t got;
    int rc = 0;

    cache_key(st, key, sizeof(key));
    if (c && json_object_object_get_ex(c->map, key, &hit)) {
        snprintf(hex, TBM_SHA256_HEX, "%s", json_object_get_string(hit));
        return 0;
    }
    if (!(buf = malloc(READ_CHUNK)) || !(ctx = EVP_MD_CTX_new())) {
        free(buf);
        return *why = "out of memory", -1;
    }
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    while ((got = read(fd, buf, READ_CHUNK)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *why = strerror(errno);
            rc = -1;
            break;
        }
        EVP_DigestUpdate(ctx, buf, (size_t)got);
        if (c)
            c->bytes += (uint64_t)got;
    }
    if (rc == 0 && EVP_DigestFinal_ex(ctx, md, &n) && n == 32) {
        hex_of(md, hex);
        if (c) {
            c->reads++;
            json_object_object_add(c->map, key, json_object_new_string(hex));
        }
    } else if (rc == 0) {
        *why = "OpenSSL could not compute SHA-256";
        rc = -1;
    }
    EVP_MD_CTX_free(ctx);
    free(buf);
    return rc;
}

typedef struct walk {
    tbm_digest_cache_t *c;
    json_object *lines;   /* "relative/path\tsha256  size" */
    uint64_t size;
    size_t files;
    const char *why;
    char bad[512];
} walk_t;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(json_object_get_string(*(json_object *const *)a), json_object_get_string(*(json_object *const *)b));
}

static int walk_dir(walk_t *w, int dirfd, const char *rel, int depth)
{
    DIR *d;
    struct dirent *e;
    char sub[4096], line[4200], hex[TBM_SHA256_HEX], target[1024];
    struct stat st;
    int fd = -1, rc = 0;
    ssize_t tl;

    if (depth > MAX_DEPTH)
        return tbm_record_fmt(w->bad, sizeof(w->bad), "%s: folders nested more than %d deep", rel, MAX_DEPTH), -1;
    if (!(d = fdopendir(dirfd)))
        return close(dirfd), tbm_record_fmt(w->bad, sizeof(w->bad), "%s: %s", rel, strerror(errno)), -1;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        tbm_record_fmt(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "%s: %s", sub, strerror(errno));
        } else if (S_ISLNK(st.st_mode)) {
            tl = readlinkat(dirfd, e->d_name, target, sizeof(target) - 1);
            target[tl > 0 ? tl : 0] = '\0';
            tbm_record_fmt(line, sizeof(line), "%s\tlink -> %s", sub, target);
            json_object_array_add(w->lines, json_object_new_string(line));
        } else if (S_ISDIR(st.st_mode)) {
            fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "%s: %s", sub, strerror(errno));
            else
                rc = walk_dir(w, fd, sub, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            fd = -1;
            if (++w->files > MAX_FILES)
                rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "more than %d files", MAX_FILES);
            /* O_NONBLOCK: a fifo put in the file's place since the fstatat above opens at once (and is then
             * no file) instead of waiting for a writer */
            else if ((fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0 ||
                     fstat(fd, &st) < 0)
                rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "%s: %s", sub, strerror(errno));
            else if (!S_ISREG(st.st_mode))
                rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "%s: no longer a file (changed while read)", sub);
            else if (file_digest(fd, &st, w->c, hex, &w->why) < 0)
                rc = -1, tbm_record_fmt(w->bad, sizeof(w->bad), "%s: %s", sub, w->why);
            else {
                tbm_record_fmt(line, sizeof(line), "%s\t%s  %jd", sub, hex, (intmax_t)st.st_size);
                json_object_array_add(w->lines, json_object_new_string(line));
                w->size += (uint64_t)st.st_size;
            }
            if (fd >= 0)
                close(fd);
        }   /* sockets, fifos, devices: not data */
    }
    closedir(d);
    return rc;
}

static json_object *entry(const char *path, const char *kind, const char *hex, uint64_t size, long long files)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "path", json_object_new_string(path));
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(o, "sha256", json_object_new_string(hex));
    json_object_object_add(o, "size", json_object_new_int64((int64_t)size));
    if (files >= 0)
        json_object_object_add(o, "files", json_object_new_int64(files));
    return o;
}

static json_object *failed(const char *path, const char *why)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "path", json_object_new_string(path));
    json_object_object_add(o, "why", json_object_new_string(why));
    return o;
}

json_object *tbm_digest_path(const char *path, tbm_digest_cache_t *c)
{
    char hex[TBM_SHA256_HEX], why[600];
    const char *w = NULL;
    struct stat st;
    walk_t wk;
    tbm_strbuf_t sb;
    json_object *o;
    size_t i;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    if (fd < 0 || fstat(fd, &st) < 0) {
        tbm_record_fmt(why, sizeof(why), "cannot read it: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return failed(path, why);
    }
    if (S_ISREG(st.st_mode)) {
        o = file_digest(fd, &st, c, hex, &w) == 0 ? entry(path, "file", hex, (uint64_t)st.st_size, -1)
                                                  : failed(path, w);
        close(fd);
        return o;
    }
    if (!S_ISDIR(st.st_mode)) {
        close(fd);
        return failed(path, "neither a file nor a folder");
    }
    memset(&wk, 0, sizeof(wk));
    wk.c = c;
    wk.lines = json_object_new_array();
    if (walk_dir(&wk, fd, "", 0) < 0) {
        tbm_record_fmt(why, sizeof(why), "cannot read all of it: %s", wk.bad);
        json_object_put(wk.lines);
        return failed(path, why);
    }
    json_object_array_sort(wk.lines, cmp_line);
    tbm_sb_init(&sb);
    for (i = 0; i < json_object_array_length(wk.lines); i++) {
        const char *l = json_object_get_string(json_object_array_get_idx(wk.lines, i)), *tab = strchr(l, '\t');
        tbm_sb_printf(&sb, "%s  %.*s\n", tab + 1, (int)(tab - l), l);   /* "sha256  size  path" */
    }
    json_object_put(wk.lines);
    if (sb.failed) {
        tbm_sb_free(&sb);
        return failed(path, "out of memory");
    }
    tbm_sha256_hex(sb.s ? sb.s : "", sb.len, hex);
    tbm_sb_free(&sb);
    return entry(path, "folder", hex, wk.size, (long long)wk.files);
}
