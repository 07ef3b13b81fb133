SELECT
  concat(
    '{"data":',
    concat(
      '{"payments_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"count":',
              to_json(count(*)),
              ',"sum":',
              concat(
                '{"amount":',
                coalesce(to_json(sum("_r2"."c0")), 'null'),
                '}'
              ),
              ',"max":',
              concat(
                '{"date_reversed":',
                coalesce(to_json(max("_r2"."c1")), 'null'),
                '}'
              ),
              '}'
            ),
            ',"nodes":',
            concat(
              '[',
              string_agg(
                "_r2"."n2",
                ','
                ORDER BY
                  "_r2"."k0" ASC NULLS LAST,
                  "_r2"."k1" ASC NULLS LAST
              ),
              ']'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t1"."amount" AS "c0",
              "_t1"."date_reversed" AS "c1",
              concat(
                '{"date":',
                to_json("_t1"."date"),
                ',"amount":',
                to_json("_t1"."amount"),
                ',"date_reversed":',
                coalesce(to_json("_t1"."date_reversed"), 'null'),
                ',"loan":',
                coalesce(
                  (
                    SELECT
                      concat('{"name":', to_json("_t3"."name"), '}')
                    FROM
                      "loans" AS "_t3"
                    WHERE
                      "_t3"."account_id" = $1
                      AND "_t3"."id" = "_t1"."loan_id"
                    LIMIT
                      1
                  ),
                  'null'
                ),
                '}'
              ) AS "n2",
              "_t1"."date" AS "k0",
              "_t1"."id" AS "k1"
            FROM
              (
                SELECT
                  "_t1"."amount",
                  "_t1"."date_reversed",
                  "_t1"."date",
                  "_t1"."loan_id",
                  "_t1"."id"
                FROM
                  "payments" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND ("_t1"."date_reversed" IS NOT NULL)
                ORDER BY
                  "_t1"."date" ASC NULLS LAST,
                  "_t1"."id" ASC NULLS LAST
                LIMIT
                  4
              ) AS "_t1"
          ) AS "_r2"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
