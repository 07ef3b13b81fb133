SELECT
  concat(
    '{"data":',
    concat(
      '{"cast":',
      "_m3"."a0",
      ',"contains":',
      "_m3"."a1",
      ',"all_keys":',
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
                (("_t1"."custom_fields")::text ILIKE $1::text)
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
                ("_t1"."custom_fields" @> $2::jsonb)
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
                ("_t1"."custom_fields" ?& $3::text[])
            )
          ),
          '}'
        ),
        '}'
      ) AS "a2"
    FROM
      "loans" AS "_t1"
    WHERE
      "_t1"."account_id" = $4
      AND (
        (("_t1"."custom_fields")::text ILIKE $1::text)
        OR ("_t1"."custom_fields" @> $5::jsonb)
        OR ("_t1"."custom_fields" ?& $6::text[])
      )
    GROUP BY
      ()
  ) AS "_m3"
