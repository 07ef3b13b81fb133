SELECT
  concat(
    '{"data":',
    concat(
      '{"contains":',
      "_m3"."a0",
      ',"has_key":',
      "_m3"."a1",
      ',"has_keys_any":',
      "_m3"."a2",
      ',"has_keys_all":',
      "_m3"."a3",
      ',"contained_in_empty":',
      "_m3"."a4",
      ',"officers":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r5"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"amount":',
                    coalesce(to_json("_t4"."amount"), 'null'),
                    ',"custom_fields":',
                    to_json("_t4"."custom_fields"),
                    '}'
                  ) AS "j",
                  "_t4"."amount" AS "k0",
                  "_t4"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t4"."amount",
                      "_t4"."custom_fields",
                      "_t4"."id"
                    FROM
                      "loans" AS "_t4"
                    WHERE
                      "_t4"."account_id" = $1
                      AND ("_t4"."custom_fields" ? $2::text)
                    ORDER BY
                      "_t4"."amount" DESC NULLS FIRST,
                      "_t4"."id" ASC NULLS LAST
                    LIMIT
                      2
                  ) AS "_t4"
              ) AS "_r5"
            ORDER BY
              "_r5"."k0" DESC NULLS FIRST,
              "_r5"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
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
                ("_t1"."custom_fields" @> $3::jsonb)
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
                ("_t1"."custom_fields" ? $2::text)
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
                ("_t1"."custom_fields" ?| $4::text[])
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
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."custom_fields" ?& $5::text[])
            )
          ),
          '}'
        ),
        '}'
      ) AS "a3",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."custom_fields" <@ $6::jsonb)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a4"
    FROM
      "loans" AS "_t1"
    WHERE
      "_t1"."account_id" = $1
      AND (
        ("_t1"."custom_fields" @> $3::jsonb)
        OR ("_t1"."custom_fields" ? $2::text)
        OR ("_t1"."custom_fields" ?| $7::text[])
        OR ("_t1"."custom_fields" ?& $8::text[])
        OR ("_t1"."custom_fields" <@ $6::jsonb)
      )
    GROUP BY
      ()
  ) AS "_m3"
