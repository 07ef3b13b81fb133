/**
 * Large responses leave PostgreSQL in parts.
 *
 * A response read as one value exists in the server at once as node-postgres's message buffer
 * and a JavaScript string of its full size. V8 gives every string over 128 KiB its own pages,
 * which only a full collection frees, so under load large responses pile up until one runs
 * (bench/README.md: 100 nested loans, 1.4 MB each, took the server past 250 MB). In parts, each
 * piece is an ordinary short-lived string that is written to the socket and dropped.
 */

/** Bytes per part (each cut moves forward by up to 3 bytes to fall between characters). */
export const PART_BYTES = 32_768;

/** A response longer than this (in UTF-16 code units) makes its operation run in parts from then on. */
export const PARTS_FROM_LENGTH = 65_536;

/** The byte offset `at`, moved forward to the start of a UTF-8 character (or to the end `n`). */
function characterStart(at: string): string {
  const startsCharacter = (offset: string) => `get_byte("r"."b", ${offset}) & 192 <> 128`;
  return `CASE WHEN ${at} >= "r"."n" THEN "r"."n"
    WHEN ${startsCharacter(at)} THEN ${at}
    WHEN ${at} + 1 >= "r"."n" THEN "r"."n" WHEN ${startsCharacter(`${at} + 1`)} THEN ${at} + 1
    WHEN ${at} + 2 >= "r"."n" THEN "r"."n" WHEN ${startsCharacter(`${at} + 2`)} THEN ${at} + 2
    ELSE least(${at} + 3, "r"."n") END`;
}

/**
 * Wraps a statement that answers one text column `response` so that it answers the same text as
 * rows of one column `part`, in order: the text's UTF-8 bytes cut every `PART_BYTES`, each cut
 * moved forward to the next character boundary (so a part is `PART_BYTES` ± 3 bytes; a last
 * cut moved to the very end leaves no empty part). No rows when the response is NULL. The response is computed once
 * (`OFFSET 0` keeps the subquery from being inlined into each part).
 */
export function inParts(statement: string): string {
  return `SELECT convert_from(substring("r"."b" FROM "c"."s" + 1 FOR "c"."e" - "c"."s"), 'UTF8') AS "part"
FROM (SELECT "x"."b", octet_length("x"."b") AS "n" FROM (SELECT convert_to((${statement}), 'UTF8') AS "b" OFFSET 0) AS "x") AS "r"
CROSS JOIN LATERAL generate_series(0, "r"."n" - 1, ${PART_BYTES}) AS "g" ("at")
CROSS JOIN LATERAL (SELECT ${characterStart('"g"."at"')} AS "s", ${characterStart(`("g"."at" + ${PART_BYTES})`)} AS "e") AS "c"
WHERE "c"."e" > "c"."s"
ORDER BY "g"."at"`;
}
