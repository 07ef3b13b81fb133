SELECT
  concat(
    '{"data":',
    concat(
      '{"eq":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r2"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"id":',
                    to_json("_t1"."id"),
                    ',"body":',
                    coalesce(to_json("_t1"."body"), 'null'),
                    ',"first":',
                    coalesce(to_json(("_t1"."body" #> $1::text[])), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t1"
                WHERE
                  "_t1"."account_id" = $2
                  AND (("_t1"."body")::jsonb = $3::jsonb)
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"in":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r4"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"id":',
                    to_json("_t3"."id"),
                    ',"body":',
                    coalesce(to_json("_t3"."body"), 'null'),
                    '}'
                  ) AS "j",
                  "_t3"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t3"
                WHERE
                  "_t3"."account_id" = $2
                  AND (("_t3"."body")::jsonb = ANY ($4::jsonb[]))
              ) AS "_r4"
            ORDER BY
              "_r4"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"null":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r6"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"id":',
                    to_json("_t5"."id"),
                    ',"title":',
                    to_json("_t5"."title"),
                    '}'
                  ) AS "j",
                  "_t5"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t5"
                WHERE
                  "_t5"."account_id" = $2
                  AND ("_t5"."body" IS NULL)
              ) AS "_r6"
            ORDER BY
              "_r6"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
