SELECT
  concat(
    '{"data":',
    concat(
      '{"valuations":',
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
                    '{"address_id":',
                    to_json("_t1"."address_id"),
                    ',"report_date":',
                    coalesce(to_json("_t1"."report_date"), 'null'),
                    ',"value":',
                    coalesce(to_json("_t1"."value"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."address_id" AS "k0",
                  "_t1"."report_date" AS "k1",
                  "_t1"."id" AS "k2"
                FROM
                  (
                    SELECT DISTINCT
                      ON ("_t1"."address_id") "_t1".*
                    FROM
                      "valuations" AS "_t1"
                    WHERE
                      "_t1"."account_id" = $1
                    ORDER BY
                      "_t1"."address_id" ASC NULLS LAST,
                      "_t1"."report_date" DESC NULLS FIRST,
                      "_t1"."id" ASC NULLS LAST
                    LIMIT
                      5
                  ) AS "_t1"
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
              "_r2"."k1" DESC NULLS FIRST,
              "_r2"."k2" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      '}'
    ),
    '}'
  ) AS "response"
