SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"count":',
              to_json(count(*)),
              ',"statuses":',
              to_json(count(DISTINCT "_r2"."c0")),
              ',"funded":',
              to_json(count("_r2"."c1")),
              ',"frequencies":',
              to_json(count(DISTINCT "_r2"."c2")),
              ',"pairs":',
              to_json(
                count(DISTINCT ROW ("_r2"."c0", "_r2"."c2")) FILTER (
                  WHERE
                    "_r2"."c0" IS NOT NULL
                    AND "_r2"."c2" IS NOT NULL
                )
              ),
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t1"."status" AS "c0",
              "_t1"."date_funded" AS "c1",
              "_t1"."frequency" AS "c2"
            FROM
              "loans" AS "_t1"
            WHERE
              "_t1"."account_id" = $1
          ) AS "_r2"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
