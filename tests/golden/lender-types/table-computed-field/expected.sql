SELECT
  concat(
    '{"data":',
    concat(
      '{"notes":',
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
                    ',"others":',
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
                                  '{"id":',
                                  to_json("_t3"."id"),
                                  ',"title":',
                                  to_json("_t3"."title"),
                                  ',"tags":',
                                  coalesce(to_json("_t3"."tags"), 'null'),
                                  '}'
                                ) AS "j",
                                "_t3"."title" AS "k0",
                                "_t3"."id" AS "k1"
                              FROM
                                (
                                  SELECT
                                    "_t3"."id",
                                    "_t3"."title",
                                    "_t3"."tags"
                                  FROM
                                    "lender_types"."note_others" (
                                      "_t1"."account_id",
                                      "_t1"."id",
                                      "min_score" => $1::integer
                                    ) AS "_t3"
                                  WHERE
                                    "_t3"."account_id" = $2
                                    AND ("_t3"."tags" IS NOT NULL)
                                  ORDER BY
                                    "_t3"."title" DESC NULLS FIRST,
                                    "_t3"."id" ASC NULLS LAST
                                  LIMIT
                                    2
                                ) AS "_t3"
                            ) AS "_r4"
                          ORDER BY
                            "_r4"."k0" DESC NULLS FIRST,
                            "_r4"."k1" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  "lender_types"."notes" AS "_t1"
                WHERE
                  "_t1"."account_id" = $2
                  AND ("_t1"."id" <= $3::bigint)
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
