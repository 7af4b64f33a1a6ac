#!/usr/bin/env bash
# Checks that the repository stands alone and that its documentation holds together (run by .ci/run
# before the tests; `bash scripts/check-repo.sh`, no build needed):
#   1. nothing in Sources, Tests, scripts, Benchmarks, Fuzz, deploy or Examples reads a path outside
#      the repository (the test-data folder that used to sit beside it, machine paths, paths that
#      climb four or more directories);
#   2. every relative link in README.md, CONTRIBUTING.md, docs/**/*.md, deploy/README.md,
#      Benchmarks/**/README.md and Tests/**/README.md resolves to an existing file or folder (anchors
#      are not checked);
#   3. README.md has at most 200 lines, Benchmarks/README.md at most 250, Benchmarks/results/
#      holds at most 42 files (40, plus the counted check's result and one spare), and Benchmarks/
#      at most 4,500 lines of code: every line (blank and comment lines too) of the tracked files
#      outside results/, other than the Markdown, Package.resolved and the counted baseline;
#   4. the table of latest figures in Benchmarks/README.md is what scripts/bench-table.py makes
#      from the `table:` lines of Benchmarks/results/*.txt.
# Prints every problem found and exits 1 if there was any.
set -euo pipefail
cd "$(dirname "$0")/.."

problems=0
problem() {
    echo "check-repo: $*" >&2
    problems=$((problems + 1))
}

# 1. Paths outside the repository. The patterns are assembled from pieces so that this script does
# not match itself.
up='\.\./'
patterns=(
    "${up}sha""red"           # the old test-data folder beside the repository
    "sha""red/testdata"       # the same, however it is reached
    "/wo""rk/"                # the development machines' work folder
    "/Us""ers/"               # a macOS home folder
    "(${up}){4,}"             # climbing out of the repository from any file in it
)
scanned=(Sources Tests scripts Benchmarks Fuzz deploy Examples)
for pattern in "${patterns[@]}"; do
    if hits=$(grep -rInE --exclude-dir=.build --exclude-dir=.work --exclude-dir=__pycache__ "$pattern" "${scanned[@]}" 2>/dev/null); then
        while IFS= read -r hit; do
            problem "reads outside the repository (/$pattern/): ${hit:0:200}"
        done <<< "$hits"
    fi
done

# 2. Relative links in the documentation. Fenced code blocks and inline code are skipped.
docs=(README.md CONTRIBUTING.md deploy/README.md)
while IFS= read -r file; do docs+=("$file"); done < <(find docs -name '*.md' 2>/dev/null | sort)
while IFS= read -r file; do docs+=("$file"); done < <(find Benchmarks Tests -name README.md -not -path '*/.build/*' -not -path '*/.work/*' | sort)
for doc in "${docs[@]}"; do
    [ -f "$doc" ] || { problem "$doc is missing"; continue; }
    dir=$(dirname "$doc")
    while IFS=$'\t' read -r line target; do
        [ -n "$target" ] || continue
        case "$target" in
            http://* | https://* | mailto:* | \#*) continue ;;
        esac
        path="${target%%#*}"
        path="${path%% *}"
        [ -n "$path" ] || continue
        if [ ! -e "$dir/$path" ]; then
            problem "$doc:$line: link to $target does not resolve ($dir/$path)"
        fi
    done < <(awk '
        /^[[:space:]]*```/ { fenced = !fenced; next }
        fenced { next }
        {
            text = $0
            gsub(/`[^`]*`/, "", text)
            while (match(text, /\]\([^)]*\)/)) {
                print NR "\t" substr(text, RSTART + 2, RLENGTH - 3)
                text = substr(text, RSTART + RLENGTH)
            }
        }' "$doc")
done

# 3. Sizes.
limit_lines() {
    local file=$1 limit=$2 lines
    lines=$(wc -l < "$file")
    [ "$lines" -le "$limit" ] || problem "$file has $lines lines, more than $limit"
}
limit_lines README.md 200
limit_lines Benchmarks/README.md 250
results=$(find Benchmarks/results -type f | wc -l)
[ "$results" -le 42 ] || problem "Benchmarks/results holds $results files, more than 42 (keep the latest run of each scenario)"
bench_code=$(git ls-files Benchmarks | grep -vE '^Benchmarks/(results/|Package\.resolved$|counts-baseline\.tsv$)|\.md$' | while IFS= read -r f; do if [ -f "$f" ]; then cat "$f"; fi; done | wc -l)
[ "$bench_code" -le 4500 ] || problem "Benchmarks/ has $bench_code lines of code, more than 4,500 (merge or remove, do not cram)"

# 4. The benchmarks' table of latest figures.
python3 scripts/bench-table.py --check >/dev/null || problem "Benchmarks/README.md's table differs from results/: run python3 scripts/bench-table.py"

if [ "$problems" -gt 0 ]; then
    echo "check-repo: $problems problem(s)" >&2
    exit 1
fi
echo "check-repo: ok (no path outside the repository, ${#docs[@]} documents' links resolve, sizes within limits: Benchmarks/ $bench_code lines of code; the benchmarks' table matches results/)"
