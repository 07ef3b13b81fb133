SELECT
  concat(
    '{"data":',
    concat(
      '{"regex":',
      "_m3"."a0",
      ',"iregex":',
      "_m3"."a1",
      ',"nregex":',
      "_m3"."a2",
      ',"niregex":',
      "_m3"."a3",
      ',"similar":',
      "_m3"."a4",
      ',"nsimilar":',
      "_m3"."a5",
      ',"all":',
      "_m3"."a6",
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
                ("_t1"."type" ~ $1::text)
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
                ("_t1"."type" ~* $2::text)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a1",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."type" !~ $3::text)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a2",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."type" !~* $2::text)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a3",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."method" SIMILAR TO $4::text)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a4",
      concat(
        '{"aggregate":',
        concat(
          '{"count":',
          to_json(
            count(*) FILTER (
              WHERE
                ("_t1"."method" NOT SIMILAR TO $4::text)
            )
          ),
          '}'
        ),
        '}'
      ) AS "a5",
      concat(
        '{"aggregate":',
        concat('{"count":', to_json(count(*)), '}'),
        '}'
      ) AS "a6"
    FROM
      "payments" AS "_t1"
    WHERE
      "_t1"."account_id" = $5
    GROUP BY
      ()
  ) AS "_m3"
