SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_opened_between":',
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
                    ',"amount":',
                    to_json("_t1"."amount"),
                    ',"branch":',
                    coalesce(
                      (
                        SELECT
                          concat('{"name":', to_json("_t3"."name"), '}')
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
                    '}'
                  ) AS "j",
                  "_t1"."opened" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."id",
                      "_t1"."amount",
                      "_t1"."branch_id",
                      "_t1"."opened"
                    FROM
                      "lender"."loans_opened_between" ("from_date" => $2::date) AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND ("_t1"."amount" > $3::numeric)
                    ORDER BY
                      "_t1"."opened" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      2
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
