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
                                  '{"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t5"."name"), '}')
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
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "loans" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND EXISTS (
                    SELECT
                      1
                    FROM
                      "borrows" AS "_t6"
                    WHERE
                      "_t6"."account_id" = $1
                      AND "_t6"."loan_id" = "_t1"."id"
                      AND EXISTS (
                        SELECT
                          1
                        FROM
                          "people" AS "_t7"
                        WHERE
                          "_t7"."account_id" = $1
                          AND "_t7"."id" = "_t6"."person_id"
                          AND ("_t7"."name" ILIKE $2::text)
                      )
                  )
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
