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
                    ',"latest_per_type":',
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
                                  '{"type":',
                                  to_json("_t3"."type"),
                                  ',"date":',
                                  to_json("_t3"."date"),
                                  ',"amount":',
                                  to_json("_t3"."amount"),
                                  '}'
                                ) AS "j",
                                "_t3"."type" AS "k0",
                                "_t3"."date" AS "k1",
                                "_t3"."id" AS "k2"
                              FROM
                                (
                                  SELECT DISTINCT
                                    ON ("_t3"."type") "_t3".*
                                  FROM
                                    "payments" AS "_t3"
                                  WHERE
                                    "_t3"."account_id" = $1
                                    AND "_t3"."loan_id" = "_t1"."id"
                                  ORDER BY
                                    "_t3"."type" ASC NULLS LAST,
                                    "_t3"."date" DESC NULLS FIRST,
                                    "_t3"."id" ASC NULLS LAST
                                ) AS "_t3"
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" ASC NULLS LAST,
                            "_r4"."k1" DESC NULLS FIRST,
                            "_r4"."k2" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
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
                            (
                              SELECT DISTINCT
                                ON ("_t5"."method") "_t5".*
                              FROM
                                "payments" AS "_t5"
                              WHERE
                                "_t5"."account_id" = $1
                                AND "_t5"."loan_id" = "_t1"."id"
                              ORDER BY
                                "_t5"."method" ASC NULLS LAST,
                                "_t5"."id" ASC NULLS LAST
                            ) AS "_t5"
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
      ',"loans_with_payments":',
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
              (
                SELECT DISTINCT
                  ON ("_t7"."loan_id") "_t7".*
                FROM
                  "payments" AS "_t7"
                WHERE
                  "_t7"."account_id" = $1
                ORDER BY
                  "_t7"."loan_id" ASC NULLS LAST,
                  "_t7"."id" ASC NULLS LAST
              ) AS "_t7"
          ) AS "_r8"
        GROUP BY
          ()
      ),
      ',"first_per_loan":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r10"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"loan_id":',
                    to_json("_t9"."loan_id"),
                    ',"id":',
                    to_json("_t9"."id"),
                    '}'
                  ) AS "j",
                  "_t9"."loan_id" AS "k0",
                  "_t9"."id" AS "k1"
                FROM
                  (
                    SELECT DISTINCT
                      ON ("_t9"."loan_id") "_t9".*
                    FROM
                      "payments" AS "_t9"
                    WHERE
                      "_t9"."account_id" = $1
                    ORDER BY
                      "_t9"."loan_id" ASC NULLS LAST,
                      "_t9"."id" ASC NULLS LAST
                    LIMIT
                      2
                  ) AS "_t9"
              ) AS "_r10"
            ORDER BY
              "_r10"."k0" ASC NULLS LAST,
              "_r10"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
