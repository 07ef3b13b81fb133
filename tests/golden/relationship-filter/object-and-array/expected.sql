SELECT
  concat(
    '{"data":',
    concat(
      '{"closed_payments":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"count":',
              to_json(count(*)),
              ',"sum":',
              concat(
                '{"amount":',
                coalesce(to_json(sum("_r7"."c0")), 'null'),
                '}'
              ),
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t6"."amount" AS "c0"
            FROM
              "payments" AS "_t6"
            WHERE
              "_t6"."account_id" = $1
              AND EXISTS (
                SELECT
                  1
                FROM
                  "loans" AS "_t8"
                WHERE
                  "_t8"."account_id" = $1
                  AND "_t8"."id" = "_t6"."loan_id"
                  AND ("_t8"."status" = 'closed'::text)
              )
          ) AS "_r7"
        GROUP BY
          ()
      ),
      ',"loans_with_reversals":',
      "_m3"."a0",
      ',"investors_in_servicing":',
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
                    '{"class":',
                    coalesce(to_json("_t9"."class"), 'null'),
                    ',"original_amount":',
                    coalesce(to_json("_t9"."original_amount"), 'null'),
                    ',"person":',
                    coalesce(
                      (
                        SELECT
                          concat('{"name":', to_json("_t11"."name"), '}')
                        FROM
                          "people" AS "_t11"
                        WHERE
                          "_t11"."account_id" = $1
                          AND "_t11"."id" = "_t9"."person_id"
                        LIMIT
                          1
                      ),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "_t9"."original_amount" AS "k0",
                  "_t9"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t9"."class",
                      "_t9"."original_amount",
                      "_t9"."person_id",
                      "_t9"."id"
                    FROM
                      "funding_sources" AS "_t9"
                    WHERE
                      "_t9"."account_id" = $1
                      AND (
                        EXISTS (
                          SELECT
                            1
                          FROM
                            "people" AS "_t12"
                          WHERE
                            "_t12"."account_id" = $1
                            AND "_t12"."id" = "_t9"."person_id"
                            AND ("_t12"."is_investor" = true)
                        )
                        AND EXISTS (
                          SELECT
                            1
                          FROM
                            "loans" AS "_t13"
                          WHERE
                            "_t13"."account_id" = $1
                            AND "_t13"."id" = "_t9"."loan_id"
                            AND ("_t13"."status" = 'servicing'::text)
                        )
                      )
                    ORDER BY
                      "_t9"."original_amount" DESC NULLS FIRST,
                      "_t9"."id" ASC NULLS LAST
                    LIMIT
                      3
                  ) AS "_t9"
              ) AS "_r10"
            ORDER BY
              "_r10"."k0" DESC NULLS FIRST,
              "_r10"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"loans_without_guarantor":',
      "_m3"."a1",
      '}'
    ),
    '}'
  ) AS "response"
FROM
  (
    SELECT
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                EXISTS (
                  SELECT
                    1
                  FROM
                    "payments" AS "_t4"
                  WHERE
                    "_t4"."account_id" = $1
                    AND "_t4"."loan_id" = "_t1"."id"
                    AND ("_t4"."date_reversed" IS NOT NULL)
                )
            )
          ),
          '}'
        ),
        '}'
      ) AS "a0",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                (
                  NOT EXISTS (
                    SELECT
                      1
                    FROM
                      "guarantees" AS "_t5"
                    WHERE
                      "_t5"."account_id" = $1
                      AND "_t5"."loan_id" = "_t1"."id"
                      AND true
                  )
                )
            )
          ),
          '}'
        ),
        '}'
      ) AS "a1"
    FROM
      "loans" AS "_t1"
    WHERE
      "_t1"."account_id" = $1
      AND (
        EXISTS (
          SELECT
            1
          FROM
            "payments" AS "_t4"
          WHERE
            "_t4"."account_id" = $1
            AND "_t4"."loan_id" = "_t1"."id"
            AND ("_t4"."date_reversed" IS NOT NULL)
        )
        OR (
          NOT EXISTS (
            SELECT
              1
            FROM
              "guarantees" AS "_t5"
            WHERE
              "_t5"."account_id" = $1
              AND "_t5"."loan_id" = "_t1"."id"
              AND true
          )
        )
      )
    GROUP BY
      ()
  ) AS "_m3"
