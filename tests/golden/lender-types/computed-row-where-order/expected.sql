SELECT
  concat(
    '{"data":',
    concat(
      '{"notes":',
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
                    ',"title":',
                    to_json("_t1"."title"),
                    ',"tag_count":',
                    coalesce(
                      to_json(
                        "lender_types"."note_tag_count" ("_t1"."account_id", "_t1"."id")
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "lender_types"."note_tag_count" ("_t1"."account_id", "_t1"."id") AS "k0",
                  "_t1"."title" AS "k1",
                  "_t1"."id" AS "k2"
                FROM
                  "lender_types"."notes" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND (
                    "lender_types"."note_tag_count" ("_t1"."account_id", "_t1"."id") >= $2::bigint
                  )
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS FIRST,
              "_r2"."k1" ASC NULLS LAST,
              "_r2"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"notes_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat('{"count":', to_json(count(*)), '}'),
            '}'
          )
        FROM
          (
            SELECT
              1 AS "one"
            FROM
              "lender_types"."notes" AS "_t3"
            WHERE
              "_t3"."account_id" = $1
              AND (
                "lender_types"."note_tag_count" ("_t3"."account_id", "_t3"."id") = ANY ($3::bigint[])
              )
          ) AS "_r4"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
