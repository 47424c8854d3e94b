#!/usr/bin/env bash
# Run `mlerl train` on each suite task (or the ones named) with the wall-clock
# budget $BUDGET (default 4m), read the run folder's summary.json, print a table
# line per task and append a JSON line to bench/results/train-<date>.jsonl.
#
#   bench/run-train.sh                          # all ten tasks, 4 minutes each (~40 min)
#   BUDGET=30s bench/run-train.sh meats-composition
#   MLERL=/path/to/mlerl OUT=/tmp/runs TRAIN_ARGS="--workers 2 --seed 1" bench/run-train.sh
#
# Run folders go to $OUT/<task>-<timestamp> (default: a fresh temp dir), kept for inspection.
# Exit status: 0 when every run finished with a best score, 1 otherwise, 2 on bad usage.
set -uo pipefail

NAME=run-train
. "$(dirname "$0")/common.sh"
BUDGET=${BUDGET:-4m}
OUT=${OUT:-$(mktemp -d /tmp/mlerl-train.XXXXXX)}
mkdir -p "$OUT" || die "cannot create $OUT"

if [ $# -gt 0 ]; then tasks=("$@"); else
    tasks=(); for d in "$TASKS_DIR"/*/; do tasks+=("$(basename "$d")"); done
fi
for t in "${tasks[@]}"; do [ -f "$TASKS_DIR/$t/task.yaml" ] || die "no task $TASKS_DIR/$t"; done

mkdir -p "$BENCH/results"
jsonl=$BENCH/results/train-$(date +%F).jsonl
host=$(hostname); cores=$(nproc)
commit=$(cd "$ROOT" && git rev-parse --short HEAD)
printf '%-22s %-18s %-7s %-10s %-9s %s\n' task metric better best_score episodes seconds

failed=0
for t in "${tasks[@]}"; do
    read -r metric dir < <(task_metric "$t")
    run=$OUT/$t-$(date +%Y%m%dT%H%M%S)
    start=$(date +%s)
    # shellcheck disable=SC2086  # TRAIN_ARGS is split on purpose
    "$MLERL" train --task "$t" --budget "$BUDGET" --out "$run" ${TRAIN_ARGS:-} > "$run.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    best=null; completed=null
    if [ -f "$run/summary.json" ]; then
        best=$(jq -c '.best_score' "$run/summary.json")
        completed=$(jq -c '.completed' "$run/summary.json")
    fi
    if [ $rc -ne 0 ] || [ "$best" = null ]; then
        echo "run-train: $t: train exited $rc, best_score $best; log $run.log" >&2
        failed=1
    fi
    shown=$best; [ "$best" != null ] && shown=$(printf '%.4f' "$best")
    printf '%-22s %-18s %-7s %-10s %-9s %s\n' "$t" "$metric" "$dir" "$shown" "$completed" "$secs"
    jq -nc --arg task "$t" --arg metric "$metric" --arg dir "$dir" --argjson best "$best" \
        --argjson completed "$completed" --arg budget "$BUDGET" --argjson secs "$secs" --argjson rc "$rc" \
        --arg run "$run" --arg host "$host" --argjson cores "$cores" --arg commit "$commit" \
        --arg date "$(date -Is)" --arg args "${TRAIN_ARGS:-}" \
        '{task:$task, metric:$metric, better:$dir, best_score:$best, completed:$completed, budget:$budget,
          seconds:$secs, exit_code:$rc, run_dir:$run, train_args:$args, host:$host, cores:$cores,
          commit:$commit, date:$date}' >> "$jsonl"
done
echo "results appended to $jsonl; run folders in $OUT" >&2
exit $failed
