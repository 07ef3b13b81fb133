SELECT
  concat(
    '{"data":',
    concat(
      '{"nulls_first":',
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
                    ',"regular_payment":',
                    coalesce(to_json("_t1"."regular_payment"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."regular_payment" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."name",
                      "_t1"."regular_payment",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."regular_payment" ASC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS FIRST,
              "_r2"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"nulls_last":',
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
                    '{"name":',
                    to_json("_t3"."name"),
                    ',"status":',
                    to_json("_t3"."status"),
                    ',"regular_payment":',
                    coalesce(to_json("_t3"."regular_payment"), 'null'),
                    '}'
                  ) AS "j",
                  "_t3"."status" AS "k0",
                  "_t3"."regular_payment" AS "k1",
                  "_t3"."id" AS "k2"
                FROM
                  (
                    SELECT
                      "_t3"."name",
                      "_t3"."status",
                      "_t3"."regular_payment",
                      "_t3"."id"
                    FROM
                      "loans" AS "_t3"
                    WHERE
                      "_t3"."account_id" = $1
                    ORDER BY
                      "_t3"."status" DESC NULLS FIRST,
                      "_t3"."regular_payment" DESC NULLS LAST,
                      "_t3"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t3"
              ) AS "_r4"
            ORDER BY
              "_r4"."k0" DESC NULLS FIRST,
              "_r4"."k1" DESC NULLS LAST,
              "_r4"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"by_investor":',
      concat(
        '[',
        array_to_string(
          ARRAY(
            SELECT
              "_r6"."j"
            FROM
              (
                SELECT
                  concat(
                    '{"person":',
                    coalesce(
                      (
                        SELECT
                          concat('{"name":', to_json("_t9"."name"), '}')
                        FROM
                          "people" AS "_t9"
                        WHERE
                          "_t9"."account_id" = $1
                          AND "_t9"."id" = "_t5"."person_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    ',"loan":',
                    coalesce(
                      (
                        SELECT
                          concat(
                            '{"amount":',
                            coalesce(to_json("_t10"."amount"), 'null'),
                            '}'
                          )
                        FROM
                          "loans" AS "_t10"
                        WHERE
                          "_t10"."account_id" = $1
                          AND "_t10"."id" = "_t5"."loan_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      "_o7"."name"
                    FROM
                      "people" AS "_o7"
                    WHERE
                      "_o7"."account_id" = $1
                      AND "_o7"."id" = "_t5"."person_id"
                    LIMIT
                      1
                  ) AS "k0",
                  (
                    SELECT
                      "_o8"."amount"
                    FROM
                      "loans" AS "_o8"
                    WHERE
                      "_o8"."account_id" = $1
                      AND "_o8"."id" = "_t5"."loan_id"
                    LIMIT
                      1
                  ) AS "k1",
                  "_t5"."id" AS "k2"
                FROM
                  (
                    SELECT
                      "_t5"."person_id",
                      "_t5"."loan_id",
                      "_t5"."id"
                    FROM
                      "funding_sources" AS "_t5"
                    WHERE
                      "_t5"."account_id" = $1
                    ORDER BY
                      (
                        SELECT
                          "_o7"."name"
                        FROM
                          "people" AS "_o7"
                        WHERE
                          "_o7"."account_id" = $1
                          AND "_o7"."id" = "_t5"."person_id"
                        LIMIT
                          1
                      ) ASC NULLS LAST,
                      (
                        SELECT
                          "_o8"."amount"
                        FROM
                          "loans" AS "_o8"
                        WHERE
                          "_o8"."account_id" = $1
                          AND "_o8"."id" = "_t5"."loan_id"
                        LIMIT
                          1
                      ) ASC NULLS LAST,
                      "_t5"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t5"
              ) AS "_r6"
            ORDER BY
              "_r6"."k0" ASC NULLS LAST,
              "_r6"."k1" ASC NULLS LAST,
              "_r6"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
