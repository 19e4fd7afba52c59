#!/usr/bin/env bash
# test_suite.sh PYTHON MARKERS [PYTEST-ARG...]: the test phase of `make test` (MARKERS "not slow_full") and
# `make test-full` (MARKERS "").
#
# On a fresh machine the quick model build is the critical path, and most tests need no built model. So the
# build of whatever is missing starts in the background first; lint, the Debian packages and then the tests
# that need no built model (every test not marked `slow`, and the `slow` ones marked `no_models`, e.g. the
# browser tests with fake backends) run beside it, the tests at a lower priority
# (nice) so the build gets the CPU first. As soon as the build has finished, the `slow` tests (real offline
# models, real browser) start, while the rest of the others go on beside them; on a machine with the models
# built both start at once. Each pytest run gets its own throw-away PostgreSQL server (scripts/with_postgres.sh).
# Each phase's time goes to out/phases.tsv; the phases overlap, so the table ends with the wall time, not a sum.
set -uo pipefail

python="$1"
markers="$2"
shift 2
cd "$(dirname "$0")/.."
mkdir -p out
started="$(cat out/started 2>/dev/null || date +%s)"  # make's phases-reset notes the start (before pip)
both() {  # both EXPR: EXPR and the MARKERS given (none for make test-full)
    if [ -n "$markers" ]; then echo "($1) and ($markers)"; else echo "$1"; fi
}

# OpenMP threads sleep instead of spinning between parallel regions (the CLI and app.py set the same default):
# on 2 shared cores spinning burns the CPU the build and the other pytest run need; results are unchanged
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"

echo "building missing quick-profile models in the background (log: out/build.log)"
scripts/timed.sh models "$python" -m alict_core build missing --profile quick > out/build.log 2>&1 &
build=$!
unbuilt=""
stop_jobs() { kill $build $unbuilt 2>/dev/null; wait $build $unbuilt 2>/dev/null; }
trap 'stop_jobs; exit 130' INT TERM
TESTS_NICE=5  # the tests beside the build yield to it (and to the slow tests), not so much that a timed check starves

code=0
scripts/timed.sh ruff "$python" -m ruff check . || code=1
[ "$code" -eq 0 ] && { scripts/timed.sh mypy "$python" -m mypy || code=1; }
if [ "$code" -ne 0 ]; then
    stop_jobs
    echo "lint failed: no tests run" >&2
    exit 1
fi
"${MAKE:-make}" --no-print-directory system-deps PYTHON="$python"

run_pytest() {  # run_pytest NICENESS PHASE EXPR ARGS...: 0 when it passes or selects no test (exit 5)
    local niceness="$1" phase="$2" expr="$3"
    shift 3
    nice -n "$niceness" scripts/timed.sh "$phase" scripts/with_postgres.sh \
        "$python" -m pytest -q --durations=15 -m "$(both "$expr")" "$@"
    local rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]
}

echo "tests that need no built model: running beside the build (niced; log: out/pytest-unbuilt.log, shown at the end)"
run_pytest "$TESTS_NICE" pytest-unbuilt "not slow or no_models" "$@" > out/pytest-unbuilt.log 2>&1 &
unbuilt=$!

wait "$build"
built=$?
tail -n 3 out/build.log
if [ "$built" -ne 0 ]; then
    echo "the quick model build failed (exit $built): see out/build.log; the slow tests need its models" >&2
    code=1
else
    run_pytest 0 pytest-slow "slow and not no_models" "$@" || code=1
fi
wait "$unbuilt" || code=1
echo "== the tests that need no built model (out/pytest-unbuilt.log):"
cat out/pytest-unbuilt.log

echo "test phase times (models ran beside ruff, mypy, system-deps and pytest-unbuilt; pytest-slow beside the rest of pytest-unbuilt):"
awk -F'\t' '{printf "  %-15s %5d s\n", $1, $2}' out/phases.tsv
echo "  wall            $(( $(date +%s) - started )) s"
exit "$code"
