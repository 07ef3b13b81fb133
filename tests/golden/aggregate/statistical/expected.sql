SELECT
  concat(
    '{"data":',
    concat(
      '{"payments_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"stddev":',
              concat(
                '{"amount":',
                coalesce(to_json(stddev("_r2"."c0")), 'null'),
                '}'
              ),
              ',"stddev_samp":',
              concat(
                '{"amount":',
                coalesce(to_json(stddev_samp("_r2"."c0")), 'null'),
                '}'
              ),
              ',"stddev_pop":',
              concat(
                '{"amount":',
                coalesce(to_json(stddev_pop("_r2"."c0")), 'null'),
                '}'
              ),
              ',"variance":',
              concat(
                '{"amount":',
                coalesce(to_json(variance("_r2"."c0")), 'null'),
                '}'
              ),
              ',"var_samp":',
              concat(
                '{"amount":',
                coalesce(to_json(var_samp("_r2"."c0")), 'null'),
                '}'
              ),
              ',"var_pop":',
              concat(
                '{"amount":',
                coalesce(to_json(var_pop("_r2"."c0")), 'null'),
                '}'
              ),
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t1"."amount" AS "c0"
            FROM
              "payments" AS "_t1"
            WHERE
              "_t1"."account_id" = $1
              AND ("_t1"."date_reversed" IS NULL)
          ) AS "_r2"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
