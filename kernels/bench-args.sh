# bench-args.sh: the options kernels/bench-compare.sh and kernels/mpi-tune.sh share, checked the same way
# (sourced; the caller defines bad MESSAGE, which says what is wrong and exits).
# bytes SIZE: a size (digits, then K, M or G) in bytes; fails on anything else
bytes() {
  case $1 in
    *[!0-9KkMmGg]*|[!1-9]*|*[KkMmGg]?*|???????????*) return 1 ;;
    *[Kk]) echo $((${1%?} * 1024)) ;;
    *[Mm]) echo $((${1%?} * 1048576)) ;;
    *[Gg]) echo $((${1%?} * 1073741824)) ;;
    *) echo "$1" ;;
  esac
}
# check_sizes MIN MAX: the sweep's sizes (-b and -e) in bytes, in minb and maxb
check_sizes() {
  minb=$(bytes "$1") || bad "-b takes a size (digits, then K, M or G: 1M), not '$1'"
  maxb=$(bytes "$2") || bad "-e takes a size (digits, then K, M or G: 64M), not '$2'"
  [ "$minb" -le "$maxb" ] || bad "-b must not exceed -e ($1 > $2)"
}
# check_search ITERS ROUNDS: the search's iterations per run (-s) and rounds (-S)
check_search() {
  case $1 in
    [1-9]|[1-9][0-9]) ;;
    *) bad "-s takes a number of iterations for the search from 1 to 99, not '$1'" ;;
  esac
  case $2 in
    [1-9]) ;;
    *) bad "-S takes a number of rounds for the search from 1 to 9, not '$2'" ;;
  esac
}
