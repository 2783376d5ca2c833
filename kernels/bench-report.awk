# bench-report.awk: the comparison of libtbmcoll's TCP all-reduce with Open MPI's MPI_Allreduce, from the
# CSV outputs of `macnode bench` (-F csv) of one run, given in this order:
#   1 tcp sweep   2 mpi sweep   3 tcp 8-byte   4 mpi 8-byte   5 tcp p2p (-o p2p)   6 mpi p2p (optional)
#   7 tcp sendrecv sweep (-o sendrecv; optional, after 6)
# A run may hold several rounds, taken in turns (tcp, mpi, tcp, mpi, ...): files 1 to 4 then hold one row
# per size, placement and round (a header line before each round's rows is skipped). Each side's figure
# is the median of its rounds, so that a swing of the machine's load during one side's round does not
# decide the ratio; the lowest and highest ratio of the rounds taken pairwise are printed beside it.
# Prints per size and placement both busbw, their ratio and busbw as a share of one link's one-way rate
# (the slowest cable of the tcp p2p runs, each direction the median of its runs), then the lowest ratio, the
# 8-byte latencies and the link rates (one way, and both ways at once). With file 7, the yardstick of each size: every rank sending that many bytes to
# the next while receiving as many from the one before (what each rank of an all-reduce does throughout), in
# bytes per second per rank, which is what an all-reduce's busbw counts; each all-reduce's busbw as a share of
# it, and the sizes where 1.2x Open MPI's busbw is above it.
# With a tuned Open MPI peer (bench-compare.sh -P both), its files by name: ttcp, tmpi, ttcp8, tmpi8 (libtbmcoll's
# sweep and Open MPI's beside it, the same for 8 bytes, as files 1 to 4) and won (lines "SIZE ALGORITHM NAME": the
# all-reduce algorithm Open MPI's rules take from SIZE bytes up): each row then has both Open MPI figures, the
# default (mpi) and the tuned one, libtbmcoll's beside each (tcp, tcp'), the ratio to each and the algorithm.
# Variables: what (a title line); ttcp, tmpi, ttcp8, tmpi8, won (the tuned peer, optional).
BEGIN { FS = "," }
# a header line (the first of each file, and of each round appended to it)
FNR == 1 { file++ }
$1 == "op" { next }
file == 1 { k = $4 "," $9; tcp[k, ++nt[k]] = $12; algo = $2; ranks = $3; sizes[$4] = 1 }
file == 2 { k = $4 "," $9; mpi[k, ++nm[k]] = $12 }
file == 3 && $9 == "out-of-place" { t8[++n8t] = $10 }
file == 4 && $9 == "out-of-place" { m8[++n8m] = $10 }
file == 5 { c = $3 "," $5; if (!(c in pn)) { cab[++n5] = c; pname[c] = $4 " <-> " $6 }
            j = ++pn[c]; pab[c, j] = $8; pba[c, j] = $9; pbo[c, j] = $10; plat[c, j] = $12 }
