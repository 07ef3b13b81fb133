#!/usr/bin/env bash
# Instructions an execution of the engine's statement for each query given, for two builds
# (bench/README.md, "q1's statement"): a single-user PostgreSQL 15 backend of a cluster made by
# .ci/postgres.sh under `valgrind --tool=callgrind` — counts, so the machine's other load does not
# change them. Each side's statement is PREPAREd, then EXECUTEd 10 and 40 times (cycling through
# the variable sets printStatements.ts printed); instructions an execution = (total at 40 − total
# at 10) / 30, so the backend's start and the first (custom) plans cancel out. The server of DIR is
# stopped while this runs and started again at the end. Not part of `npm run bench`.
#
#   DATABASE_URL=… node --import tsx bench/printStatements.ts --account ID --sets 5 > before.json   (in one checkout)
#   DATABASE_URL=… node --import tsx bench/printStatements.ts --account ID --sets 5 > after.json    (in the other)
#   bench/statementCallgrind.sh DIR before.json after.json q1 q2 …
set -euo pipefail
dir=${1:?cluster directory}
before=$(realpath "${2:?before.json}")
after=$(realpath "${3:?after.json}")
shift 3
# shellcheck source=../.ci/pg-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../.ci/pg-common.sh"
work=$(mktemp -d)
chmod 777 "$work"  # the server user (run_as) writes its outputs here
bash "$(dirname "${BASH_SOURCE[0]}")/../.ci/postgres.sh" stop "$dir" >/dev/null
for q in "$@"; do
  for side in before after; do
    statements=$before
    [ "$side" = after ] && statements=$after
    for n in 10 40; do
      input="$work/$q-$side-$n.sql"
      node -e '
        const [file, q, n, out] = process.argv.slice(1);
        const sets = JSON.parse(require("fs").readFileSync(file, "utf8"))[q];
        if (!sets) throw new Error(`no statement for ${q} in ${file}`);
        const literal = (v) => (v === null ? "NULL" : typeof v === "number" || typeof v === "boolean" ? String(v) : `'"'"'${(typeof v === "string" ? v : JSON.stringify(v)).replace(/'"'"'/g, "'"''"'")}'"'"'`);
        let text = `PREPARE v AS ${sets[0].text.replace(/\s+/g, " ")}\n`;
        for (let i = 0; i < Number(n); i++) text += `EXECUTE v(${sets[i % sets.length].values.map(literal).join(", ")})\n`;
        require("fs").writeFileSync(out, text);
      ' "$statements" "$q" "$n" "$input"
      chmod 644 "$input"
      # Once without valgrind first: the rows' hint bits and the like are then set by this run, not
      # by the first measured one (seen: the first side measured 2 % dearer than when measured again).
      [ "$n" = 10 ] && run_as "'$PG_BIN/postgres' --single -D '$dir/data' -c jit=off postgres <'$input' >/dev/null 2>&1"
      run_as "valgrind --tool=callgrind --callgrind-out-file='$work/$q-$side-$n.out' '$PG_BIN/postgres' --single -D '$dir/data' -c jit=off postgres <'$input' >'$work/$q-$side-$n.stdout' 2>'$work/$q-$side-$n.stderr'"
      echo "$q $side $n $(sed -n 's/^totals: \([0-9]*\).*/\1/p; s/^summary: \([0-9]*\).*/\1/p' "$work/$q-$side-$n.out" | head -1)"
    done
  done
done | awk '{ t[$1 " " $2 " " $3] = $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
  END { for (i = 1; i <= n; i++) { q = order[i]; b = (t[q " before 40"] - t[q " before 10"]) / 30; a = (t[q " after 40"] - t[q " after 10"]) / 30;
        printf "%-5s before %.1f k, after %.1f k instructions an execution (%+.1f %%)\n", q, b / 1000, a / 1000, 100 * (a / b - 1) } }'
bash "$(dirname "${BASH_SOURCE[0]}")/../.ci/postgres.sh" resume "$dir" >/dev/null
rm -rf "$work"
