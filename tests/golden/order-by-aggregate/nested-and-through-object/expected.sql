SELECT
  concat(
    '{"data":',
    concat(
      '{"people":',
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
                    '{"id":',
                    to_json("_t1"."id"),
                    ',"funding_sources":',
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
                                  '{"committed_amount":',
                                  coalesce(to_json("_t4"."committed_amount"), 'null'),
                                  ',"loan":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"payments_aggregate":',
                                          (
                                            SELECT
                                              concat(
                                                '{"aggregate":',
                                                concat(
                                                  '{"avg":',
                                                  concat(
                                                    '{"amount":',
                                                    coalesce(to_json(avg("_r10"."c0")), 'null'),
                                                    '}'
                                                  ),
                                                  '}'
                                                ),
                                                '}'
                                              )
                                            FROM
                                              (
                                                SELECT
                                                  "_t9"."amount" AS "c0"
                                                FROM
                                                  "payments" AS "_t9"
                                                WHERE
                                                  "_t9"."account_id" = $1
                                                  AND "_t9"."loan_id" = "_t8"."id"
                                              ) AS "_r10"
                                            GROUP BY
                                              ()
                                          ),
                                          '}'
                                        )
                                      FROM
                                        "loans" AS "_t8"
                                      WHERE
                                        "_t8"."account_id" = $1
                                        AND "_t8"."id" = "_t4"."loan_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                (
                                  SELECT
                                    (
                                      SELECT
                                        avg("_o7"."amount")
                                      FROM
                                        "payments" AS "_o7"
                                      WHERE
                                        "_o7"."account_id" = $1
                                        AND "_o7"."loan_id" = "_o6"."id"
                                    )
                                  FROM
                                    "loans" AS "_o6"
                                  WHERE
                                    "_o6"."account_id" = $1
                                    AND "_o6"."id" = "_t4"."loan_id"
                                  LIMIT
                                    1
                                ) AS "k0",
                                "_t4"."id" AS "k1"
                              FROM
                                (
                                  SELECT
                                    "_t4"."committed_amount",
                                    "_t4"."loan_id",
                                    "_t4"."id"
                                  FROM
                                    "funding_sources" AS "_t4"
                                  WHERE
                                    "_t4"."account_id" = $1
                                    AND "_t4"."person_id" = "_t1"."id"
                                  ORDER BY
                                    (
                                      SELECT
                                        (
                                          SELECT
                                            avg("_o7"."amount")
                                          FROM
                                            "payments" AS "_o7"
                                          WHERE
                                            "_o7"."account_id" = $1
                                            AND "_o7"."loan_id" = "_o6"."id"
                                        )
                                      FROM
                                        "loans" AS "_o6"
                                      WHERE
                                        "_o6"."account_id" = $1
                                        AND "_o6"."id" = "_t4"."loan_id"
                                      LIMIT
                                        1
                                    ) ASC NULLS LAST,
                                    "_t4"."id" ASC NULLS LAST
                                  LIMIT
                                    2
                                ) AS "_t4"
                            ) AS "_r5"
                          ORDER BY
                            "_r5"."k0" ASC NULLS LAST,
                            "_r5"."k1" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      max("_o3"."committed_amount")
                    FROM
                      "funding_sources" AS "_o3"
                    WHERE
                      "_o3"."account_id" = $1
                      AND "_o3"."person_id" = "_t1"."id"
                  ) AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."id"
                    FROM
                      "people" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND ("_t1"."is_investor" = true)
                    ORDER BY
                      (
                        SELECT
                          max("_o3"."committed_amount")
                        FROM
                          "funding_sources" AS "_o3"
                        WHERE
                          "_o3"."account_id" = $1
                          AND "_o3"."person_id" = "_t1"."id"
                      ) DESC NULLS LAST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      2
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS LAST,
              "_r2"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"payments":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r12"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"date":',
                    to_json("_t11"."date"),
                    ',"amount":',
                    to_json("_t11"."amount"),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      (
                        SELECT
                          min("_o14"."date")
                        FROM
                          "payments" AS "_o14"
                        WHERE
                          "_o14"."account_id" = $1
                          AND "_o14"."loan_id" = "_o13"."id"
                      )
                    FROM
                      "loans" AS "_o13"
                    WHERE
                      "_o13"."account_id" = $1
                      AND "_o13"."id" = "_t11"."loan_id"
                    LIMIT
                      1
                  ) AS "k0",
                  "_t11"."date" AS "k1",
                  "_t11"."id" AS "k2"
                FROM
                  (
                    SELECT
                      "_t11"."date",
                      "_t11"."amount",
                      "_t11"."loan_id",
                      "_t11"."id"
                    FROM
                      "payments" AS "_t11"
                    WHERE
                      "_t11"."account_id" = $1
                    ORDER BY
                      (
                        SELECT
                          (
                            SELECT
                              min("_o14"."date")
                            FROM
                              "payments" AS "_o14"
                            WHERE
                              "_o14"."account_id" = $1
                              AND "_o14"."loan_id" = "_o13"."id"
                          )
                        FROM
                          "loans" AS "_o13"
                        WHERE
                          "_o13"."account_id" = $1
                          AND "_o13"."id" = "_t11"."loan_id"
                        LIMIT
                          1
                      ) ASC NULLS LAST,
                      "_t11"."date" ASC NULLS LAST,
                      "_t11"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t11"
              ) AS "_r12"
            ORDER BY
              "_r12"."k0" ASC NULLS LAST,
              "_r12"."k1" ASC NULLS LAST,
              "_r12"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
