SELECT
  concat(
    '{"data":',
    concat(
      '{"loans_by_pk":',
      coalesce(
        (
          SELECT
            concat(
              '{"id":',
              to_json("_t1"."id"),
              ',"name":',
              to_json("_t1"."name"),
              '}'
            )
          FROM
            "loans" AS "_t1"
          WHERE
            "_t1"."account_id" = $1
            AND "_t1"."id" = $2::uuid
        ),
        'null'
      ),
      '}'
    ),
    '}'
  ) AS "response"
