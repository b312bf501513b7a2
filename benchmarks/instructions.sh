#!/usr/bin/env bash
# Instructions per game inside the engine's batch call, counted by callgrind: unlike seconds, the
# same for the same build and games whatever else the machine is doing, so a change to the engine
# or a bot can be judged on a loaded machine. Run from the repository root, after building in place.
#   benchmarks/instructions.sh [GAMES=300] [STRATEGY=greedy]
# For per-source-line annotations, build with PROTOLAB_DEBUG_INFO=1 and run callgrind_annotate
# --auto=yes on the profile this prints.
set -euo pipefail
games=${1:-300}
strategy=${2:-greedy}
out=$(mktemp /tmp/callgrind.XXXXXX)
valgrind --tool=callgrind --callgrind-out-file="$out" \
  --toggle-collect='__pyx_pf_3sim_6engine_5_core_play_batch*' \
  python -c "
import sys
from sim.batch import play_columns
from sim.pool import DEFAULT_SETS, load_pool
from strategies.seats import make_seats
pool = load_pool(sets=DEFAULT_SETS)
play_columns(pool, range(1, $games + 1), make_seats(pool, ('$strategy', '$strategy')).configs)
" >/dev/null 2>"$out.log"
total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
echo "$strategy: $((total / games)) instructions per game ($games games; profile: $out)"
