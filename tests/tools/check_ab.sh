#!/usr/bin/env bash
# `make check`'s selection before and after a change: the tests of commit OLD and of this checkout, alternately
# (old, new, new, old, ...), each a whole pytest process on two workers, the wall time and the load average before
# each printed with its side. This checkout's virtualenv serves both sides.
#
#   bash tests/tools/check_ab.sh OLD ROUNDS        e.g. bash tests/tools/check_ab.sh 65f70eb 2
set -euo pipefail
old=$1 rounds=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
before=$(mktemp -d /tmp/deltainc-check-ab-XXXXXX)
trap 'git -C "$here" worktree remove --force "$before" >/dev/null 2>&1 || true' EXIT
git -C "$here" worktree add -q --detach "$before" "$old"
for n in $(seq 1 "$rounds"); do
  if (( n % 2 )); then order="old new"; else order="new old"; fi
  for side in $order; do
    if [[ $side == old ]]; then tree=$before; else tree=$here; fi
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    began=$(date +%s.%N)
    last=$(cd "$tree" && PYTHONPATH="$tree" "$python" -m pytest -q -p no:cacheprovider -n 2 --dist loadfile \
      --no-loadscope-reorder -m "not windows and not processes and not service" 2>&1 | tail -1)
    echo "round $n $side: load $load, wall $(echo "$(date +%s.%N) - $began" | bc | cut -d. -f1) s: $last"
  done
done
