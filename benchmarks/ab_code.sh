#!/usr/bin/env bash
# Before and after a change of the package: one scenario of `python -m benchmarks.run` on deltainc/ as it was at
# OLD (a commit) and as it is now, alternately (old, new, new, old, ...), each a whole process, with this checkout's
# benchmarks/ on both sides, so that a scenario added with the change measures the code before it too.
#
#   bash benchmarks/ab_code.sh OLD SCENARIO ROUNDS [OUT [ARG...]]   e.g. bash benchmarks/ab_code.sh 65f70eb first-window 2
#
# ARGs after OUT go to `python -m benchmarks.run` on both sides (e.g. --rows-per-day 2000 --days 30). With
# AB_OWN_BENCHMARKS=1 the old side keeps its own benchmarks/ (a change that moved the package's modules, which
# today's benchmarks import by their new names).
# Each process's report goes to OUT/<n>-<side>.md (OUT defaults to bench-data/ab); the load average before each
# process is printed with its side, and the scenario's own table is printed after it.
set -euo pipefail
old=$1 scenario=$2 rounds=$3 out=${4:-bench-data/ab}
shift $(( $# < 4 ? $# : 4 ))
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
before=$(mktemp -d /tmp/deltainc-ab-XXXXXX)
trap 'git -C "$here" worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
git -C "$here" worktree add -q --detach "$before" HEAD
if [[ ${AB_OWN_BENCHMARKS:-} == 1 ]]; then
  git -C "$before" checkout -q --detach "$old"
else
  git -C "$before" checkout -q "$old" -- deltainc
  rm -rf "$before/benchmarks" && cp -r "$here/benchmarks" "$before/benchmarks"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
for n in $(seq 1 "$rounds"); do
  if (( n % 2 )); then order="old new"; else order="new old"; fi
  for side in $order; do
    if [[ $side == old ]]; then tree=$before; else tree=$here; fi
    echo "round $n $side: load $(cut -d' ' -f1-3 /proc/loadavg)"
    (cd "$tree" && PYTHONPATH="$tree" "$python" -m benchmarks.run --scenarios "$scenario" --repeat 3 \
      --out "$out/$n-$side.md" --data "$out/data-$side" "$@" >"$out/$n-$side.log" 2>&1)
    sed -n '/^| side /,/x\.$/p' "$out/$n-$side.md"
  done
done
