SELECT
  concat(
    '{"data":',
    concat(
      '{"servicing":',
      "_m3"."a0",
      ',"closed":',
      "_m3"."a1",
      ',"lead":',
      "_m3"."a2",
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
            count(*) FILTER (
              WHERE
                "_r2"."f0"
            )
          ),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(
              to_json(
                sum("_r2"."c0") FILTER (
                  WHERE
                    "_r2"."f0"
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"avg":',
          concat(
            '{"rate":',
            coalesce(
              to_json(
                avg("_r2"."c1") FILTER (
                  WHERE
                    "_r2"."f0"
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
                min("_r2"."c1") FILTER (
                  WHERE
                    "_r2"."f0"
                )
              ),
              'null'
            ),
            ',"amount":',
            coalesce(
              to_json(
                min("_r2"."c0") FILTER (
                  WHERE
                    "_r2"."f0"
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"max":',
          concat(
            '{"rate":',
            coalesce(
              to_json(
                max("_r2"."c1") FILTER (
                  WHERE
                    "_r2"."f0"
                )
              ),
              'null'
            ),
            ',"amount":',
            coalesce(
              to_json(
                max("_r2"."c0") FILTER (
                  WHERE
                    "_r2"."f0"
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
            count(*) FILTER (
              WHERE
                "_r2"."f1"
            )
          ),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(
              to_json(
                sum("_r2"."c0") FILTER (
                  WHERE
                    "_r2"."f1"
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"avg":',
          concat(
            '{"rate":',
            coalesce(
              to_json(
                avg("_r2"."c1") FILTER (
                  WHERE
                    "_r2"."f1"
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"min":',
          concat(
            '{"date_maturity":',
            coalesce(
              to_json(
                min("_r2"."c2") FILTER (
                  WHERE
                    "_r2"."f1"
                )
              ),
              'null'
            ),
            '}'
          ),
          ',"max":',
          concat(
            '{"date_maturity":',
            coalesce(
              to_json(
                max("_r2"."c2") FILTER (
                  WHERE
                    "_r2"."f1"
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
            count(*) FILTER (
              WHERE
                "_r2"."f2"
            )
          ),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(
              to_json(
                sum("_r2"."c0") FILTER (
                  WHERE
                    "_r2"."f2"
                )
              ),
              'null'
            ),
            '}'
          ),
          '}'
        ),
        '}'
      ) AS "a2"
    FROM
      (
        SELECT
          ("_t1"."status" = 'servicing'::text) AS "f0",
          "_t1"."amount" AS "c0",
          "_t1"."rate" AS "c1",
          ("_t1"."status" = 'closed'::text) AS "f1",
          "_t1"."date_maturity" AS "c2",
          ("_t1"."status" = 'lead'::text) AS "f2"
        FROM
          "loans" AS "_t1"
        WHERE
          "_t1"."account_id" = $1
          AND (
            ("_t1"."status" = 'servicing'::text)
            OR ("_t1"."status" = 'closed'::text)
            OR ("_t1"."status" = 'lead'::text)
          )
      ) AS "_r2"
    GROUP BY
      ()
  ) AS "_m3"
