#!/usr/bin/env bash
# timed.sh PHASE COMMAND...: run COMMAND, print how long it took, append "PHASE<TAB>seconds" to out/phases.tsv.
# `make test` prints the table at its end, so a slow fresh-machine run shows where the time went.
set -uo pipefail
phase="$1"
shift
started="$(date +%s)"
"$@"
code=$?
seconds=$(( $(date +%s) - started ))
mkdir -p out
printf '%s\t%s\t%s\n' "$phase" "$seconds" "$code" >> out/phases.tsv
echo "phase $phase: ${seconds} s (exit $code)"
exit "$code"
