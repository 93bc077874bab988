#!/usr/bin/env bash
# Runs every fuzz target of the module, one after another (the fuzzer
# already uses every core), for FUZZTIME each (2m unless set), prints a
# line per target, and exits non-zero when any target failed. The input
# that broke a target is left in its package's testdata/fuzz/<target>/:
# commit it, and it runs as a seed in every go test from then on.
#
#   FUZZTIME=30s test/tools/fuzz.sh
#   FUZZ_FLAGS='-parallel 1' test/tools/fuzz.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
fuzztime="${FUZZTIME:-2m}"
read -r -a flags <<<"${FUZZ_FLAGS:-}"

# Targets are read from the test sources rather than listed with
# go test -list, which would run each package's TestMain, and the
# controllers package's starts an API server.
targets=()
while read -r dir pkg; do
	[[ -n "$dir" ]] || continue
	while read -r name; do
		targets+=("$pkg $name ${dir#"$PWD"/}")
	done < <(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' "$dir"/*_test.go | sort -u)
done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}} {{.ImportPath}}{{end}}' ./...)

if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz target found" >&2
	exit 1
fi

logs="$(mktemp -d)"
failed=0
for target in "${targets[@]}"; do
	read -r pkg name dir <<<"$target"
	log="$logs/${pkg//\//_}.$name.log"
	start=$SECONDS
	if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "${flags[@]}" >"$log" 2>&1; then
		execs="$(grep -oE 'execs: [0-9]+' "$log" | tail -n 1 || true)"
		printf 'ok    %-24s %-60s %4ds %s\n' "$name" "$pkg" $((SECONDS - start)) "$execs"
	else
		failed=1
		printf 'FAIL  %-24s %-60s %4ds\n' "$name" "$pkg" $((SECONDS - start))
		# The failure and the input the fuzzer wrote or, when the log has
		# neither (a build error, say), all of it.
		grep -E 'Failing input written to|--- FAIL|_test\.go:[0-9]+:|^panic:' "$log" |
			sed -e "s|written to testdata/|written to $dir/testdata/|" -e 's/^/      /' ||
			sed 's/^/      /' "$log"
		echo "      full log: $log"
	fi
done
exit "$failed"
