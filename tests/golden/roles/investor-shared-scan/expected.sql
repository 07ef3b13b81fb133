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
            count(*) FILTER (
              WHERE
                ("_t1"."status" = 'lead'::text)
            )
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
                ("_t1"."status" = 'servicing'::text)
            )
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
                ("_t1"."status" = 'closed'::text)
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
          to_json(count(*)),
          ',"sum":',
          concat(
            '{"amount":',
            coalesce(to_json(sum("_t1"."amount")), 'null'),
            '}'
          ),
          '}'
        ),
        '}'
      ) AS "a3"
    FROM
      "loans" AS "_t1"
    WHERE
      "_t1"."account_id" = $1
      AND EXISTS (
        SELECT
          1
        FROM
          "funding_sources" AS "_t4"
        WHERE
          "_t4"."account_id" = $1
          AND "_t4"."loan_id" = "_t1"."id"
          AND ("_t4"."person_id" = $2::uuid)
      )
    GROUP BY
      ()
  ) AS "_m3"
