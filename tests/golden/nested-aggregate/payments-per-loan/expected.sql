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
                    '{"name":',
                    to_json("_t1"."name"),
                    ',"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    ',"payments_aggregate":',
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
                              coalesce(to_json(sum("_r4"."c0")), 'null'),
                              '}'
                            ),
                            ',"min":',
                            concat(
                              '{"date":',
                              coalesce(to_json(min("_r4"."c1")), 'null'),
                              '}'
                            ),
                            ',"max":',
                            concat(
                              '{"date":',
                              coalesce(to_json(max("_r4"."c1")), 'null'),
                              '}'
                            ),
                            '}'
                          ),
                          '}'
                        )
                      FROM
                        (
                          SELECT
                            "_t3"."amount" AS "c0",
                            "_t3"."date" AS "c1"
                          FROM
                            "payments" AS "_t3"
                          WHERE
                            "_t3"."account_id" = $1
                            AND "_t3"."loan_id" = "_t1"."id"
                            AND ("_t3"."date_reversed" IS NULL)
                        ) AS "_r4"
                      GROUP BY
                        ()
                    ),
                    ',"schedules_aggregate":',
                    (
                      SELECT
                        concat(
                          '{"aggregate":',
                          concat(
                            '{"count":',
                            to_json(count(*)),
                            ',"sum":',
                            concat(
                              '{"interest":',
                              coalesce(to_json(sum("_r6"."c0")), 'null'),
                              ',"principal":',
                              coalesce(to_json(sum("_r6"."c1")), 'null'),
                              '}'
                            ),
                            '}'
                          ),
                          '}'
                        )
                      FROM
                        (
                          SELECT
                            "_t5"."interest" AS "c0",
                            "_t5"."principal" AS "c1"
                          FROM
                            "schedules" AS "_t5"
                          WHERE
                            "_t5"."account_id" = $1
                            AND "_t5"."loan_id" = "_t1"."id"
                        ) AS "_r6"
                      GROUP BY
                        ()
                    ),
                    ',"borrows_aggregate":',
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
                            "borrows" AS "_t7"
                          WHERE
                            "_t7"."account_id" = $1
                            AND "_t7"."loan_id" = "_t1"."id"
                        ) AS "_r8"
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
                      "_t1"."name",
                      "_t1"."amount",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."amount" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      4
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
      '}'
    ),
    '}'
  ) AS "response"
