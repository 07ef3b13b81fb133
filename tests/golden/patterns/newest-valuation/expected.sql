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
                    ',"address_details":',
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
                                  '{"address":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"city":',
                                          coalesce(to_json("_t5"."city"), 'null'),
                                          ',"valuations":',
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
                                                        '{"value":',
                                                        coalesce(to_json("_t6"."value"), 'null'),
                                                        ',"valuation_type":',
                                                        coalesce(to_json("_t6"."valuation_type"), 'null'),
                                                        ',"report_date":',
                                                        coalesce(to_json("_t6"."report_date"), 'null'),
                                                        '}'
                                                      ) AS "j",
                                                      "_t6"."report_date" AS "k0",
                                                      "_t6"."id" AS "k1"
                                                    FROM
                                                      (
                                                        SELECT
                                                          "_t6"."value",
                                                          "_t6"."valuation_type",
                                                          "_t6"."report_date",
                                                          "_t6"."id"
                                                        FROM
                                                          "valuations" AS "_t6"
                                                        WHERE
                                                          "_t6"."account_id" = $1
                                                          AND "_t6"."address_id" = "_t5"."id"
                                                        ORDER BY
                                                          "_t6"."report_date" DESC NULLS FIRST,
                                                          "_t6"."id" ASC NULLS LAST
                                                        LIMIT
                                                          1
                                                      ) AS "_t6"
                                                  ) AS "_r7"
                                              ),
                                              ','
                                            ),
                                            ']'
                                          ),
                                          ',"insurances":',
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
                                                        '{"carrier":',
                                                        coalesce(to_json("_t8"."carrier"), 'null'),
                                                        ',"type":',
                                                        coalesce(to_json("_t8"."type"), 'null'),
                                                        ',"coverage_amount":',
                                                        coalesce(to_json("_t8"."coverage_amount"), 'null'),
                                                        ',"expiration":',
                                                        coalesce(to_json("_t8"."expiration"), 'null'),
                                                        '}'
                                                      ) AS "j",
                                                      "_t8"."expiration" AS "k0",
                                                      "_t8"."id" AS "k1"
                                                    FROM
                                                      "insurances" AS "_t8"
                                                    WHERE
                                                      "_t8"."account_id" = $1
                                                      AND "_t8"."address_id" = "_t5"."id"
                                                  ) AS "_r9"
                                                ORDER BY
                                                  "_r9"."k0" DESC NULLS FIRST,
                                                  "_r9"."k1" ASC NULLS LAST
                                              ),
                                              ','
                                            ),
                                            ']'
                                          ),
                                          '}'
                                        )
                                      FROM
                                        "addresses" AS "_t5"
                                      WHERE
                                        "_t5"."account_id" = $1
                                        AND "_t5"."id" = "_t3"."address_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t3"."id" AS "k0"
                              FROM
                                "address_details" AS "_t3"
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
