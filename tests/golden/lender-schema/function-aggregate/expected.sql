SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_opened_between_aggregate":',
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
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t1"."amount" AS "c0"
            FROM
              "lender"."loans_opened_between" ("from_date" => $1::date, "to_date" => $2::date) AS "_t1"
            WHERE
              "_t1"."account_id" = $3
          ) AS "_r2"
        GROUP BY
          ()
      ),
      ',"lender_loans_aggregate":',
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
              "lender"."loans" AS "_t3"
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
