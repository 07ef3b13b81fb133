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
                    ',"schedules":',
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
                                  '{"number":',
                                  to_json("_t3"."number"),
                                  ',"due":',
                                  to_json("_t3"."due"),
                                  ',"payment":',
                                  to_json("_t3"."payment"),
                                  '}'
                                ) AS "j",
                                "_t3"."due" AS "k0",
                                "_t3"."id" AS "k1"
                              FROM
                                (
                                  SELECT
                                    "_t3"."number",
                                    "_t3"."due",
                                    "_t3"."payment",
                                    "_t3"."id"
                                  FROM
                                    "schedules" AS "_t3"
                                  WHERE
                                    "_t3"."account_id" = $1
                                    AND "_t3"."loan_id" = "_t1"."id"
                                  ORDER BY
                                    "_t3"."due" ASC NULLS LAST,
                                    "_t3"."id" ASC NULLS LAST
                                  LIMIT
                                    3
                                  OFFSET
                                    2
                                ) AS "_t3"
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" ASC NULLS LAST,
                            "_r4"."k1" ASC NULLS LAST
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
                      AND ("_t1"."status" = 'servicing'::text)
                    ORDER BY
                      "_t1"."amount" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      2
                    OFFSET
                      1
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
