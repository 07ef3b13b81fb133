SELECT
  concat(
    '{"data":',
    concat(
      '{"tasks":',
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
                    ',"status":',
                    to_json("_t1"."status"),
                    ',"date_due":',
                    coalesce(to_json("_t1"."date_due"), 'null'),
                    ',"loan":',
                    coalesce(
                      (
                        SELECT
                          concat('{"name":', to_json("_t3"."name"), '}')
                        FROM
                          "loans" AS "_t3"
                        WHERE
                          "_t3"."account_id" = $1
                          AND "_t3"."id" = "_t1"."loan_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."date_due" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."name",
                      "_t1"."status",
                      "_t1"."date_due",
                      "_t1"."loan_id",
                      "_t1"."id"
                    FROM
                      "tasks" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                      AND ("_t1"."status" <> 'completed'::text)
                    ORDER BY
                      "_t1"."date_due" ASC NULLS LAST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      5
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
              "_r2"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"tasks_aggregate":',
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
              "tasks" AS "_t4"
            WHERE
              "_t4"."account_id" = $1
              AND ("_t4"."status" <> 'completed'::text)
          ) AS "_r5"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
