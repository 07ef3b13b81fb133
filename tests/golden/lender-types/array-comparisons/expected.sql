SELECT
  concat(
    '{"data":',
    concat(
      '{"contains":',
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
                    ',"tags":',
                    coalesce(to_json("_t1"."tags"), 'null'),
                    ',"scores":',
                    coalesce(to_json("_t1"."scores"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND ("_t1"."tags" @> $2::text[])
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"containedIn":',
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
                    ',"scores":',
                    coalesce(to_json("_t3"."scores"), 'null'),
                    '}'
                  ) AS "j",
                  "_t3"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t3"
                WHERE
                  "_t3"."account_id" = $1
                  AND ("_t3"."scores" <@ $3::integer[])
              ) AS "_r4"
            ORDER BY
              "_r4"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"whole":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r6"."j"
            FROM
              (
                SELECT
                  concat('{"id":', to_json("_t5"."id"), '}') AS "j",
                  "_t5"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t5"
                WHERE
                  "_t5"."account_id" = $1
                  AND (
                    ("_t5"."scores" = $4::integer[])
                    OR ("_t5"."tags" > $5::text[])
                  )
              ) AS "_r6"
            ORDER BY
              "_r6"."k0" ASC NULLS LAST
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
              "_r8"."j"
            FROM
              (
                SELECT
                  concat('{"id":', to_json("_t7"."id"), '}') AS "j",
                  "_t7"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t7"
                WHERE
                  "_t7"."account_id" = $1
                  AND (
                    "_t7"."scores" = $6::integer[]
                    OR "_t7"."scores" = $7::integer[]
                  )
              ) AS "_r8"
            ORDER BY
              "_r8"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"nin":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r10"."j"
            FROM
              (
                SELECT
                  concat('{"id":', to_json("_t9"."id"), '}') AS "j",
                  "_t9"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t9"
                WHERE
                  "_t9"."account_id" = $1
                  AND (
                    "_t9"."scores" <> $8::integer[]
                    AND (
                      "_t9"."scores" IS NOT NULL
                      OR NULL
                    )
                  )
              ) AS "_r10"
            ORDER BY
              "_r10"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
