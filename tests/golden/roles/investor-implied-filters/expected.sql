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
                    ',"payments":',
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
                                  '{"date":',
                                  to_json("_t3"."date"),
                                  ',"amount":',
                                  to_json("_t3"."amount"),
                                  ',"loan":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t5"."name"), '}')
                                      FROM
                                        "loans" AS "_t5"
                                      WHERE
                                        "_t5"."account_id" = $1
                                        AND "_t5"."id" = "_t3"."loan_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t3"."date" AS "k0",
                                "_t3"."id" AS "k1"
                              FROM
                                (
                                  SELECT
                                    "_t3"."date",
                                    "_t3"."amount",
                                    "_t3"."loan_id",
                                    "_t3"."id"
                                  FROM
                                    "payments" AS "_t3"
                                  WHERE
                                    "_t3"."account_id" = $1
                                    AND "_t3"."loan_id" = "_t1"."id"
                                  ORDER BY
                                    "_t3"."date" DESC NULLS FIRST,
                                    "_t3"."id" ASC NULLS LAST
                                  LIMIT
                                    2
                                ) AS "_t3"
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" DESC NULLS FIRST,
                            "_r4"."k1" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"schedules":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r7"."j"
                          FROM
                            (
                              SELECT
                                concat('{"number":', to_json("_t6"."number"), '}') AS "j",
                                "_t6"."id" AS "k0"
                              FROM
                                "schedules" AS "_t6"
                              WHERE
                                "_t6"."account_id" = $1
                                AND "_t6"."loan_id" = "_t1"."id"
                                AND ("_t6"."is_next" = true)
                            ) AS "_r7"
                          ORDER BY
                            "_r7"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"borrows":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r9"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t10"."name"), '}')
                                      FROM
                                        "people" AS "_t10"
                                      WHERE
                                        "_t10"."account_id" = $1
                                        AND ("_t10"."id" = $2::uuid)
                                        AND "_t10"."id" = "_t8"."person_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t8"."id" AS "k0"
                              FROM
                                "borrows" AS "_t8"
                              WHERE
                                "_t8"."account_id" = $1
                                AND "_t8"."loan_id" = "_t1"."id"
                            ) AS "_r9"
                          ORDER BY
                            "_r9"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"funding_sources":',
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
                                  '{"committed_amount":',
                                  coalesce(to_json("_t11"."committed_amount"), 'null'),
                                  ',"loan":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t13"."name"), '}')
                                      FROM
                                        "loans" AS "_t13"
                                      WHERE
                                        "_t13"."account_id" = $1
                                        AND "_t13"."id" = "_t11"."loan_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t11"."id" AS "k0"
                              FROM
                                "funding_sources" AS "_t11"
                              WHERE
                                "_t11"."account_id" = $1
                                AND ("_t11"."person_id" = $2::uuid)
                                AND "_t11"."loan_id" = "_t1"."id"
                            ) AS "_r12"
                          ORDER BY
                            "_r12"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"loan_documents":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r15"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"document":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t16"."name"), '}')
                                      FROM
                                        "documents" AS "_t16"
                                      WHERE
                                        "_t16"."account_id" = $1
                                        AND "_t16"."id" = "_t14"."document_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t14"."id" AS "k0"
                              FROM
                                "loan_documents" AS "_t14"
                              WHERE
                                "_t14"."account_id" = $1
                                AND "_t14"."loan_id" = "_t1"."id"
                            ) AS "_r15"
                          ORDER BY
                            "_r15"."k0" ASC NULLS LAST
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
                      "_t1"."id",
                      "_t1"."amount"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND EXISTS (
                        SELECT
                          1
                        FROM
                          "funding_sources" AS "_t17"
                        WHERE
                          "_t17"."account_id" = $1
                          AND "_t17"."loan_id" = "_t1"."id"
                          AND ("_t17"."person_id" = $2::uuid)
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
      '}'
    ),
    '}'
  ) AS "response"
