/**
 * The aging buckets of SPEC §12 R3 as the database knows them. 0012 gave every product its
 * `delinquency_buckets` (a JSON list of `{"name", "from"}`, `from` the first day past due of the
 * bucket: `current` 0, `1-29` 1, `30-59` 30, `60-89` 60, `90-119` 90, `120+` 120) without a rule
 * on its shape; this adds the rule and the function that names a loan's bucket.
 *
 * - `loanql_delinquency_buckets_valid(buckets)`: 1 to 12 objects, each exactly a non-blank
 *   `name` (at most 40 characters, names distinct) and a whole-number `from` (0 to 3,650), the
 *   first `from` 0 and each greater than the one before. A CHECK on `products` holds it for every
 *   writer; the product settings' own validation (app/) names the problem to the user first.
 * - `loanql_delinquency_bucket(buckets, days_past_due)`: the name of the last bucket whose `from`
 *   is at most the days past due (a negative count is 0).
 */
export const name = '0014_servicing_settings';

export const sql = /* sql */ `
CREATE FUNCTION loanql_delinquency_buckets_valid(buckets jsonb) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  bucket jsonb;
  previous integer := -1;
  names text[] := '{}';
BEGIN
  IF buckets IS NULL OR jsonb_typeof(buckets) <> 'array' THEN RETURN false; END IF;
  IF jsonb_array_length(buckets) NOT BETWEEN 1 AND 12 THEN RETURN false; END IF;
  FOR bucket IN SELECT value FROM jsonb_array_elements(buckets) LOOP
    IF jsonb_typeof(bucket) <> 'object' THEN RETURN false; END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(bucket)) <> 2 THEN RETURN false; END IF;
    IF jsonb_typeof(bucket->'name') IS DISTINCT FROM 'string' OR jsonb_typeof(bucket->'from') IS DISTINCT FROM 'number' THEN RETURN false; END IF;
    IF (bucket->>'from') !~ '^[0-9]{1,4}$' THEN RETURN false; END IF;
    IF (bucket->>'from')::integer > 3650 OR (bucket->>'from')::integer <= previous THEN RETURN false; END IF;
    IF previous = -1 AND (bucket->>'from')::integer <> 0 THEN RETURN false; END IF;
    IF btrim(bucket->>'name') = '' OR length(bucket->>'name') > 40 OR (bucket->>'name') = ANY (names) THEN RETURN false; END IF;
    previous := (bucket->>'from')::integer;
    names := names || (bucket->>'name');
  END LOOP;
  RETURN true;
END
$$;

CREATE FUNCTION loanql_delinquency_bucket(buckets jsonb, days_past_due integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT b.value->>'name' FROM jsonb_array_elements(buckets) WITH ORDINALITY AS b(value, position)
   WHERE (b.value->>'from')::integer <= greatest(days_past_due, 0)
   ORDER BY b.position DESC LIMIT 1
$$;

ALTER TABLE products ADD CONSTRAINT products_delinquency_buckets CHECK (loanql_delinquency_buckets_valid(delinquency_buckets));
`;
