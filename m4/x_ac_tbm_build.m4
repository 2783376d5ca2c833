# Build flags of slurm-tbmesh: warnings, sanitizers, hardening, the Darwin switch.

AC_DEFUN([X_AC_TBM_DARWIN], [
  AC_CANONICAL_HOST
  case "$host_os" in
    darwin*) tbm_darwin=yes ;;
    *)       tbm_darwin=no ;;
  esac
  AM_CONDITIONAL([TBM_DARWIN], [test "x$tbm_darwin" = xyes])
])

AC_DEFUN([X_AC_TBM_WARNINGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--disable-werror], [do not turn warnings into errors])],
    [], [enable_werror=yes])
  TBM_WARN_CFLAGS="-std=gnu11 -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter"
  AS_IF([test "x$enable_werror" = xyes], [TBM_WARN_CFLAGS="$TBM_WARN_CFLAGS -Werror"])
  AC_SUBST([TBM_WARN_CFLAGS])
])

AC_DEFUN([X_AC_TBM_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with AddressSanitizer and UndefinedBehaviorSanitizer (test builds)])],
    [], [enable_sanitizers=no])
  TBM_SAN_CFLAGS=""
  TBM_SAN_LDFLAGS=""
  AS_IF([test "x$enable_sanitizers" = xyes], [
    TBM_SAN_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
    TBM_SAN_LDFLAGS="-fsanitize=address,undefined"
  ])
  AC_SUBST([TBM_SAN_CFLAGS])
  AC_SUBST([TBM_SAN_LDFLAGS])
  AM_CONDITIONAL([TBM_SANITIZERS], [test "x$enable_sanitizers" = xyes])
])

AC_DEFUN([X_AC_TBM_HARDENING], [
  TBM_HARDEN_CFLAGS="-fstack-protector-strong -fPIC"
  AS_IF([test "x$enable_sanitizers" != xyes], [TBM_HARDEN_CFLAGS="$TBM_HARDEN_CFLAGS -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2"])
  TBM_HARDEN_LDFLAGS=""
  AS_IF([test "x$tbm_darwin" != xyes], [TBM_HARDEN_LDFLAGS="-Wl,-z,relro -Wl,-z,now"])
  AC_SUBST([TBM_HARDEN_CFLAGS])
  AC_SUBST([TBM_HARDEN_LDFLAGS])
])

# X_AC_TBM_PKG(VAR, pkg-config-name, debian-package)
AC_DEFUN([X_AC_TBM_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
    [AC_MSG_ERROR([$2 was not found by pkg-config. On Debian 12 run: apt-get install $3 (or scripts/install-deps.sh)])])
])

