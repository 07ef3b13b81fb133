SELECT
  concat(
    '{"data":',
    concat(
      '{"notes_by_pk":',
      coalesce(
        (
          SELECT
            concat(
              '{"Body":',
              to_json("_t1"."Body"),
              ',"createdAt":',
              to_json("_t1"."createdAt"),
              ',"branch":',
              coalesce(
                (
                  SELECT
                    concat(
                      '{"name":',
                      to_json("_t2"."name"),
                      ',"budget":',
                      coalesce(to_json("_t2"."budget"), 'null'),
                      '}'
                    )
                  FROM
                    "lender_branches" AS "_t2"
                  WHERE
                    "_t2"."account_id" = $1
                    AND "_t2"."id" = "_t1"."branchId"
                  LIMIT
                    1
                ),
                'null'
              ),
              '}'
            )
          FROM
            "LoanNotes" AS "_t1"
          WHERE
            "_t1"."account_id" = $1
            AND "_t1"."branchId" = $2::bigint
            AND "_t1"."Seq" = $3::bigint
        ),
        'null'
      ),
      ',"missing":',
      coalesce(
        (
          SELECT
            concat('{"Body":', to_json("_t3"."Body"), '}')
          FROM
            "LoanNotes" AS "_t3"
          WHERE
            "_t3"."account_id" = $1
            AND "_t3"."branchId" = $4::bigint
            AND "_t3"."Seq" = $5::bigint
        ),
        'null'
      ),
      '}'
    ),
    '}'
  ) AS "response"
