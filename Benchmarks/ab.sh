#!/usr/bin/env bash
# A/B of harness scenarios against an earlier commit, runs interleaved on one machine:
#   bash Benchmarks/ab.sh REV [ROUNDS] [SCENARIO...]      e.g. bash Benchmarks/ab.sh c54c6c1 6 1 2
# Builds this tree's harness and REV's (a worktree under Benchmarks/.work/ab-REV, with REV's own
# harness sources) in release mode, then runs ROUNDS rounds (default 6) of each scenario (default 1
# and 2), A then B in odd rounds and B then A in even ones, BENCH_REPS (default 3) each. Prints, per
# figure both sides report, the median over rounds of each side's median and of the per-round ratio
# B/A (B: this tree; for times a ratio below 1 is faster). JSON per run in Benchmarks/.work/ab-out.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REV="${1:?usage: ab.sh REV [ROUNDS] [SCENARIO...]}"
ROUNDS="${2:-6}"
shift $(($# >= 2 ? 2 : 1))
SCENARIOS=("${@:-1 2}")
WORK="$ROOT/Benchmarks/.work"
BASE="${AB_BASE_DIR:-$WORK/ab-$REV}"  # AB_BASE_DIR: an existing checkout of REV
OUT="$WORK/ab-out"
mkdir -p "$WORK" "$OUT"
rm -f "$OUT"/*.json
if [ ! -d "$BASE" ]; then
    git -C "$ROOT" worktree add --detach "$BASE" "$REV" >/dev/null
    [ -f "$ROOT/Package.resolved" ] && cp "$ROOT/Package.resolved" "$BASE/"
fi
echo "ab.sh: building B (this tree) and A ($REV)"
(cd "$ROOT/Benchmarks" && swift build -c release --product OspreyBench >/dev/null)
(cd "$BASE/Benchmarks" && swift build -c release --product OspreyBench >/dev/null)
A="$BASE/Benchmarks/.build/release/OspreyBench"
B="$ROOT/Benchmarks/.build/release/OspreyBench"
TMP="$(mktemp -d /var/tmp/osprey-ab.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
run() { # side binary scenario round
    VIPS_CONCURRENCY=1 BENCH_REPS="${BENCH_REPS:-3}" OSPREY_BENCH_TMP="$TMP" BENCH_JSON="$OUT/$1-s$3-r$4.json" \
        OSPREY_TESTDATA="${OSPREY_TESTDATA:-$ROOT/Tests/Fixtures/images}" "$2" "$3" >/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
    for s in ${SCENARIOS[@]}; do
        if [ $((round % 2)) -eq 1 ]; then run A "$A" "$s" "$round"; run B "$B" "$s" "$round"
        else run B "$B" "$s" "$round"; run A "$A" "$s" "$round"; fi
    done
    echo "ab.sh: round $round of $ROUNDS done"
done
python3 - "$OUT" "$REV" <<'EOF'
import json, sys, glob, os, statistics as st, collections
out, rev = sys.argv[1], sys.argv[2]
runs = collections.defaultdict(dict)  # (scenario, round) -> side -> {name: median}
for path in glob.glob(os.path.join(out, "*.json")):
    side, s, r = os.path.basename(path)[:-5].split("-")
    figures = json.load(open(path))["figures"]
    runs[(s, r)][side] = {(f["name"], f.get("baseline")): (f["median"], f["unit"]) for f in figures}
names = collections.defaultdict(lambda: ([], [], [], ""))
for (s, r), sides in sorted(runs.items()):
    if set(sides) != {"A", "B"}: continue
    for key, (b, unit) in sides["B"].items():
        if key not in sides["A"]: continue
        a = sides["A"][key][0]
        entry = names[(s, key)]
        entry[0].append(a); entry[1].append(b); entry[2].append(b / a if a else float("nan"))
        names[(s, key)] = (entry[0], entry[1], entry[2], unit)
print(f"| scenario | figure | A ({rev}) median | B (this tree) median | unit | B/A median [min..max] | rounds |")
print("|---|---|---|---|---|---|---|")
for (s, (name, baseline)), (a, b, ratio, unit) in sorted(names.items(), key=lambda i: (i[0][0], i[0][1][0], i[0][1][1] or "")):
    print(f"| {s[1:]} | {name} | {st.median(a):.4g} | {st.median(b):.4g} | {unit} | {st.median(ratio):.3f} [{min(ratio):.3f}..{max(ratio):.3f}] | {len(ratio)} |")
EOF
