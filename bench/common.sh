# Sourced by the bench/ scripts: the paths, die, and the checks both need.
# The sourcing script sets NAME (for messages) first.
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$BENCH")
TASKS_DIR=$ROOT/suite/tasks

die() { echo "$NAME: $*" >&2; exit 2; }
command -v jq >/dev/null || die "jq is required (scripts/setup.sh --bench installs it)"

# MLERL is the binary to use; without it one is built from this checkout.
if [ -z "${MLERL:-}" ]; then
    MLERL=$(mktemp -d)/mlerl
    echo "building mlerl -> $MLERL" >&2
    (cd "$ROOT" && go build -o "$MLERL" ./cmd/mlerl) || die "go build ./cmd/mlerl failed"
fi
[ -x "$MLERL" ] || die "MLERL is not an executable: $MLERL"

# task_metric T prints T's metric and "higher" or "lower" (which is better),
# from mlerl's own task list, so the scripts never keep a metric table.
TASK_LIST=$("$MLERL" tasks list --json) || die "$MLERL tasks list failed"
task_metric() {
    jq -r --arg t "$1" '.[] | select(.name == $t) | "\(.metric) \(if .lower_is_better then "lower" else "higher" end)"' <<< "$TASK_LIST"
}
