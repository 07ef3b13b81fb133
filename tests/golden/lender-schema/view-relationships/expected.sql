SELECT
  concat(
    '{"data":',
    concat(
      '{"branch_totals":',
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
                    coalesce(to_json("_t1"."name"), 'null'),
                    ',"loans":',
                    coalesce(to_json("_t1"."loans"), 'null'),
                    ',"total":',
                    coalesce(to_json("_t1"."total"), 'null'),
                    ',"branch":',
                    coalesce(
                      (
                        SELECT
                          concat(
                            '{"region":',
                            coalesce(to_json("_t3"."region"), 'null'),
                            '}'
                          )
                        FROM
                          "lender"."branches" AS "_t3"
                        WHERE
                          "_t3"."account_id" = $1
                          AND "_t3"."id" = "_t1"."branch_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    ',"branch_loans":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r5"."j"
                          FROM
                            (
                              SELECT
                                concat('{"amount":', to_json("_t4"."amount"), '}') AS "j",
                                "_t4"."opened" AS "k0",
                                "_t4"."id" AS "k1"
                              FROM
                                "lender"."loans" AS "_t4"
                              WHERE
                                "_t4"."account_id" = $1
                                AND "_t4"."branch_id" = "_t1"."branch_id"
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
                  "_t1"."total" AS "k0"
                FROM
                  "lender"."branch_totals" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND ("_t1"."loans" > $2::bigint)
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS FIRST
          ),
          ','
        ),
        ']'
      ),
      ',"lender_branches":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r7"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"name":',
                    to_json("_t6"."name"),
                    ',"totals":',
                    coalesce(
                      (
                        SELECT
                          concat(
                            '{"total":',
                            coalesce(to_json("_t8"."total"), 'null'),
                            '}'
                          )
                        FROM
                          "lender"."branch_totals" AS "_t8"
                        WHERE
                          "_t8"."account_id" = $1
                          AND "_t8"."branch_id" = "_t6"."id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "_t6"."id" AS "k0"
                FROM
                  "lender"."branches" AS "_t6"
                WHERE
                  "_t6"."account_id" = $1
              ) AS "_r7"
            ORDER BY
              "_r7"."k0" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
