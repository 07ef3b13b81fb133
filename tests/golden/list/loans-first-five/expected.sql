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
                    '{"id":',
                    to_json("_t1"."id"),
                    ',"name":',
                    to_json("_t1"."name"),
                    ',"amount":',
                    coalesce(to_json("_t1"."amount"), 'null'),
                    ',"status":',
                    to_json("_t1"."status"),
                    ',"rate":',
                    coalesce(to_json("_t1"."rate"), 'null'),
                    ',"term":',
                    coalesce(to_json("_t1"."term"), 'null'),
                    ',"frequency":',
                    coalesce(to_json("_t1"."frequency"), 'null'),
                    ',"regular_payment":',
                    coalesce(to_json("_t1"."regular_payment"), 'null'),
                    ',"date_funded":',
                    coalesce(to_json("_t1"."date_funded"), 'null'),
                    ',"date_maturity":',
                    coalesce(to_json("_t1"."date_maturity"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."id" AS "k0"
                FROM
                  (
                    SELECT
                      "_t1"."id",
                      "_t1"."name",
                      "_t1"."amount",
                      "_t1"."status",
                      "_t1"."rate",
                      "_t1"."term",
                      "_t1"."frequency",
                      "_t1"."regular_payment",
                      "_t1"."date_funded",
                      "_t1"."date_maturity"
                    FROM
                      "loans" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      5
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
