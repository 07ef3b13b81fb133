SELECT
  concat(
    '{"data":',
    concat(
      '{"__typename":',
      '"query_root"',
      ',"loans":',
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
                    '{"__typename":',
                    '"loans"',
                    ',"borrows":',
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
                                  '{"__typename":',
                                  '"borrows"',
                                  ',"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"__typename":',
                                          '"people"',
                                          ',"name":',
                                          to_json("_t5"."name"),
                                          '}'
                                        )
                                      FROM
                                        "people" AS "_t5"
                                      WHERE
                                        "_t5"."account_id" = $1
                                        AND "_t5"."id" = "_t3"."person_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t3"."id" AS "k0"
                              FROM
                                "borrows" AS "_t3"
                              WHERE
                                "_t3"."account_id" = $1
                                AND "_t3"."loan_id" = "_t1"."id"
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"payments_aggregate":',
                    (
                      SELECT
                        concat(
                          '{"__typename":',
                          '"payments_aggregate"',
                          ',"aggregate":',
                          concat(
                            '{"__typename":',
                            '"payments_aggregate_fields"',
                            ',"count":',
                            to_json(count(*)),
                            ',"max":',
                            concat(
                              '{"__typename":',
                              '"payments_max_fields"',
                              ',"date":',
                              coalesce(to_json(max("_r7"."c0")), 'null'),
                              '}'
                            ),
                            '}'
                          ),
                          '}'
                        )
                      FROM
                        (
                          SELECT
                            "_t6"."date" AS "c0"
                          FROM
                            "payments" AS "_t6"
                          WHERE
                            "_t6"."account_id" = $1
                            AND "_t6"."loan_id" = "_t1"."id"
                        ) AS "_r7"
                      GROUP BY
                        ()
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  (
                    SELECT
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      1
                  ) AS "_t1"
              ) AS "_r2"
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