AC_DEFUN([X_AC_TBM_OPENMPI], [
  AC_ARG_VAR([MPICC], [Open MPI C compiler wrapper])
  AC_PATH_PROGS([MPICC], [mpicc], [])
  AS_IF([test -z "$MPICC"],
    [AC_MSG_ERROR([mpicc (Open MPI) was not found. On Debian 12 run: apt-get install libopenmpi-dev openmpi-bin])])
  PKG_CHECK_MODULES([MPI], [ompi-c], [],
    [AC_MSG_ERROR([Open MPI's ompi-c.pc was not found. On Debian 12 run: apt-get install libopenmpi-dev])])
])

AC_DEFUN([X_AC_TBM_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--without-slurm], [build only the Mac side (lib, macnode, kernels): no libslurm])],
    [], [with_slurm=yes])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where to install the Slurm plug-ins [LIBDIR/slurm-tbmesh]])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/slurm-tbmesh'])
  AC_ARG_WITH([slurm-system-plugindir],
    [AS_HELP_STRING([--with-slurm-system-plugindir=DIR],
      [where Slurm's own plug-ins are, for the embedded lab's PluginDir [found beside libslurm]])],
    [SLURM_SYSTEM_PLUGINDIR="$withval"], [SLURM_SYSTEM_PLUGINDIR=""])
  SLURM_CFLAGS=""
  SLURM_LIBS=""
  AS_IF([test "x$with_slurm" != xno], [
    dnl --with-slurm=PREFIX: a Slurm installed from source in PREFIX (include/slurm, lib or lib64); the
    dnl plug-ins and tools find its libslurm at run time through an rpath.
    AS_IF([test "x$with_slurm" != xyes], [
      AS_IF([test -r "$with_slurm/include/slurm/slurm.h"], [],
        [AC_MSG_ERROR([--with-slurm=$with_slurm: no include/slurm/slurm.h there; give the prefix Slurm was installed into (the --prefix of its configure)])])
      tbm_slurm_libdir=""
      for tbm_d in "$with_slurm/lib64" "$with_slurm/lib"; do
        AS_IF([test -z "$tbm_slurm_libdir" && test -e "$tbm_d/libslurm.so"], [tbm_slurm_libdir=$tbm_d])
      done
      AS_IF([test -n "$tbm_slurm_libdir"], [],
        [AC_MSG_ERROR([--with-slurm=$with_slurm: no lib/libslurm.so nor lib64/libslurm.so there])])
      SLURM_CFLAGS="-I$with_slurm/include"; SLURM_LIBS="-L$tbm_slurm_libdir -Wl,-rpath,$tbm_slurm_libdir"])
    tbm_save_CPPFLAGS="$CPPFLAGS"; CPPFLAGS="$CPPFLAGS $SLURM_CFLAGS"
    AC_CHECK_HEADERS([slurm/slurm.h slurm/spank.h slurm/slurmdb.h], [],
      [AC_MSG_ERROR([Slurm's headers were not found. On Debian 12 or 13 run: apt-get install libslurm-dev; for a Slurm built from source, configure --with-slurm=PREFIX (or --without-slurm for the Mac side only)])])
    tbm_save_LIBS="$LIBS"; LIBS="$LIBS $SLURM_LIBS"
    AC_CHECK_LIB([slurm], [slurm_init], [SLURM_LIBS="$SLURM_LIBS -lslurm"],
      [AC_MSG_ERROR([libslurm was not found. On Debian 12 or 13 run: apt-get install libslurm-dev; for a Slurm built from source, configure --with-slurm=PREFIX])])
    AC_MSG_CHECKING([Slurm's version])
    AC_COMPUTE_INT([tbm_slurm_version], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>], [tbm_slurm_version=0])
    SLURM_VERSION_STR=`printf "%d.%02d.%d" $(( tbm_slurm_version >> 16 )) $(( (tbm_slurm_version >> 8) & 255 )) $(( tbm_slurm_version & 255 ))`
    AC_MSG_RESULT([$SLURM_VERSION_STR])
    dnl 22.05 is the oldest release the plug-ins are written for (its SPANK items, job_submit and slurmdb
    dnl calls); compat/tbm_slurm.h holds what differs from there to 24.11 and later.
    AS_IF([test "$tbm_slurm_version" -lt 1443072], [AC_MSG_ERROR([Slurm $SLURM_VERSION_STR is too old: slurm-tbmesh needs Slurm 22.05 or later (Debian 12's libslurm-dev, Debian 13's, or a Slurm built from source: --with-slurm=PREFIX).])])
    AC_DEFINE_UNQUOTED([TBM_SLURM_BUILT_FOR], ["$SLURM_VERSION_STR"], [The Slurm release the plug-ins are built against])
    CPPFLAGS="$tbm_save_CPPFLAGS"; LIBS="$tbm_save_LIBS"
    AS_IF([test -z "$SLURM_SYSTEM_PLUGINDIR"], [
      AC_MSG_CHECKING([where Slurm's plug-ins are])
      tbm_dirs=""
      AS_IF([test -n "$PKG_CONFIG"], [
        tbm_pc_libdir=`$PKG_CONFIG --variable=libdir slurm 2>/dev/null`
        AS_IF([test -n "$tbm_pc_libdir"], [tbm_dirs="$tbm_pc_libdir/slurm $tbm_pc_libdir/slurm-wlm"])])
      AS_IF([test "x$with_slurm" != xyes], [tbm_dirs="$tbm_dirs $tbm_slurm_libdir/slurm"])
      tbm_libslurm=`$CC $CFLAGS $LDFLAGS -print-file-name=libslurm.so 2>/dev/null`
      AS_CASE([$tbm_libslurm], [/*], [
        tbm_libslurm_dir=`dirname "$(readlink -f "$tbm_libslurm")"`
        tbm_dirs="$tbm_dirs $tbm_libslurm_dir/slurm-wlm $tbm_libslurm_dir/slurm"])
      for tbm_d in $tbm_dirs; do
        AS_IF([test -e "$tbm_d/select_cons_tres.so"], [SLURM_SYSTEM_PLUGINDIR="$tbm_d"; break])
      done
      AC_MSG_RESULT([${SLURM_SYSTEM_PLUGINDIR:-not found (the embedded lab needs it: --with-slurm-system-plugindir=DIR)}])
    ])
    AC_DEFINE([HAVE_SLURM], [1], [Define if the Slurm side is built])
  ], [SLURM_PLUGINDIR=""])
  AC_SUBST([SLURM_CFLAGS])
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_SYSTEM_PLUGINDIR])
  AC_SUBST([SLURM_VERSION_STR])
  AM_CONDITIONAL([WITH_SLURM], [test "x$with_slurm" != xno])
])

dnl The bridge's forwarder (macnode-forward), exec'd for every bridge-mode task: linked as a static PIE where
dnl the system has the static libraries (Debian: libjson-c.a, libmunge.a, libc.a), so that its exec maps one
dnl file and binds no symbols; a dynamic link otherwise, and always with sanitizers (they cannot link static).
AC_DEFUN([X_AC_TBM_STATIC_FORWARDER], [
  AC_ARG_ENABLE([static-forwarder],
    [AS_HELP_STRING([--disable-static-forwarder], [link the bridge's forwarder dynamically (default: static where the system can)])],
    [], [enable_static_forwarder=auto])
  TBM_FORWARD_LDFLAGS=""
  TBM_FORWARD_MUNGE_LIBS=$MUNGE_LIBS
  AS_IF([test "x$enable_sanitizers" = xyes || test "x$tbm_darwin" = xyes], [
    AS_IF([test "x$enable_static_forwarder" = xyes], [AC_MSG_ERROR([--enable-static-forwarder: not with sanitizers nor on macOS])])
    enable_static_forwarder=no
  ])
  AS_IF([test "x$enable_static_forwarder" != xno], [
    AC_MSG_CHECKING([whether the forwarder links as a static PIE with json-c and MUNGE])
    tbm_save_CFLAGS=$CFLAGS; tbm_save_LDFLAGS=$LDFLAGS; tbm_save_LIBS=$LIBS
    CFLAGS="$CFLAGS -fPIE $JSONC_CFLAGS $MUNGE_CFLAGS"
    LDFLAGS="$LDFLAGS -static-pie"
    LIBS="$JSONC_LIBS $MUNGE_LIBS $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <json-c/json.h>
#include <munge.h>]], [[json_object_put(json_object_new_object()); return (int)munge_encode(0, 0, 0, 0);]])],
      [tbm_static_forwarder=yes], [tbm_static_forwarder=no])
    CFLAGS=$tbm_save_CFLAGS; LDFLAGS=$tbm_save_LDFLAGS; LIBS=$tbm_save_LIBS
    AC_MSG_RESULT([$tbm_static_forwarder])
    dnl libtool would put libmunge.la's shared library in place of -lmunge: the linker gets the -l itself
    AS_IF([test "x$tbm_static_forwarder" = xyes], [TBM_FORWARD_LDFLAGS="-Xcompiler -static-pie"
      TBM_FORWARD_MUNGE_LIBS=""
      for tbm_f in $MUNGE_LIBS; do
        AS_CASE([$tbm_f], [-l*], [TBM_FORWARD_MUNGE_LIBS="$TBM_FORWARD_MUNGE_LIBS -Wl,$tbm_f"],
                [TBM_FORWARD_MUNGE_LIBS="$TBM_FORWARD_MUNGE_LIBS $tbm_f"])
      done],
          [test "x$enable_static_forwarder" = xyes], [AC_MSG_ERROR([--enable-static-forwarder: no static json-c, MUNGE or libc here])])
    enable_static_forwarder=$tbm_static_forwarder
  ])
  AC_SUBST([TBM_FORWARD_LDFLAGS])
  AC_SUBST([TBM_FORWARD_MUNGE_LIBS])
])
