#!/usr/bin/env bash
# Run the hand-written baselines (all, or the tasks named as arguments), each in a
# fresh temp directory with data/ -> the task's public/, time it, grade it with
# `mlerl grade --json`, and print a table. Also writes bench/results/baselines-<date>.tsv.
#
#   bench/run-baselines.sh                      # all ten tasks
#   bench/run-baselines.sh telco-churn meats-composition
#   MLERL=/path/to/mlerl PYTHON=/usr/bin/python3 bench/run-baselines.sh
#
# Exit status: 0 when every baseline ran and graded valid, 1 otherwise, 2 on bad usage.
set -uo pipefail

NAME=run-baselines
. "$(dirname "$0")/common.sh"
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || die "python not found: $PYTHON (set PYTHON=)"

if [ $# -gt 0 ]; then tasks=("$@"); else
    tasks=(); for f in "$BENCH"/baselines/*.py; do tasks+=("$(basename "$f" .py)"); done
fi
for t in "${tasks[@]}"; do
    [ -f "$BENCH/baselines/$t.py" ] || die "no baseline bench/baselines/$t.py"
    [ -d "$TASKS_DIR/$t/public" ] || die "no task $TASKS_DIR/$t"
done

mkdir -p "$BENCH/results"
out=$BENCH/results/baselines-$(date +%F).tsv
logdir=$BENCH/results/logs
mkdir -p "$logdir"
# Rows for the tasks run now replace their old rows; other tasks' rows are kept.
new=$(mktemp)
printf '%-22s %-18s %-7s %-10s %s\n' task metric better score seconds

failed=0
for t in "${tasks[@]}"; do
    read -r metric dir < <(task_metric "$t")
    work=$(mktemp -d)
    ln -s "$TASKS_DIR/$t/public" "$work/data"
    start=$(date +%s.%N)
    (cd "$work" && OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 "$PYTHON" "$BENCH/baselines/$t.py") \
        > "$logdir/$t.log" 2>&1
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f')
    score=FAILED
    if [ $rc -ne 0 ]; then
        echo "run-baselines: $t: baseline exited $rc, see $logdir/$t.log" >&2
        failed=1
    elif [ ! -f "$work/submission.csv" ]; then
        echo "run-baselines: $t: no submission.csv written, see $logdir/$t.log" >&2
        failed=1
    else
        g=$("$MLERL" grade --task "$TASKS_DIR/$t" --submission "$work/submission.csv" --json)
        if [ "$(jq -r .valid <<<"$g")" = true ]; then
            score=$(jq -r .score <<<"$g" | xargs printf '%.4f')
        else
            echo "run-baselines: $t: invalid submission: $(jq -r .error <<<"$g")" >&2
            score=INVALID; failed=1
        fi
    fi
    printf '%-22s %-18s %-7s %-10s %s\n' "$t" "$metric" "$dir" "$score" "$secs"
    printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$metric" "$dir" "$score" "$secs" >> "$new"
    rm -rf "$work"
done
{
    printf 'task\tmetric\tdirection\tscore\tseconds\n'
    { [ -f "$out" ] && tail -n +2 "$out" | grep -v -F -f <(cut -f1 "$new" | sed 's/$/\t/') ; cat "$new"; } | sort
} > "$out.tmp" && mv "$out.tmp" "$out"
rm -f "$new"
echo "table written to $out; program output in $logdir/" >&2
exit $failed
