#!/usr/bin/env bash
# Instructions per statement of the ledger's replays (issue 29; docs/ledger.md, "Migration 0034"):
# a single-user PostgreSQL 15 backend under `valgrind --tool=callgrind`, one dump per statement
# (`--dump-before=pgstat_report_activity`), so the machine's other load does not change the numbers
# (≈ 9 M instructions per ms of CPU on the 2-core bench machine). Not part of `npm run bench`.
#
#   bench/ledgerCallgrind.sh DIR [DATABASE]
#
# DIR: a cluster made by .ci/postgres.sh (stopped here, started again at the end) in which
# bench/ledger.ts has built its 30-year loan ("bench mortgage", 360 payments). Each statement runs
# three times; the 2nd and 3rd are the ones to read (the 1st plans). Writes in a transaction that
# is rolled back, so every run starts from the same ledger. Prints one line per statement.
set -euo pipefail
dir=${1:?cluster directory}
database=${2:-postgres}
# shellcheck source=../.ci/pg-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../.ci/pg-common.sh"
url="postgres://postgres@127.0.0.1:$(sed -n 's/^port = //p' "$dir/data/postgresql.conf" | tail -1)/$database"
read -r account loan < <(psql -X -At -F ' ' "$url" -c "SELECT account_id, id FROM loans WHERE name = 'bench mortgage' ORDER BY created_at DESC LIMIT 1")
psql -X -q "$url" -c 'VACUUM ANALYZE'
bash "$(dirname "${BASH_SOURCE[0]}")/../.ci/postgres.sh" stop "$dir"

a="'$account'::uuid"; l="'$loan'::uuid"
first="(SELECT id FROM payments WHERE account_id = $a AND loan_id = $l ORDER BY date, posted_at, id LIMIT 1)"
declare -a names statements
add() { names+=("$1"); statements+=("$2"); }
add 'nothing changed (loanql_refresh_next)' "SELECT loanql_refresh_next(ARRAY[$a], ARRAY[$l])"
add 'a payment posted after the last (0.50 on the last due date)' "INSERT INTO payments (account_id, loan_id, date, amount) SELECT $a, $l, max(s.due), 0.50 FROM schedules s WHERE s.account_id = $a AND s.loan_id = $l"
add 'full replay from scratch, nothing to write (loanql_replay_loans_in_full)' "SELECT loanql_replay_loans_in_full(ARRAY[$a], ARRAY[$l])"
add 'its computation alone (loanql_ledger)' "SELECT (loanql_ledger($a, $l, loanql_stored_as_of($a, $l))).payoff"
add 'one version of the loan (loanql_ledger_resume_version, 0034; absent before)' "SELECT loanql_ledger_resume_version($a, $l, s.state) IS NULL FROM ledger_resume_states s WHERE s.account_id = $a AND s.id = $l"
add 'first payment reversed (719 lines, 359 late fees written)' "UPDATE payments SET date_reversed = date, reversal_reason = 'error' WHERE account_id = $a AND id = $first"

input="$dir/callgrind.sql"
: >"$input"
for statement in "${statements[@]}"; do
  for _ in 1 2 3; do
    case "$statement" in
      SELECT*) echo "$statement" >>"$input" ;;
      *) printf 'BEGIN\n%s\nROLLBACK\n' "$statement" >>"$input" ;;
    esac
  done
done
rm -rf "$dir/callgrind" && mkdir -p "$dir/callgrind"
run_as "valgrind --tool=callgrind --dump-before=pgstat_report_activity --callgrind-out-file='$dir/callgrind/out' \
  '$PG_BIN/postgres' --single -D '$dir/data' -c jit=off '$database' <'$input' >'$dir/callgrind/stdout' 2>'$dir/callgrind/stderr'"

# The dumps in order (out.1, out.2, …), each the instructions since the one before: the first is
# the backend's start; then two per input line (pgstat_report_activity runs as a statement starts
# and as the backend goes idle after it), the statement's own cost in the second.
mapfile -t totals < <(for f in $(ls "$dir/callgrind" | grep -E '^out\.[0-9]+$' | sort -t. -k2 -n); do sed -n 's/^totals: \([0-9]*\).*/\1/p; s/^summary: \([0-9]*\).*/\1/p' "$dir/callgrind/$f" | head -1; done)
echo "dumps: ${#totals[@]}" >&2
i=1
for s in "${!statements[@]}"; do
  for run in 1 2 3; do
    case "${statements[$s]}" in SELECT*) lines=1 ;; *) lines=3 ;; esac
    best=0
    for ((j = 0; j < lines * 2; j++)); do
      v=${totals[$i]:-0}; i=$((i + 1))
      [ "$v" -gt "$best" ] && best=$v
    done
    printf '%s, run %d: %.1f M instructions\n' "${names[$s]}" "$run" "$(echo "$best / 1000000" | bc -l)"
  done
done
bash "$(dirname "${BASH_SOURCE[0]}")/../.ci/postgres.sh" resume "$dir"
