#!/usr/bin/env bash
# Measure the untrained built-in policy's failure rate: per task, sample N
# programs from a fresh recipe policy (bench/prior, scratch prompts, its own
# temperature and prior), run each once with `mlerl exec --json`, and append
# one JSON line per program to $RESULTS (default bench/results/prior-<date>.jsonl):
# the episode result plus "program" and "plan". Then print, per task, how many
# programs were invalid, how many timed out, and the most common errors.
#
#   bench/run-prior.sh telco-churn bench/unseen/poll-adjustment  # suite names or task folders
#   N=30 TIMEOUT=40s PARALLEL=2 SEED=1 bench/run-prior.sh ...
#   DEFAULT=1 bench/run-prior.sh ...     # instead: run the policy's prior plan (recipe.Default) once per task
#   FROM=12 N=30 bench/run-prior.sh ...  # run only programs 12..29 of the same sample (extends an N=12 run)
#   KEEP=1 bench/run-prior.sh ...        # keep the sampled programs (else removed at exit)
#   bench/run-prior.sh --summary FILE.jsonl                      # only the summary of earlier runs
#
# TIMEOUT defaults to 40s, the per-program limit `mlerl train --budget 4m` uses;
# THREADS (default 1) the OpenMP/BLAS threads per program, as train gives each
# of its 2 slots on 2 cores (exec's own default, 2, with 2 programs at once on 2
# cores stalls OpenMP and turns fast programs into time-outs).
# Exit status: 0 when every program ran (valid or not), 2 on bad usage.
set -uo pipefail

NAME=run-prior
. "$(dirname "$0")/common.sh"
N=${N:-30}; TIMEOUT=${TIMEOUT:-40s}; PARALLEL=${PARALLEL:-2}; SEED=${SEED:-1}; THREADS=${THREADS:-1}; FROM=${FROM:-0}
RESULTS=${RESULTS:-$BENCH/results/prior-$(date +%F).jsonl}

summary() {
    jq -rs '
      group_by(.task)[] |
      (length) as $n | ([.[] | select(.valid | not)] | length) as $bad |
      ([.[] | select(.timed_out)] | length) as $to |
      "\(.[0].task): \($bad)/\($n) invalid (\((100 * $bad / $n) | floor)%), \($to) timed out",
      ([.[] | select(.valid | not) | .error | sub("^no submission.csv written \\(exit code [0-9-]+: "; "") | sub("\\)$"; "") | .[0:140]]
        | group_by(.) | map({e: .[0], n: length}) | sort_by(-.n) | .[0:4][] | "    \(.n)x \(.e)")' "$@"
}

if [ "${1:-}" = --summary ]; then shift; summary "$@"; exit 0; fi
[ $# -gt 0 ] || die "name at least one task (suite name or folder)"
work=$(mktemp -d /tmp/mlerl-prior.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
PRIOR=$work/prior
(cd "$ROOT" && go build -o "$PRIOR" ./bench/prior) || die "go build ./bench/prior failed"
mkdir -p "$(dirname "$RESULTS")"
commit=$(cd "$ROOT" && git rev-parse --short HEAD)

run_one() { # task program-file index plan
    local r
    r=$(nice "$MLERL" exec --task "$1" --code "$2" --timeout "$TIMEOUT" --threads "$THREADS" --json 2>/dev/null) || true
    [ -n "$r" ] || r='{"valid":false,"timed_out":false,"error":"mlerl exec printed no result"}'
    jq -c --arg task "$1" --arg program "$3" --arg plan "$4" --arg seed "$SEED" --arg commit "$commit" \
        --arg timeout "$TIMEOUT" --arg threads "$THREADS" '. + {task: (.task // $task), program: $program, plan: $plan,
        seed: $seed, commit: $commit, timeout: $timeout, threads: $threads}' <<< "$r"
}
export -f run_one
export MLERL TIMEOUT SEED THREADS commit

for t in "$@"; do
    dir=$(mktemp -d "$work/sample.XXXXXX")
    def=(); [ -n "${DEFAULT:-}" ] && def=(--default)
    "$PRIOR" --task "$t" --n "$N" --seed "$SEED" --out "$dir" "${def[@]}" || die "sampling $t failed"
    tmp=$dir/results.jsonl
    # The policy samples in order, so the first k programs of N are those of a run with N=k.
    while IFS=$'\t' read -r i plan; do
        ((10#$i >= FROM)) && printf '%s\0%s\0%s\0%s\0' "$t" "$dir/$i.py" "$i" "$plan"
    done < "$dir/plans.tsv" |
        xargs -0 -n 4 -P "$PARALLEL" bash -c 'run_one "$@"' _ > "$tmp"
    cat "$tmp" >> "$RESULTS"
    summary "$tmp"
done
echo "results appended to $RESULTS" >&2
[ -z "${KEEP:-}" ] || echo "programs kept in $work" >&2
