SELECT
  concat(
    '{"data":',
    concat(
      '{"servicing":',
      "_m3"."a0",
      ',"large":',
      "_m3"."a1",
      ',"kept":',
      "_m7"."a0",
      ',"reversed":',
      "_m7"."a1",
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
          '}'
        ),
        '}'
      ) AS "a1"
    FROM
      (
        SELECT
          ("_t1"."status" = 'servicing'::text) AS "f0",
          "_t1"."amount" AS "c0",
          "_t1"."rate" AS "c1",
          ("_t1"."amount" >= $1::numeric) AS "f1"
        FROM
          "loans" AS "_t1"
        WHERE
          "_t1"."account_id" = $2
          AND EXISTS (
            SELECT
              1
            FROM
              "funding_sources" AS "_t4"
            WHERE
              "_t4"."account_id" = $2
              AND "_t4"."loan_id" = "_t1"."id"
              AND ("_t4"."person_id" = $3::uuid)
          )
          AND (
            ("_t1"."status" = 'servicing'::text)
            OR ("_t1"."amount" >= $1::numeric)
          )
      ) AS "_r2"
    GROUP BY
      ()
  ) AS "_m3",
  (
    SELECT
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                "_r6"."f0"
            )
          ),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(
              to_json(
                sum("_r6"."c0") FILTER (
                  WHERE
                    "_r6"."f0"
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
                "_r6"."f1"
            )
          ),
          '}'
        ),
        '}'
      ) AS "a1"
    FROM
      (
        SELECT
          ("_t5"."date_reversed" IS NULL) AS "f0",
          "_t5"."amount" AS "c0",
          ("_t5"."date_reversed" IS NOT NULL) AS "f1"
        FROM
          "payments" AS "_t5"
        WHERE
          "_t5"."account_id" = $2
          AND EXISTS (
            SELECT
              1
            FROM
              "funding_sources" AS "_t8"
            WHERE
              "_t8"."account_id" = $2
              AND "_t8"."loan_id" = "_t5"."loan_id"
              AND ("_t8"."person_id" = $3::uuid)
          )
          AND (
            ("_t5"."date_reversed" IS NULL)
            OR ("_t5"."date_reversed" IS NOT NULL)
          )
      ) AS "_r6"
    GROUP BY
      ()
  ) AS "_m7"
