import { sql as customFieldValuesChecked } from './0063_custom_field_values_checked.js';
import { between, edited } from './textEdits.js';

/**
 * The custom-field check of every write path (0063) decides as `POST`/`PATCH /api/loan` decide
 * (session 37), in the three places where it did not:
 *
 * - **An account with no product.** REST then knows no custom field at all (`loadDefaultProduct`
 *   gives none: fields belong to products, there are no account-level ones), and refuses every
 *   custom key, "unknown field: not a field of the default product". 0063 returned early for such
 *   a loan, so over GraphQL its `custom_fields` took anything. Now its changed keys are checked
 *   against no fields: removing a key is allowed (nothing is required), any new value refused. A
 *   write that leaves the document empty returns at once (nothing can be wrong with it).
 * - **Text is stored trimmed.** REST stores a `text` field's value with `String.prototype.trim()`
 *   (`normalizeValue`), so `"  Kim "` is stored `"Kim"`; 0063 kept GraphQL's padding. The trigger
 *   now trims the same characters — JavaScript's white space and line terminators, `JS_WHITE_SPACE`
 *   below — after checking the length of the value as given (REST checks before it trims). A
 *   decimal string is trimmed with the same set: 0063 trimmed only ASCII white space, and refused
 *   `"\u00a061.5"`, which REST takes as 61.5.
 * - **Keys in another case.** REST matches a body's keys without regard to case (and spaces as
 *   underscores) and stores the product's key, which is always lower case (`fieldKey`). The stored
 *   document is what GraphQL reads and filters with case-sensitive jsonb operators, so a write of
 *   `LTV` is refused rather than renamed — one spelling in the data, and a client's next
 *   `_has_key: "LTV"` does not silently miss — with REST's words and the key to write:
 *   `custom_fields.LTV: unknown field: not a field of the default product (its key is ltv)`.
 *
 * Nothing is checked when the migration runs: stored values keep as they are until a write
 * changes them (0063's rule).
 */
export const name = '0064_custom_field_values_as_rest';

/**
 * The characters `String.prototype.trim()` removes (ECMAScript WhiteSpace and LineTerminator;
 * U+0009–U+000D, space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000,
 * U+FEFF), as a PostgreSQL escape string for `btrim`.
 */
const JS_WHITE_SPACE = String.raw`E'\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff'`;

const checked = edited('0064', between('0064', customFieldValuesChecked, 'CREATE FUNCTION loanql_custom_fields_checked()', '\nEND $$;'), [
  ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
  ['  problems text[] := \'{}\';', `  problems text[] := '{}';\n  white_space CONSTANT text := ${JS_WHITE_SPACE};\n  product_key text;`],
  [
    '    IF field_product IS NULL THEN RETURN NEW; END IF;',
    // No product: no field is declared, so every changed key is unknown (REST's answer); an empty
    // document has no key to refuse and nothing required to miss.
    "    IF field_product IS NULL AND NEW.custom_fields = '{}'::jsonb THEN RETURN NEW; END IF;",
  ],
  [
    "      problems := problems || format('custom_fields.%s: unknown field: not a field of the default product', entry.key);",
    `      -- REST's key for it (\`fieldKey\`: trimmed, white space as _, lower case), when the product has one.
      SELECT f.key INTO product_key FROM product_fields f
       WHERE f.account_id = NEW.account_id AND f.product_id = field_product
         AND f.key = lower(regexp_replace(btrim(entry.key, white_space), '[' || white_space || ']+', '_', 'g'));
      problems := problems || (format('custom_fields.%s: unknown field: not a field of the default product', entry.key)
        || CASE WHEN product_key IS NOT NULL THEN format(' (its key is %s)', product_key) ELSE '' END);`,
  ],
  ["          text_value := btrim(value #>> '{}', E' \\t\\n\\r\\f\\v');", "          text_value := btrim(value #>> '{}', white_space);"],
  [
    `          expected := 'a string of at most 10000 characters, without NUL (\\u0000)';
        END IF;`,
    `          expected := 'a string of at most 10000 characters, without NUL (\\u0000)';
        ELSE
          -- Stored as REST stores it: trimmed (the length was checked as given, as REST checks it).
          text_value := btrim(value #>> '{}', white_space);
          IF text_value <> value #>> '{}' THEN
            NEW.custom_fields := jsonb_set(NEW.custom_fields, ARRAY[entry.key], to_jsonb(text_value));
          END IF;
        END IF;`,
  ],
]);

export const sql = /* sql */ `${checked}`;
