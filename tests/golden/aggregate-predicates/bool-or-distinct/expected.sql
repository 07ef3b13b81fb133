SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_aggregate":',
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
              "loans" AS "_t1"
            WHERE
              "_t1"."account_id" = $1
              AND (
                (
                  SELECT
                    ("_a4"."v" = $2::boolean)
                  FROM
                    (
                      SELECT
                        bool_or("_t3"."is_next") AS "v"
                      FROM
                        "schedules" AS "_t3"
                      WHERE
                        "_t3"."account_id" = $1
                        AND "_t3"."loan_id" = "_t1"."id"
                    ) AS "_a4"
                )
                AND (
                  SELECT
                    ("_a6"."v" = false)
                  FROM
                    (
                      SELECT
                        bool_and("_t5"."is_next") AS "v"
                      FROM
                        "schedules" AS "_t5"
                      WHERE
                        "_t5"."account_id" = $1
                        AND "_t5"."loan_id" = "_t1"."id"
                        AND ("_t5"."number" <= $3::bigint)
                    ) AS "_a6"
                )
              )
          ) AS "_r2"
        GROUP BY
          ()
      ),
      ',"loans":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r8"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"amount":',
                    coalesce(to_json("_t7"."amount"), 'null'),
                    '}'
                  ) AS "j",
                  "_t7"."amount" AS "k0",
                  "_t7"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t7"."amount",
                      "_t7"."id"
                    FROM
                      "loans" AS "_t7"
                    WHERE
                      "_t7"."account_id" = $1
                      AND (
                        NOT (
                          SELECT
                            ("_a10"."v" > $4::bigint)
                          FROM
                            (
                              SELECT
                                count(*) AS "v"
                              FROM
                                "schedules" AS "_t9"
                              WHERE
                                "_t9"."account_id" = $1
                                AND "_t9"."loan_id" = "_t7"."id"
                            ) AS "_a10"
                        )
                      )
                    ORDER BY
                      "_t7"."amount" ASC NULLS LAST,
                      "_t7"."id" ASC NULLS LAST
                    LIMIT
                      2
                  ) AS "_t7"
              ) AS "_r8"
            ORDER BY
              "_r8"."k0" ASC NULLS LAST,
              "_r8"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
