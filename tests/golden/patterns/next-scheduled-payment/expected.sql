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
                    ',"schedules":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r4"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"number":',
                                  to_json("_t3"."number"),
                                  ',"due":',
                                  to_json("_t3"."due"),
                                  ',"payment":',
                                  to_json("_t3"."payment"),
                                  ',"principal":',
                                  to_json("_t3"."principal"),
                                  ',"interest":',
                                  to_json("_t3"."interest"),
                                  ',"balance":',
                                  to_json("_t3"."balance"),
                                  ',"is_next":',
                                  to_json("_t3"."is_next"),
                                  '}'
                                ) AS "j",
                                "_t3"."id" AS "k0"
                              FROM
                                "schedules" AS "_t3"
                              WHERE
                                "_t3"."account_id" = $1
                                AND "_t3"."loan_id" = "_t1"."id"
                                AND ("_t3"."is_next" = true)
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"unreversed":',
                    (
                      SELECT
                        concat(
                          '{"aggregate":',
                          concat(
                            '{"sum":',
                            concat(
                              '{"amount":',
                              coalesce(to_json(sum("_r6"."c0")), 'null'),
                              '}'
                            ),
                            '}'
                          ),
                          '}'
                        )
                      FROM
                        (
                          SELECT
                            "_t5"."amount" AS "c0"
                          FROM
                            "payments" AS "_t5"
                          WHERE
                            "_t5"."account_id" = $1
                            AND "_t5"."loan_id" = "_t1"."id"
                            AND ("_t5"."date_reversed" IS NULL)
                        ) AS "_r6"
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
                      "_t1"."id",
                      "_t1"."amount"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND ("_t1"."status" = 'servicing'::text)
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
      '}'
    ),
    '}'
  ) AS "response"
