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
                    '{"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    ',"custom_fields":',
                    to_json("_t1"."custom_fields"),
                    ',"officer":',
                    coalesce(
                      to_json(("_t1"."custom_fields" #> $1::text[])),
                      'null'
                    ),
                    ',"byVariable":',
                    coalesce(
                      to_json(("_t1"."custom_fields" #> $2::text[])),
                      'null'
                    ),
                    ',"missing":',
                    coalesce(
                      to_json(("_t1"."custom_fields" #> $3::text[])),
                      'null'
                    ),
                    '}'
                  ) AS "j",
                  "_t1"."amount" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  (
                    SELECT
                      "_t1"."amount",
                      "_t1"."custom_fields",
                      "_t1"."id"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $4
                      AND ("_t1"."custom_fields" ? $5::text)
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