file == 6 { n6++; low = ($8 < $9 ? $8 : $9); msum += low; lat6 += $12 }
file == 7 { sr[$4, ++nsr[$4]] = $12 }
# median(A, N): the median of A[1..N] (sorted in place); 0 when N is 0.
function median(a, n,    i, j, x) {
    if (n < 1) return 0
    for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# cables(): from file 5's rows (one per cable and run; a run may be given several times, taken in turns with the
# sweeps), per cable the median of its runs each way, both ways at once and of its latency; one link's one-way
# rate is the slowest cable's slower direction (link, slow), with the means over the cables (lsum, lat5, both5)
function cables(    i, c, ab, ba, low) {
    p2pruns = 0
    for (i = 1; i <= n5; i++) {
        c = cab[i]; if (pn[c] > p2pruns) p2pruns = pn[c]
        ab = cable_median(pab, c); ba = cable_median(pba, c)
        low = (ab < ba ? ab : ba)
        if (i == 1 || low < link) { link = low; slow = pname[c] }
        lsum += low; both5 += cable_median(pbo, c); lat5 += cable_median(plat, c)
    }
}
# cable_median(X, C): the median of cable C's runs X[C, 1..pn[C]]
function cable_median(x, c,    a, j) {
    for (j = 1; j <= pn[c]; j++) a[j] = x[c, j]
    return median(a, pn[c])
}
# load(PATH, KIND): the tuned peer's CSV rows (a header line before each round's rows): KIND tcp or mpi, a
# sweep; tcp8 or mpi8, the 8-byte run
function load(path, kind,    line, f, k) {
    while ((getline line < path) > 0) {
        split(line, f, ",")
        if (f[1] == "op") continue
        k = f[4] "," f[9]
        if (kind == "tcp") ttc[k, ++ntt[k]] = f[12]
        else if (kind == "mpi") ttm[k, ++ntm[k]] = f[12]
        else if (f[9] == "out-of-place" && kind == "tcp8") tt8[++n8tt] = f[10]
        else if (f[9] == "out-of-place") tm8[++n8tm] = f[10]
    }
    close(path)
}
# span(A, B, KEY): " lo-hi" of the rounds' ratios A[KEY, j] / B[KEY, j] taken pairwise, padded; blanks for one round
function span(a, na, b, nb, key,    j, q, lo, hi) {
    if (rounds < 2) return ""
    lo = hi = -1
    for (j = 1; j <= na[key] && j <= nb[key]; j++) if (b[key, j] > 0) {
        q = a[key, j] / b[key, j]
        if (lo < 0 || q < lo) lo = q
        if (hi < 0 || q > hi) hi = q
    }
    return sprintf(" %-10s", lo < 0 ? "" : sprintf("%.2f-%.2f", lo, hi))
}
# the tuned peer's table: per size and placement both Open MPI figures, libtbmcoll's beside each, the ratios
function tuned_table(    i, p, pl, key, j, tb, mb, ub, vb, r, u, q, wk, nw, line, f, rule, best) {
    load(ttcp, "tcp"); load(tmpi, "mpi"); load(ttcp8, "tcp8"); load(tmpi8, "mpi8")
    while ((getline line < won) > 0) { split(line, f, " "); wk[++nw] = f[1] + 0; wn[nw] = f[2] (f[2] == 0 ? " (own choice)" : " " f[3]) }
    close(won)
    printf "# all-reduce f32 sum on %d ranks, libtbmcoll %s against Open MPI with its defaults (mpi: its own choice of\n", ranks, algo
    printf "# algorithm) and Open MPI tuned for this host (tuned: the settings below); busbw in GB/s, ratios tcp/mpi and\n"
    printf "# tcp'/tuned: tcp is libtbmcoll's beside mpi, tcp' libtbmcoll's beside tuned (%s);\n",
           (launches ? "the same runs: in launches, each peer's runs take turns with them" : "in the tuned peer's own launch")
    printf "# link: tcp as a share of one link's one-way rate; the tuned algorithm: what Open MPI's rules take at that size\n"
    if (rounds > 1)
        printf "# each busbw is the median of %d rounds taken in turns; the ratios of the rounds taken pairwise after each ratio\n", rounds
    printf "#%13s %-13s %7s %7s %6s%s %7s %7s %6s%s %5s  %s\n", "size (B)", "placement", "tcp", "mpi", "ratio",
           (rounds > 1 ? sprintf(" %-10s", "rounds") : ""), "tcp'", "tuned", "ratio", (rounds > 1 ? sprintf(" %-10s", "rounds") : ""),
           "link", "tuned algorithm"
    worst = tworst = bworst = -1
    for (i = 1; i <= k; i++) {
        rule = "?"; best = -1
        for (j = 1; j <= nw; j++) if (wk[j] <= order[i] && wk[j] > best) { best = wk[j]; rule = wn[j] }
        for (p = 0; p < 2; p++) {
            pl = p ? "in-place" : "out-of-place"; key = order[i] "," pl
            delete a; for (j = 1; j <= nt[key]; j++) a[j] = tcp[key, j]; tb = median(a, nt[key])
            delete a; for (j = 1; j <= nm[key]; j++) a[j] = mpi[key, j]; mb = median(a, nm[key])
            delete a; for (j = 1; j <= ntt[key]; j++) a[j] = ttc[key, j]; ub = median(a, ntt[key])
            delete a; for (j = 1; j <= ntm[key]; j++) a[j] = ttm[key, j]; vb = median(a, ntm[key])
            r = (mb > 0 ? tb / mb : 0); u = (vb > 0 ? ub / vb : 0)
            if (worst < 0 || r < worst) { worst = r; wkey = order[i] " " pl }
            if (tworst < 0 || u < tworst) { tworst = u; twkey = order[i] " " pl }
            q = (r < u ? r : u)
            if (bworst < 0 || q < bworst) { bworst = q; bwkey = order[i] " " pl }
            printf "%14d %-13s %7.3f %7.3f %6.2f%s %7.3f %7.3f %6.2f%s %4.0f%%  %s\n", order[i], pl, tb, mb, r,
                   span(tcp, nt, mpi, nm, key), ub, vb, u, span(ttc, ntt, ttm, ntm, key), (link > 0 ? 100 * tb / link : 0), rule
        }
    }
    printf "# busbw ratio tcp/mpi: lowest %.2f (at %s); target at least 1.2\n", worst, wkey
    printf "# busbw ratio tcp'/tuned: lowest %.2f (at %s); target at least 1.2\n", tworst, twkey
    printf "# busbw ratio against Open MPI at its best (the lower of the two ratios at each size): lowest %.2f (at %s)\n", bworst, bwkey
    rule8 = "?"; best = -1
    for (j = 1; j <= nw; j++) if (wk[j] <= 8 && wk[j] > best) { best = wk[j]; rule8 = wn[j] }
}
# the table without a tuned peer: per size and placement both busbw, their ratio, the share of one link
function default_table(    i, p, pl, key, j, lo, hi, q, tb, mb, r) {
    printf "# all-reduce f32 sum on %d ranks, libtbmcoll %s against Open MPI (MPI_Allreduce, its own choice of algorithm)\n", ranks, algo
    if (rounds > 1)
        printf "# each busbw is the median of %d rounds taken in turns; the ratios of the rounds taken pairwise beside it\n", rounds
    printf "#%13s %-13s %12s %12s %7s %12s %s\n", "size (B)", "placement", "tcp busbw", "mpi busbw", "ratio", "of one link",
           (rounds > 1 ? "  rounds' ratios" : "")
    worst = -1
    for (i = 1; i <= k; i++) for (p = 0; p < 2; p++) {
        pl = p ? "in-place" : "out-of-place"; key = order[i] "," pl
        lo = hi = -1
        for (j = 1; j <= nt[key] && j <= nm[key]; j++) if (mpi[key, j] > 0) {
            q = tcp[key, j] / mpi[key, j]
            if (lo < 0 || q < lo) lo = q
            if (hi < 0 || q > hi) hi = q
        }
        delete a; for (j = 1; j <= nt[key]; j++) a[j] = tcp[key, j]; tb = median(a, nt[key])
        delete a; for (j = 1; j <= nm[key]; j++) a[j] = mpi[key, j]; mb = median(a, nm[key])
        r = (mb > 0 ? tb / mb : 0)
        if (worst < 0 || r < worst) { worst = r; wkey = order[i] " " pl }
        printf "%14d %-13s %7.3f GB/s %7.3f GB/s %7.2f %11.0f%%", order[i], pl, tb, mb, r, (link > 0 ? 100 * tb / link : 0)
        if (rounds > 1 && lo >= 0) printf "   %.2f-%.2f", lo, hi
        printf "\n"
    }
    printf "# busbw ratio tcp/mpi: lowest %.2f (at %s); target at least 1.2\n", worst, wkey
}
END {
    if (what != "") print "# " what
    cables()
    rounds = 0
    for (key in nt) if (nt[key] > rounds) rounds = nt[key]
    k = 0
    for (s in sizes) order[++k] = s + 0
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
    if (ttcp != "") tuned_table(); else default_table()
    nsrs = 0
    for (s in nsr) nsrs++
    if (nsrs) {
        printf "# yardstick: every rank sends the size to the next while receiving it from the one before (tcp -o sendrecv,\n"
        printf "# GB/s per rank, an all-reduce's busbw is the same bytes per second per rank); each busbw as a share of it\n"
        printf "#%13s %12s %22s %22s\n", "size (B)", "sendrecv", "tcp out / in of it", "mpi out / in of it"
        beyond = ""
        for (i = 1; i <= k; i++) {
            s = order[i]; if (!nsr[s]) continue
            delete a; for (j = 1; j <= nsr[s]; j++) a[j] = sr[s, j]; y = median(a, nsr[s])
            for (p = 0; p < 2; p++) {
                key = s "," (p ? "in-place" : "out-of-place")
                delete a; for (j = 1; j <= nt[key]; j++) a[j] = tcp[key, j]; tq[p] = median(a, nt[key])
                delete a; for (j = 1; j <= nm[key]; j++) a[j] = mpi[key, j]; mq[p] = median(a, nm[key])
                if (y > 0 && 1.2 * mq[p] > y) beyond = beyond " " s " " (p ? "in-place" : "out-of-place") ","
            }
            if (y > 0)
                printf "%14d %7.3f GB/s %10.0f%% / %4.0f%% %15.0f%% / %4.0f%%\n", s, y, 100 * tq[0] / y, 100 * tq[1] / y,
                       100 * mq[0] / y, 100 * mq[1] / y
        }
        sub(/,$/, "", beyond)
        printf "# 1.2x Open MPI's busbw is above the yardstick at:%s\n", (beyond == "" ? " no size" : beyond)
    }
    a8 = median(t8, n8t); b8 = median(m8, n8m)
    printf "# 8-byte all-reduce%s: tcp %.1f us, mpi %.1f us: ratio %.2f (target: at most 1.0)\n",
           (n8t > 1 ? " (medians of " n8t " rounds)" : ""), a8, b8, (b8 > 0 ? a8 / b8 : 0)
    if (ttcp != "") {
        a8 = median(tt8, n8tt); b8 = median(tm8, n8tm)
        printf "# 8-byte all-reduce beside the tuned peer%s: tcp' %.1f us, tuned %.1f us, algorithm %s: ratio %.2f\n",
               (n8tt > 1 ? " (medians of " n8tt " rounds)" : ""), a8, b8, rule8, (b8 > 0 ? a8 / b8 : 0)
    }
    if (n5) printf "# one link, one way (tcp p2p, %d cables%s): slowest %.3f GB/s (%s), mean %.3f GB/s; latency %.1f us\n",
                   n5, (p2pruns > 1 ? ", each the median of its " p2pruns " runs" : ""), link, slow, lsum / n5,
                   lat5 / n5
    # an all-reduce moves bytes both ways at once: where both directions share the same cores (loopback, the
    # lab) this rate, per direction, is the nearer yardstick (it moves each message whole, -e bytes, where the
    # all-reduce moves pieces that stay in cache, so a busbw may pass it)
    if (n5) printf "# one link, both ways at once (tcp p2p): mean %.3f GB/s per direction\n", both5 / n5 / 2
    if (n6) printf "# one link, one way (Open MPI p2p, %d pairs): mean %.3f GB/s; latency %.1f us\n", n6, msum / n6, lat6 / n6
}
