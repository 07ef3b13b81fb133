/**
 * An index for the stream the README shows, `payments_stream(cursor: {initial_value: {posted_at:
 * …}})` (issue 34's streams; README "Subscriptions").
 *
 * Each batch of a stream is `WHERE account_id = … AND posted_at > $cursor ORDER BY posted_at FETCH
 * FIRST n ROWS WITH TIES`. Without an index on `posted_at` every batch read and sorted all of the
 * account's payments: the demo's 10,000 took 24 ms a batch, so a subscriber catching up from
 * January read 160 batches in 4 s — on the embedded database all on the service's one thread, which
 * answered nothing else meanwhile (a `/healthz` waited 3.9 s). With `(account_id, posted_at)` a
 * batch reads its own rows in order: the same catch-up took 0.5 s.
 *
 * On a running database: one `CREATE INDEX` (a SHARE lock: reads go on, payments wait for the build,
 * a few milliseconds per 10,000 payments). No row is touched.
 */
export const name = '0055_payments_stream_index';

export const sql = /* sql */ `
CREATE INDEX payments_posted_at ON payments (account_id, posted_at);
`;
