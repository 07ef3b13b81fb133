SELECT
  concat(
    '{"data":',
    concat(
      '{"lender_loans":',
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
                    ',"interest":',
                    coalesce(
                      to_json(
                        "lender"."loan_interest" ("_t1"."account_id", "_t1"."id")
                      ),
                      'null'
                    ),
                    ',"twice":',
                    coalesce(
                      to_json(
                        "lender"."loan_interest" (
                          "_t1"."account_id",
                          "_t1"."id",
                          "years" => $1::float8
                        )
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "lender"."loans" AS "_t1"
                WHERE
                  "_t1"."account_id" = $2
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
