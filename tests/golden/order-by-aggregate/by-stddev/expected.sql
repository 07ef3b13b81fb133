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
                          concat(
                            '{"count":',
                            to_json(count(*)),
                            ',"stddev_samp":',
                            concat(
                              '{"amount":',
                              coalesce(to_json(stddev_samp("_r6"."c0")), 'null'),
                              '}'
                            ),
                            ',"var_pop":',
                            concat(
                              '{"amount":',
                              coalesce(to_json(var_pop("_r6"."c0")), 'null'),
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
                        ) AS "_r6"
                      GROUP BY
                        ()
                    ),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      stddev_samp("_o3"."amount")
                    FROM
                      "payments" AS "_o3"
                    WHERE
                      "_o3"."account_id" = $1
                      AND "_o3"."loan_id" = "_t1"."id"
                  ) AS "k0",
                  (
                    SELECT
                      var_pop("_o4"."amount")
                    FROM
                      "payments" AS "_o4"
                    WHERE
                      "_o4"."account_id" = $1
                      AND "_o4"."loan_id" = "_t1"."id"
                  ) AS "k1",
                  "_t1"."id" AS "k2"
                FROM
                  (
                    SELECT
                      "_t1"."amount",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      (
                        SELECT
                          stddev_samp("_o3"."amount")
                        FROM
                          "payments" AS "_o3"
                        WHERE
                          "_o3"."account_id" = $1
                          AND "_o3"."loan_id" = "_t1"."id"
                      ) DESC NULLS LAST,
                      (
                        SELECT
                          var_pop("_o4"."amount")
                        FROM
                          "payments" AS "_o4"
                        WHERE
                          "_o4"."account_id" = $1
                          AND "_o4"."loan_id" = "_t1"."id"
                      ) ASC NULLS LAST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS LAST,
              "_r2"."k1" ASC NULLS LAST,
              "_r2"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
