#!/usr/bin/env bash
# A/B of harness scenarios against an earlier commit, runs interleaved on one machine:
#   bash Benchmarks/ab.sh REV [ROUNDS] [SCENARIO...]      e.g. bash Benchmarks/ab.sh c54c6c1 6 1 2
# Builds this tree's harness and REV's (a worktree under Benchmarks/.work/ab-REV, with REV's own
# harness sources) in release mode, then runs ROUNDS rounds (default 6) of each scenario (default 1
# and 2), A then B in odd rounds and B then A in even ones, BENCH_REPS (default 3) each. Prints, per
# figure both sides report, the median over rounds of each side's median and of the per-round ratio
# B/A (B: this tree; for times a ratio below 1 is faster), with a bootstrap interval of that median.
# JSON per run in Benchmarks/.work/ab-out (AB_OUT: elsewhere).
# AB_B=PATH runs that binary as B instead of this tree's (nothing built for B): AB_B set to a copy
# of A's binary is an A/A run, this machine's noise floor for the same rows (measure it in the same
# session as the A/B it qualifies; the interval alone understates run-to-run drift).
# Scenario 2's env settings pass through: S2_ROWS=group,callback,downloader S2_REQUESTS=5000 ...
# AB_A=PATH runs that binary as A (nothing built for A; REV only labels the table): two builds already made.
# AB_HARNESS="FILE..." copies those harness files (paths from the repository root) from this tree into REV's
# worktree before building A: for a REV whose own harness took a shortcut B no longer has (b037b19's loader and
# decoder used benchmark hooks that skip two thread hand-offs per miss), e.g.
#   AB_HARNESS="Benchmarks/Sources/OspreyBench/Common.swift Benchmarks/Sources/OspreyBench/Scenario1to3.swift"
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REV="${1:?usage: ab.sh REV [ROUNDS] [SCENARIO...]}"
ROUNDS="${2:-6}"
shift $(($# >= 2 ? 2 : 1))
SCENARIOS=("${@:-1 2}")
WORK="$ROOT/Benchmarks/.work"
BASE="${AB_BASE_DIR:-$WORK/ab-$REV}"  # AB_BASE_DIR: an existing checkout of REV
OUT="${AB_OUT:-$WORK/ab-out}"
mkdir -p "$WORK" "$OUT"
rm -f "$OUT"/*.json
if [ -z "${AB_A:-}" ] && [ ! -d "$BASE" ]; then
    git -C "$ROOT" worktree add --detach "$BASE" "$REV" >/dev/null
    [ -f "$ROOT/Package.resolved" ] && cp "$ROOT/Package.resolved" "$BASE/"
fi
[ -n "${AB_A:-}" ] || for file in ${AB_HARNESS:-}; do cp "$ROOT/$file" "$BASE/$file"; done
echo "ab.sh: building B (this tree) and A ($REV)"
[ -n "${AB_B:-}" ] || (cd "$ROOT/Benchmarks" && swift build -c release --product OspreyBench >/dev/null)
[ -n "${AB_A:-}" ] || (cd "$BASE/Benchmarks" && swift build -c release --product OspreyBench >/dev/null)
A="${AB_A:-$BASE/Benchmarks/.build/release/OspreyBench}"
B="${AB_B:-$ROOT/Benchmarks/.build/release/OspreyBench}"
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
import json, sys, glob, os, statistics as st, collections, random
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
def interval(ratios):  # 95% bootstrap interval of the median ratio
    rng = random.Random(1)
    boots = sorted(st.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]
print(f"| scenario | figure | A ({rev}) median | B median | unit | B/A median [min..max] | 95% interval | rounds |")
print("|---|---|---|---|---|---|---|---|")
for (s, (name, baseline)), (a, b, ratio, unit) in sorted(names.items(), key=lambda i: (i[0][0], i[0][1][0], i[0][1][1] or "")):
    lo, hi = interval(ratio)
    print(f"| {s[1:]} | {name} | {st.median(a):.4g} | {st.median(b):.4g} | {unit} | {st.median(ratio):.3f} [{min(ratio):.3f}..{max(ratio):.3f}] | {lo:.3f}..{hi:.3f} | {len(ratio)} |")
EOF
