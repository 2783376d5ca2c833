# bench-report.awk: the comparison of libtbmcoll's TCP all-reduce with Open MPI's MPI_Allreduce, from the
# CSV outputs of `macnode bench` (-F csv) of one run, given in this order:
#   1 tcp sweep   2 mpi sweep   3 tcp 8-byte   4 mpi 8-byte   5 tcp p2p (-o p2p)   6 mpi p2p (optional)
# Prints per size and placement both busbw, their ratio and busbw as a share of one link's one-way rate
# (the slowest cable of the tcp p2p run), then the lowest ratio, the 8-byte latencies and the link rates.
# Variables: what (a title line).
BEGIN { FS = "," }
FNR == 1 { file++; next }
file == 1 { tcp[$4 "," $9] = $12; algo = $2; ranks = $3; sizes[$4] = 1 }
file == 2 { mpi[$4 "," $9] = $12 }
file == 3 && $9 == "out-of-place" { t8 = $10 }
file == 4 && $9 == "out-of-place" { m8 = $10 }
file == 5 { n5++; low = ($8 < $9 ? $8 : $9); if (n5 == 1 || low < link) { link = low; slow = $4 " <-> " $6 }
            lsum += low; lat5 += $12 }
file == 6 { n6++; low = ($8 < $9 ? $8 : $9); msum += low; lat6 += $12 }
END {
    if (what != "") print "# " what
    printf "# all-reduce f32 sum on %d ranks, libtbmcoll %s against Open MPI (MPI_Allreduce, its own choice of algorithm)\n", ranks, algo
    printf "#%13s %-13s %12s %12s %7s %12s\n", "size (B)", "placement", "tcp busbw", "mpi busbw", "ratio", "of one link"
    k = 0
    for (s in sizes) order[++k] = s + 0
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
    worst = -1
    for (i = 1; i <= k; i++) for (p = 0; p < 2; p++) {
        pl = p ? "in-place" : "out-of-place"; key = order[i] "," pl
        r = (mpi[key] > 0 ? tcp[key] / mpi[key] : 0)
        if (worst < 0 || r < worst) { worst = r; wkey = order[i] " " pl }
        printf "%14d %-13s %7.3f GB/s %7.3f GB/s %7.2f %11.0f%%\n", order[i], pl, tcp[key], mpi[key], r, (link > 0 ? 100 * tcp[key] / link : 0)
    }
    printf "# busbw ratio tcp/mpi: lowest %.2f (at %s); target at least 1.2\n", worst, wkey
    printf "# 8-byte all-reduce: tcp %.1f us, mpi %.1f us: ratio %.2f (target: at most 1.0)\n", t8, m8, (m8 > 0 ? t8 / m8 : 0)
    if (n5) printf "# one link, one way (tcp p2p, %d cables): slowest %.3f GB/s (%s), mean %.3f GB/s; latency %.1f us\n", n5, link, slow, lsum / n5, lat5 / n5
    if (n6) printf "# one link, one way (Open MPI p2p, %d pairs): mean %.3f GB/s; latency %.1f us\n", n6, msum / n6, lat6 / n6
}
