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
                    ',"date_funded":',
                    coalesce(to_json("_t1"."date_funded"), 'null'),
                    ',"date_maturity":',
                    coalesce(to_json("_t1"."date_maturity"), 'null'),
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
                            '}'
                          ),
                          '}'
                        )
                      FROM
                        (
                          SELECT
                            "_t3"."amount" AS "c0"
                          FROM
                            "payments" AS "_t3"
                          WHERE
                            "_t3"."account_id" = $1
                            AND "_t3"."loan_id" = "_t1"."id"
                        ) AS "_r4"
                      GROUP BY
                        ()
                    ),
                    ',"borrows":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r6"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"name":',
                                          to_json("_t7"."name"),
                                          ',"entity_type":',
                                          to_json("_t7"."entity_type"),
                                          '}'
                                        )
                                      FROM
                                        "people" AS "_t7"
                                      WHERE
                                        "_t7"."account_id" = $1
                                        AND "_t7"."id" = "_t5"."person_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t5"."id" AS "k0"
                              FROM
                                "borrows" AS "_t5"
                              WHERE
                                "_t5"."account_id" = $1
                                AND "_t5"."loan_id" = "_t1"."id"
                            ) AS "_r6"
                          ORDER BY
                            "_r6"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
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
                      "_t1"."date_funded",
                      "_t1"."date_maturity",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND ("_t1"."status" = 'closed'::text)
                    ORDER BY
                      "_t1"."amount" ASC NULLS LAST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      2
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
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
