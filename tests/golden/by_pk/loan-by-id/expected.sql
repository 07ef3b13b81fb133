SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_by_pk":',
      coalesce(
        (
          SELECT
            concat(
              '{"id":',
              to_json("_t1"."id"),
              ',"name":',
              to_json("_t1"."name"),
              ',"amount":',
              coalesce(to_json("_t1"."amount"), 'null'),
              ',"status":',
              to_json("_t1"."status"),
              ',"payments":',
              concat(
                '[',
                array_to_string(
                  ARRAY(
                    SELECT
                      "_r3"."j"
                    FROM
                      (
                        SELECT
                          concat(
                            '{"date":',
                            to_json("_t2"."date"),
                            ',"amount":',
                            to_json("_t2"."amount"),
                            ',"type":',
                            to_json("_t2"."type"),
                            ',"method":',
                            coalesce(to_json("_t2"."method"), 'null'),
                            ',"date_reversed":',
                            coalesce(to_json("_t2"."date_reversed"), 'null'),
                            '}'
                          ) AS "j",
                          "_t2"."date" AS "k0",
                          "_t2"."id" AS "k1"
                        FROM
                          (
                            SELECT
                              "_t2"."date",
                              "_t2"."amount",
                              "_t2"."type",
                              "_t2"."method",
                              "_t2"."date_reversed",
                              "_t2"."id"
                            FROM
                              "payments" AS "_t2"
                            WHERE
                              "_t2"."account_id" = $1
                              AND "_t2"."loan_id" = "_t1"."id"
                            ORDER BY
                              "_t2"."date" DESC NULLS FIRST,
                              "_t2"."id" ASC NULLS LAST
                            LIMIT
                              3
                          ) AS "_t2"
                      ) AS "_r3"
                    ORDER BY
                      "_r3"."k0" DESC NULLS FIRST,
                      "_r3"."k1" ASC NULLS LAST
                  ),
                  ','
                ),
                ']'
              ),
              ',"comments":',
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
                            '{"text":',
                            to_json("_t4"."text"),
                            ',"admin":',
                            coalesce(
                              (
                                SELECT
                                  concat('{"name":', to_json("_t6"."name"), '}')
                                FROM
                                  "admins" AS "_t6"
                                WHERE
                                  "_t6"."account_id" = $1
                                  AND "_t6"."id" = "_t4"."admin_id"
                                LIMIT
                                  1
                              ),
                              'null'
                            ),
                            '}'
                          ) AS "j",
                          "_t4"."id" AS "k0"
                        FROM
                          (
                            SELECT
                              "_t4"."text",
                              "_t4"."admin_id",
                              "_t4"."id"
                            FROM
                              "comments" AS "_t4"
                            WHERE
                              "_t4"."account_id" = $1
                              AND "_t4"."loan_id" = "_t1"."id"
                            ORDER BY
                              "_t4"."id" ASC NULLS LAST
                            LIMIT
                              2
                          ) AS "_t4"
                      ) AS "_r5"
                    ORDER BY
                      "_r5"."k0" ASC NULLS LAST
                  ),
                  ','
                ),
                ']'
              ),
              '}'
            )
          FROM
            "loans" AS "_t1"
          WHERE
            "_t1"."account_id" = $1
            AND "_t1"."id" = $2::uuid
        ),
        'null'
      ),
      '}'
    ),
    '}'
  ) AS "response"
