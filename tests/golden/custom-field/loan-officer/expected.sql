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
                    ',"loan_officer":',
                    coalesce(("_t1"."custom_fields" -> $1::text)::text, 'null'),
                    ',"property_type":',
                    coalesce(("_t1"."custom_fields" -> $2::text)::text, 'null'),
                    ',"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    '}'
                  ) AS "j",
                  (("_t1"."custom_fields" ->> $1::text)::text) AS "k0",
                  "_t1"."amount" AS "k1",
                  "_t1"."id" AS "k2"
                FROM
                  "loans" AS "_t1"
                WHERE
                  "_t1"."account_id" = $3
                  AND (
                    (("_t1"."custom_fields" ->> $1::text)::text) IS NOT NULL
                  )
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
              "_r2"."k1" DESC NULLS FIRST,
              "_r2"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"loans_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"officers":',
              to_json(count(DISTINCT "_r4"."c0")),
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              (("_t3"."custom_fields" ->> $1::text)::text) AS "c0"
            FROM
              "loans" AS "_t3"
            WHERE
              "_t3"."account_id" = $3
          ) AS "_r4"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
