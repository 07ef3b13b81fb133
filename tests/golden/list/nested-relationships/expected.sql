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
                    ',"borrows":',
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
                                  '{"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"name":',
                                          to_json("_t5"."name"),
                                          ',"email":',
                                          coalesce(to_json("_t5"."email"), 'null'),
                                          ',"entity_type":',
                                          to_json("_t5"."entity_type"),
                                          '}'
                                        )
                                      FROM
                                        "people" AS "_t5"
                                      WHERE
                                        "_t5"."account_id" = $1
                                        AND "_t5"."id" = "_t3"."person_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t3"."id" AS "k0"
                              FROM
                                "borrows" AS "_t3"
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
                    ',"guarantees":',
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
                                  '{"person":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat('{"name":', to_json("_t8"."name"), '}')
                                      FROM
                                        "people" AS "_t8"
                                      WHERE
                                        "_t8"."account_id" = $1
                                        AND "_t8"."id" = "_t6"."person_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t6"."id" AS "k0"
                              FROM
                                "guarantees" AS "_t6"
                              WHERE
                                "_t6"."account_id" = $1
                                AND "_t6"."loan_id" = "_t1"."id"
                            ) AS "_r7"
                          ORDER BY
                            "_r7"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"loan_documents":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r10"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"document":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"name":',
                                          to_json("_t11"."name"),
                                          ',"status":',
                                          to_json("_t11"."status"),
                                          ',"type":',
                                          coalesce(to_json("_t11"."type"), 'null'),
                                          ',"uploaded_date":',
                                          coalesce(to_json("_t11"."uploaded_date"), 'null'),
                                          '}'
                                        )
                                      FROM
                                        "documents" AS "_t11"
                                      WHERE
                                        "_t11"."account_id" = $1
                                        AND "_t11"."id" = "_t9"."document_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t9"."id" AS "k0"
                              FROM
                                (
                                  SELECT
                                    "_t9"."document_id",
                                    "_t9"."id"
                                  FROM
                                    "loan_documents" AS "_t9"
                                  WHERE
                                    "_t9"."account_id" = $1
                                    AND "_t9"."loan_id" = "_t1"."id"
                                  ORDER BY
                                    "_t9"."id" ASC NULLS LAST
                                  LIMIT
                                    2
                                ) AS "_t9"
                            ) AS "_r10"
                          ORDER BY
                            "_r10"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    ',"address_details":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r13"."j"
                          FROM
                            (
                              SELECT
                                concat(
                                  '{"address":',
                                  coalesce(
                                    (
                                      SELECT
                                        concat(
                                          '{"street1":',
                                          coalesce(to_json("_t14"."street1"), 'null'),
                                          ',"city":',
                                          coalesce(to_json("_t14"."city"), 'null'),
                                          ',"state":',
                                          coalesce(to_json("_t14"."state"), 'null'),
                                          ',"zipcode":',
                                          coalesce(to_json("_t14"."zipcode"), 'null'),
                                          '}'
                                        )
                                      FROM
                                        "addresses" AS "_t14"
                                      WHERE
                                        "_t14"."account_id" = $1
                                        AND "_t14"."id" = "_t12"."address_id"
                                      LIMIT
                                        1
                                    ),
                                    'null'
                                  ),
                                  '}'
                                ) AS "j",
                                "_t12"."id" AS "k0"
                              FROM
                                "address_details" AS "_t12"
                              WHERE
                                "_t12"."account_id" = $1
                                AND "_t12"."loan_id" = "_t1"."id"
                            ) AS "_r13"
                          ORDER BY
                            "_r13"."k0" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  (
                    SELECT
                      "_t1"."name",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t1"
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
