SELECT
  concat(
    '{"data":',
    concat(
      '{"loans":',
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
                    '{"name":',
                    to_json("_t1"."name"),
                    ',"frequency":',
                    coalesce(to_json("_t1"."frequency"), 'null'),
                    ',"status":',
                    to_json("_t1"."status"),
                    ',"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    ',"rate":',
                    coalesce(to_json("_t1"."rate"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "loans" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND (
                    (
                      ("_t1"."frequency" = ANY ($2::text[]))
                      OR (
                        ("_t1"."status" = 'lead'::text)
                        AND ("_t1"."amount" >= $3::numeric)
                      )
                    )
                    AND (NOT ("_t1"."name" ILIKE $4::text))
                    AND ("_t1"."rate" < $5::numeric)
                    AND ("_t1"."rate" > $6::numeric)
                  )
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"people":',
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
                    '{"name":',
                    to_json("_t3"."name"),
                    ',"email":',
                    coalesce(to_json("_t3"."email"), 'null'),
                    '}'
                  ) AS "j",
                  "_t3"."id" AS "k0"
                FROM
                  (
                    SELECT
                      "_t3"."name",
                      "_t3"."email",
                      "_t3"."id"
                    FROM
                      "people" AS "_t3"
                    WHERE
                      "_t3"."account_id" = $1
                      AND (
                        ("_t3"."email" NOT LIKE $7::text)
                        AND ("_t3"."name" LIKE $8::text)
                        AND ("_t3"."phone" IS NOT NULL)
                      )
                    ORDER BY
                      "_t3"."id" ASC NULLS LAST
                    LIMIT
                      4
                  ) AS "_t3"
              ) AS "_r4"
            ORDER BY
              "_r4"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
