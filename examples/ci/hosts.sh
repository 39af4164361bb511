#!/usr/bin/env bash
# Certify an implementation of Tern 0.1 on a set of hosts: one shard per
# host, then the merge here (docs/scale.md).
#
# Usage: hosts.sh HOST...
#
# N is the number of hosts; the Kth host plays shard K/N. Each host needs
# ssh access without a password prompt, on its PATH the version of tern-sim
# that runs here, and the implementation in TERN_SIM_DIR. Settings, from
# the environment:
#
#   TERN_SIM_DIR    the folder on each host to run in (default: tern-sim-work,
#                   relative to the remote home)
#   TERN_SIM_IMPL   the command that starts the implementation there
#                   (default: python3 agent.py)
#   TERN_SIM_SEEDS  the simulation runs of the whole certification
#                   (default: 8000)
#
# The reports go to tern-sim-report/ here; the exit status is the merge's:
# 0 certified, 1 not certified, 2 the parts could not be merged or a
# shard did not write its part.
set -euo pipefail

if [ "$#" -eq 0 ]; then
    echo "usage: $0 HOST..." >&2
    exit 2
fi

hosts=("$@")
n=${#hosts[@]}
dir=${TERN_SIM_DIR:-tern-sim-work}
impl=${TERN_SIM_IMPL:-python3 agent.py}
seeds=${TERN_SIM_SEEDS:-8000}

# A fresh local folder for the parts and the logs, so that no part of an
# earlier run is merged by mistake.
parts=$(mktemp -d tern-sim-parts.XXXXXX)
logs="$parts/logs"
mkdir "$logs"

# Start every shard in the background. Each writes into its own folder,
# so two hosts that share a home folder do not overwrite each other.
pids=()
for k in $(seq 1 "$n"); do
    host=${hosts[$((k - 1))]}
    printf -v remote 'cd %q && tern-sim certify --impl %q --seeds %q --shard %q --part-dir %q' \
        "$dir" "$impl" "$seeds" "$k/$n" "tern-sim-parts-$k"
    ssh -n -o BatchMode=yes "$host" "$remote" >"$logs/shard-$k.log" 2>&1 &
    pids+=("$!")
    echo "shard $k/$n on $host (log: $logs/shard-$k.log)"
done

# Wait for each shard. Its exit status is 0 once its part is written,
# whatever its share found; anything else means there is no part to merge.
failed=0
for k in $(seq 1 "$n"); do
    if ! wait "${pids[$((k - 1))]}"; then
        echo "shard $k/$n on ${hosts[$((k - 1))]} failed; see $logs/shard-$k.log" >&2
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    exit 2
fi

# Fetch the parts: certify-K-of-N.json from each host's own folder.
for k in $(seq 1 "$n"); do
    host=${hosts[$((k - 1))]}
    scp -q -o BatchMode=yes "$host:$dir/tern-sim-parts-$k/certify-$k-of-$n.json" "$parts/"
done

# The verdict: the four reports of the unsharded certification, and its
# exit status.
tern-sim merge "$parts" --report-dir tern-sim-report
