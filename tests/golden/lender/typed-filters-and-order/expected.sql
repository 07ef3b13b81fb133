SELECT
  concat(
    '{"data":',
    concat(
      '{"branches":',
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
                    ',"region":',
                    coalesce(to_json("_t1"."region"), 'null'),
                    ',"opened_at":',
                    coalesce(to_json("_t1"."opened_at"), 'null'),
                    ',"score":',
                    coalesce(to_json("_t1"."score"), 'null'),
                    ',"budget":',
                    coalesce(to_json("_t1"."budget"), 'null'),
                    '}'
                  ) AS "j",
                  "_t1"."opened_at" AS "k0",
                  "_t1"."id" AS "k1"
                FROM
                  "lender_branches" AS "_t1"
                WHERE
                  "_t1"."account_id" = $1
                  AND (
                    ("_t1"."region" = $2::citext)
                    AND (
                      ("_t1"."budget" > $3::bigint)
                      OR ("_t1"."score" IS NULL)
                    )
                  )
              ) AS "_r2"
            ORDER BY
              "_r2"."k0" ASC NULLS LAST,
              "_r2"."k1" ASC NULLS LAST
          ),
          ','
        ),
        ']'
      ),
      ',"branches_aggregate":',
      (
        SELECT
          concat(
            '{"aggregate":',
            concat(
              '{"count":',
              to_json(count(*)),
              ',"sum":',
              concat(
                '{"budget":',
                coalesce(to_json(sum("_r4"."c0")), 'null'),
                ',"score":',
                coalesce(to_json(sum("_r4"."c1")), 'null'),
                '}'
              ),
              ',"max":',
              concat(
                '{"opened_at":',
                coalesce(to_json(max("_r4"."c2")), 'null'),
                ',"region":',
                coalesce(to_json(max("_r4"."c3")), 'null'),
                '}'
              ),
              '}'
            ),
            '}'
          )
        FROM
          (
            SELECT
              "_t3"."budget" AS "c0",
              "_t3"."score" AS "c1",
              "_t3"."opened_at" AS "c2",
              "_t3"."region" AS "c3"
            FROM
              "lender_branches" AS "_t3"
            WHERE
              "_t3"."account_id" = $1
          ) AS "_r4"
        GROUP BY
          ()
      ),
      '}'
    ),
    '}'
  ) AS "response"
