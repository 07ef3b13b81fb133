#!/usr/bin/env bash
# The daily fee job on a seeded portfolio (issue 31), before and after a change:
#   bench/feeJobSeeded.sh SERVER_URL TEMPLATE_DB ACCOUNT SEEDED_ON BUILD_DIR [BUILD_DIR ...]
# SERVER_URL: a PostgreSQL server (postgres://user@host:port); TEMPLATE_DB: a database seeded with
# `loanql seed --account ACCOUNT --today SEEDED_ON` (its ledgers are as of SEEDED_ON; it must
# have no connections); each BUILD_DIR a built checkout (`npm run build`). For each build and
# each span (1 day, then a 30-day catch-up): a copy of the template (CREATE DATABASE … TEMPLATE),
# VACUUM ANALYZE, the business date SEEDED_ON + span for every connection to it (ALTER DATABASE …
# SET loanql.business_date), the build's migrations, then `loanql fees assess --account ACCOUNT`
# timed (wall clock, the CLI's start included), then a digest of every stored value the job
# writes (loans' balances, status, as-of day, days past due, bucket, arrears date; fees; schedule
# rows' paid amounts and is_next; allocation lines): equal digests for two builds mean the same
# ledgers. Copies are dropped after. Prints one line per run.
set -euo pipefail
server=${1:?server url}; template=${2:?template database}; account=${3:?account slug}; seeded_on=${4:?YYYY-MM-DD}
shift 4
for build in "$@"; do
  for span in 1 30; do
    copy="feejob_bench_${span}_$$"
    day=$(date -u -d "$seeded_on + $span days" +%F)
    psql -q "$server/postgres" -c "CREATE DATABASE $copy TEMPLATE $template"
    psql -q "$server/$copy" -c "VACUUM ANALYZE" -c "ALTER DATABASE $copy SET loanql.business_date = '$day'"
    DATABASE_URL="$server/$copy" node "$build/dist/cli/main.js" migrate >/dev/null
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    started=$(date +%s.%N)
    out=$(DATABASE_URL="$server/$copy" node "$build/dist/cli/main.js" fees assess --account "$account")
    ended=$(date +%s.%N)
    digest=$(psql -At "$server/$copy" -c "
      SELECT concat_ws(' ',
        (SELECT md5(string_agg(concat_ws('|', id, principal_outstanding, interest_due, fees_due, credit_balance, oldest_unpaid_due, status, date_closed,
                                          ledger_as_of, days_past_due, delinquency_bucket, arrears_since), ',' ORDER BY id)) FROM loans),
        (SELECT md5(string_agg(concat_ws('|', id, loan_id, kind, row_number, date, amount, paid, waived, waived_on), ',' ORDER BY id)) FROM fees),
        (SELECT sum(('x' || substr(md5(concat_ws('|', loan_id, number, interest, principal, interest_paid, principal_paid, is_next)), 1, 15))::bit(60)::bigint) FROM schedules),
        (SELECT sum(('x' || substr(md5(concat_ws('|', loan_id, position, payment_id, row_number, fee_id, component, amount)), 1, 15))::bit(60)::bigint) FROM payment_allocations))")
    printf '%s | %s day(s) | %.1f s | load %s | %s | digest %s\n' "$(git -C "$build" log --oneline -1 | cut -c1-60)" "$span" "$(echo "$ended - $started" | bc)" "$load" "$out" "$digest"
    psql -q "$server/postgres" -c "DROP DATABASE $copy"
  done
done
