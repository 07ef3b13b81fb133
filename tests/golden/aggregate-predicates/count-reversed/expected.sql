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
                    '{"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    ',"payments_aggregate":',
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
                            "payments" AS "_t3"
                          WHERE
                            "_t3"."account_id" = $1
                            AND "_t3"."loan_id" = "_t1"."id"
                            AND ("_t3"."date_reversed" IS NOT NULL)
                        ) AS "_r4"
                      GROUP BY
                        ()
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."amount" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."amount",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND (
                        SELECT
                          ("_a6"."v" > $2::bigint)
                        FROM
                          (
                            SELECT
                              count(*) AS "v"
                            FROM
                              "payments" AS "_t5"
                            WHERE
                              "_t5"."account_id" = $1
                              AND "_t5"."loan_id" = "_t1"."id"
                              AND ("_t5"."date_reversed" IS NOT NULL)
                          ) AS "_a6"
                      )
                    ORDER BY
                      "_t1"."amount" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS FIRST,
              "_r2"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"two_dates":',
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
              "loans" AS "_t7"
            WHERE
              "_t7"."account_id" = $1
              AND (
                SELECT
                  ("_a10"."v" >= $3::bigint)
                FROM
                  (
                    SELECT
                      count(DISTINCT "_t9"."date_reversed") AS "v"
                    FROM
                      "payments" AS "_t9"
                    WHERE
                      "_t9"."account_id" = $1
                      AND "_t9"."loan_id" = "_t7"."id"
                  ) AS "_a10"
              )
          ) AS "_r8"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
