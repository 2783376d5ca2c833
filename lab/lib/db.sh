# db.sh (sourced by tbmesh-lab): accounting: the lab's MariaDB (its data under the state folder), slurmdbd,
# and the lab's cluster, accounts and users in it.

db() { mariadb --socket="$RUN/mysql/mysqld.sock" -uroot "$@"; }

db_secret() {
    [ -s "$ETC/db.secret" ] || { head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$ETC/db.secret"; chmod 600 "$ETC/db.secret"; }
}

start_mariadb() {
    mkdir -p "$LAB/mysql"
    chown mysql:mysql "$LAB/mysql"
    if [ ! -d "$LAB/mysql/mysql" ]; then
        mariadb-install-db --user=mysql --datadir="$LAB/mysql" --auth-root-authentication-method=socket \
            --skip-test-db > "$LOG/mariadb-install.log" 2>&1 || die "mariadb-install-db failed; see $LOG/mariadb-install.log"
    fi
    mkdir -p "$RUN/mysql"; chmod 755 "$RUN"; chown mysql:mysql "$RUN/mysql"
    touch "$LOG/mariadb.log"; chown mysql:mysql "$LOG/mariadb.log"
    setsid mariadbd --user=mysql --datadir="$LAB/mysql" --socket="$RUN/mysql/mysqld.sock" --port=$DB_PORT \
        --bind-address=127.0.0.1 --pid-file="$RUN/mysql/mysqld.pid" --log-error="$LOG/mariadb.log" \
        --skip-name-resolve --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
        --innodb-flush-log-at-trx-commit=2 --performance-schema=OFF < /dev/null > /dev/null 2>&1 &
    wait_for MariaDB 30 db -e 'select 1'
    # The accounting database is made here, not by slurmdbd's first start: slurmdbd makes it after a refused
    # connect and goes on with the same handle, which MariaDB's client library 3.4 (Debian 13) leaves unable
    # to read a result ("Number of columns in result (=1) ... (=0)"), and slurmdbd stops.
    db -e "CREATE DATABASE IF NOT EXISTS \`${CLUSTER}_acct_db\`;
           CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$(cat "$ETC/db.secret")';
           GRANT ALL ON \`${CLUSTER}_acct_db\`.* TO 'slurm'@'127.0.0.1'; FLUSH PRIVILEGES;"
}

start_slurmdbd() {
    slurmdbd
    wait_for slurmdbd 30 sacctmgr -n show cluster
}

setup_accounts() {
    local i
    sacctmgr -i -Q add cluster "$CLUSTER" >/dev/null 2>&1 || true
    for i in 0 1; do
        sacctmgr -i -Q add account "${LAB_ACCOUNTS[$i]}" Cluster="$CLUSTER" \
            Description="tbmesh lab account" Organization=tbmlab >/dev/null 2>&1 || true
        sacctmgr -i -Q add user "${LAB_USERS[$i]}" Account="${LAB_ACCOUNTS[$i]}" Cluster="$CLUSTER" >/dev/null 2>&1 || true
    done
    sacctmgr -i -Q add user root Account=lab-hpc Cluster="$CLUSTER" AdminLevel=Admin >/dev/null 2>&1 || true
    sacctmgr -n -P show assoc cluster="$CLUSTER" format=user | grep -qx "${LAB_USERS[1]}" \
        || die "sacctmgr did not record the lab's users; see $LOG/slurmdbd.log"
}

make_users() {
    local u
    for u in "${LAB_USERS[@]}"; do
        id "$u" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash --comment "tbmesh lab user" "$u"
    done
    mkdir -p "$LAB/work"
    chmod 755 "$LAB/work"
    for u in "${LAB_USERS[@]}"; do
        mkdir -p "$LAB/work/$u"
        chown "$u:" "$LAB/work/$u"
    done
}
