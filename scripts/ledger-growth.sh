#!/bin/sh
# How `tern-sim check --stateful` grows with the history a ledger holds:
# CPU time for each adversarial shape at 2k, 4k, 8k and 16k messages, and
# peak memory over realistic, rejected and duplicate streams.
#
#   scripts/ledger-growth.sh [TERN_SIM] [OUT_DIR]
#
# TERN_SIM defaults to target/release/tern-sim; streams are written by
# `cargo run --release --example ledger_streams` into OUT_DIR (a temporary
# folder by default). Each run is cut off after 120 s. Needs GNU time
# (/usr/bin/time) for the memory figures.
set -eu
cd "$(dirname "$0")/.."
bin=${1:-target/release/tern-sim}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
cargo build --release --quiet --example ledger_streams
gen=target/release/examples/ledger_streams
# CPU seconds (user + system) rather than wall time, so that the figures
# mean something on a shared machine.
printf '%-15s %8s %8s %8s %8s   (CPU seconds)\n' shape 2000 4000 8000 16000
for shape in chain chain-reversed competing conflicts conflicts-one cascade fan-in; do
    printf '%-15s' "$shape"
    for n in 2000 4000 8000 16000; do
        f="$out/$shape-$n.jsonl"
        "$gen" "$shape" "$n" >"$f"
        t=$({ /usr/bin/time -f '%U %S' timeout 120 "$bin" check --stateful "$f" >/dev/null; } 2>&1 | tail -n 1)
        printf ' %8.2f' "$(echo "$t" | awk '{print $1 + $2}')"
    done
    printf '\n'
done
for spec in "realistic 10000" "garbage 100000" "duplicates 100000"; do
    set -- $spec
    f="$out/$1-$2.jsonl"
    "$gen" "$1" "$2" >"$f"
    kb=$(/usr/bin/time -f '%M' "$bin" check --stateful "$f" 2>&1 >/dev/null | tail -n 1)
    printf '%-11s %7s lines: peak RSS %6s KB\n' "$1" "$2" "$kb"
done
