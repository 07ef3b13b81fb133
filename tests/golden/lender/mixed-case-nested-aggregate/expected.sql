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
                    '{"branchId":',
                    to_json("_t1"."branchId"),
                    ',"Seq":',
                    to_json("_t1"."Seq"),
                    ',"Body":',
                    to_json("_t1"."Body"),
                    '}'
                  ) AS "j",
                  "_t1"."createdAt" AS "k0",
                  "_t1"."branchId" AS "k1",
                  "_t1"."Seq" AS "k2"
                FROM
                  "LoanNotes" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
              "_r2"."k1" ASC NULLS LAST,
              "_r2"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"branches":',
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
                    ',"notes_aggregate":',
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
                            "LoanNotes" AS "_t6"
                          WHERE
                            "_t6"."account_id" = $1
                            AND "_t6"."branchId" = "_t3"."id"
                        ) AS "_r7"
                      GROUP BY
                        ()
                    ),
                    ',"notes":',
                    concat(
                      '[',
                      array_to_string(
                        ARRAY(
                          SELECT
                            "_r9"."j"
                          FROM
                            (
                              SELECT
                                concat('{"Seq":', to_json("_t8"."Seq"), '}') AS "j",
                                "_t8"."branchId" AS "k0",
                                "_t8"."Seq" AS "k1"
                              FROM
                                "LoanNotes" AS "_t8"
                              WHERE
                                "_t8"."account_id" = $1
                                AND "_t8"."branchId" = "_t3"."id"
                                AND ("_t8"."Body" ILIKE $2::text)
                            ) AS "_r9"
                          ORDER BY
                            "_r9"."k0" ASC NULLS LAST,
                            "_r9"."k1" ASC NULLS LAST
                        ),
                        ','
                      ),
                      ']'
                    ),
                    '}'
                  ) AS "j",
                  (
                    SELECT
                      count(*)
                    FROM
                      "LoanNotes" AS "_o5"
                    WHERE
                      "_o5"."account_id" = $1
                      AND "_o5"."branchId" = "_t3"."id"
                  ) AS "k0",
                  "_t3"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t3"."name",
                      "_t3"."id"
                    FROM
                      "lender_branches" AS "_t3"
                    WHERE
                      "_t3"."account_id" = $1
                    ORDER BY
                      (
                        SELECT
                          count(*)
                        FROM
                          "LoanNotes" AS "_o5"
                        WHERE
                          "_o5"."account_id" = $1
                          AND "_o5"."branchId" = "_t3"."id"
                      ) DESC NULLS FIRST,
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
    ),
    '}'
  ) AS "response"
