SELECT
  concat(
    '{"data":',
    concat(
      '{"payments":',
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
                    '{"date":',
                    to_json("_t1"."date"),
                    ',"amount":',
                    to_json("_t1"."amount"),
                    ',"loan":',
                    coalesce(
                      (
                        SELECT
                          concat(
                            '{"name":',
                            to_json("_t4"."name"),
                            ',"amount":',
                            coalesce(to_json("_t4"."amount"), 'null'),
                            '}'
                          )
                        FROM
                          "loans" AS "_t4"
                        WHERE
                          "_t4"."account_id" = $1
                          AND "_t4"."id" = "_t1"."loan_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      "_o3"."amount"
                    FROM
                      "loans" AS "_o3"
                    WHERE
                      "_o3"."account_id" = $1
                      AND "_o3"."id" = "_t1"."loan_id"
                    LIMIT
                      1
                  ) AS "k0",
                  "_t1"."date" AS "k1",
                  "_t1"."id" AS "k2"
                FROM
                  (
                    SELECT
                      "_t1"."date",
                      "_t1"."amount",
                      "_t1"."loan_id",
                      "_t1"."id"
                    FROM
                      "payments" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      (
                        SELECT
                          "_o3"."amount"
                        FROM
                          "loans" AS "_o3"
                        WHERE
                          "_o3"."account_id" = $1
                          AND "_o3"."id" = "_t1"."loan_id"
                        LIMIT
                          1
                      ) DESC NULLS FIRST,
                      "_t1"."date" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      6
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" DESC NULLS FIRST,
              "_r2"."k1" DESC NULLS FIRST,
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
