SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_by_pk":',
      coalesce(
        (
          SELECT
            concat('{"name":', to_json("_t1"."name"), '}')
          FROM
            "loans" AS "_t1"
          WHERE
            "_t1"."account_id" = $1
            AND "_t1"."id" = $2::uuid
        ),
        'null'
      ),
      ',"loans":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r3"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"name":',
                    to_json("_t2"."name"),
                    ',"amount":',
                    coalesce(to_json("_t2"."amount"), 'null'),
                    '}'
                  ) AS "j",
                  "_t2"."amount" AS "k0",
                  "_t2"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t2"."name",
                      "_t2"."amount",
                      "_t2"."id"
                    FROM
                      "loans" AS "_t2"
                    WHERE
                      "_t2"."account_id" = $1
                      AND (
                        ("_t2"."status" = $3::text)
                        AND ("_t2"."amount" >= $4::numeric)
                        AND ("_t2"."created_at" >= $5::timestamptz)
                      )
                    ORDER BY
                      "_t2"."amount" DESC NULLS FIRST,
                      "_t2"."id" ASC NULLS LAST
                    LIMIT
                      $6::bigint
                  ) AS "_t2"
              ) AS "_r3"
            ORDER BY
              "_r3"."k0" DESC NULLS FIRST,
              "_r3"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"schedules_aggregate":',
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
              "schedules" AS "_t4"
            WHERE
              "_t4"."account_id" = $1
              AND ("_t4"."due" >= $7::date)
          ) AS "_r5"
        GROUP BY
          ()
      ),
      ',"people_aggregate":',
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
              "people" AS "_t6"
            WHERE
              "_t6"."account_id" = $1
              AND ("_t6"."is_investor" = $8::boolean)
          ) AS "_r7"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
