SELECT
  concat(
    '{"data":',
    concat(
      '{"lead":',
      "_m3"."a0",
      ',"servicing":',
      "_m3"."a1",
      ',"closed":',
      "_m3"."a2",
      ',"all":',
      "_m3"."a3",
      '}'
    ),
    '}'
  ) AS "response"
FROM
  (
    SELECT
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            coalesce(
              sum("_g2"."n") FILTER (
                WHERE
                  ("_g2"."status" = 'lead'::text)
              ),
              0
            )
          ),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(
              to_json(
                sum("_g2"."s0") FILTER (
                  WHERE
                    ("_g2"."status" = 'lead'::text)
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"min":',
          concat(
            '{"rate":',
            coalesce(
              to_json(
                min("_g2"."s1") FILTER (
                  WHERE
                    ("_g2"."status" = 'lead'::text)
                )
              ),
              'null'
            ),
            '}'
          ),
          '}'
        ),
        '}'
      ) AS "a0",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            coalesce(
              sum("_g2"."n") FILTER (
                WHERE
                  ("_g2"."status" = 'servicing'::text)
              ),
              0
            )
          ),
          ',"max":',
          concat(
            '{"date_maturity":',
            coalesce(
              to_json(
                max("_g2"."s2") FILTER (
                  WHERE
                    ("_g2"."status" = 'servicing'::text)
                )
              ),
              'null'
            ),
            '}'
          ),
          '}'
        ),
        '}'
      ) AS "a1",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            coalesce(
              sum("_g2"."n") FILTER (
                WHERE
                  ("_g2"."status" = 'closed'::text)
              ),
              0
            )
          ),
          '}'
        ),
        '}'
      ) AS "a2",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(coalesce(sum("_g2"."n"), 0)),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(to_json(sum("_g2"."s0")), 'null'),
            '}'
          ),
          '}'
        ),
        '}'
      ) AS "a3"
    FROM
      (
        SELECT
          "_t1"."status",
          count(*) AS "n",
          sum("_t1"."amount") AS "s0",
          min("_t1"."rate") AS "s1",
          max("_t1"."date_maturity") AS "s2"
        FROM
          "loans" AS "_t1"
        WHERE
          "_t1"."account_id" = $1
        GROUP BY
          "_t1"."status"
      ) AS "_g2"
    GROUP BY
      ()
  ) AS "_m3"
