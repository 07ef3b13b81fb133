/**
 * A loan's custom fields obey its product's field definitions on every write path (session 36).
 *
 * `POST`/`PATCH /api/loan` and the dashboard check each custom field against the product
 * (`app/fieldValues.ts`), but the shipped metadata lets admin and servicer keys update
 * `loans.custom_fields` over GraphQL, and `_set`, `_append`, `_prepend`, `_delete_key` (and an
 * `insert_loans` a lender's metadata allows) stored anything: `ltv: "high"` in a percent field,
 * an option a select field does not have, unknown keys, a required field removed, a number of 300
 * digits — which REST and the dashboard then served. As the metadata declares and the engine
 * compiles, PostgreSQL enforces: a BEFORE trigger checks the keys a write changes, with the rules
 * and the words of `fieldValues.ts` (`describeRule`), so GraphQL, REST, the dashboard, the CLI and
 * a lender's own SQL meet the same rule.
 *
 * - Only the keys whose value the write changes are checked, against the fields of the loan's
 *   product (`loans.product_id`; without one, the account's default product, which REST uses). A
 *   key of a field removed from the product keeps its value while a write leaves it alone (README
 *   "Custom fields"); it may be removed, not set.
 * - A decimal (`number`, `currency`, `percent`) is a JSON number — or a decimal string, stored as
 *   the number with the digits written, as REST stores it — with the type's decimal places and
 *   digits before the point; an `integer` a whole number within ±(2^53 − 1); a `date` a real
 *   `YYYY-MM-DD`; a `select` one of its options; a `text` at most 10,000 characters; a `boolean`
 *   true or false. JSON `null` clears an optional field (the key is removed, REST's meaning of
 *   null); a required field may not be null or removed. An unknown key is refused.
 * - On INSERT, fields the loan does not give get the product's default (as `POST /api/loan` gives
 *   them), and a required field without one is refused.
 * - Every offending key is named at once, in one `invalid_parameter_value` (22023) error on column
 *   `custom_fields`: `custom_fields.ltv: expected a number (or a decimal string), with at most 6
 *   decimal places, and at most 6 digits before the point, got "high"`. The engine's write-error
 *   classification answers it as `validation-failed`; REST's own check runs first and never
 *   reaches it.
 * - A value that is not an object is left to `loans_custom_fields_object` (0005, a
 *   `check-violation`), and an account with no product at all (none is made until a field or a
 *   servicing setting is) declares no fields, so its loans are not checked.
 * - The UPDATE trigger fires only when the statement sets `custom_fields` and the value differs
 *   (`WHEN`), so the ledger's replay, the fee job and every other write of `loans` do not call it.
 *   A trusted bulk load of stored history (the seeder's `broker` values, a field the demo product
 *   does not have) sets `loanql.custom_fields_unchecked` to `on` for its transaction.
 *   Measured on PGlite with 5,000 loans of the demo product (median of 5): renaming them all,
 *   83 ms without the triggers and 100 ms with (noise: not called); setting `custom_fields` to
 *   itself 80 / 100 ms (the `WHEN` is false); inserting them (1 in 16 with fields) 650 / 789 ms
 *   (one lookup of the product a row); changing every loan's `loan_officer` 278 / 734 ms (about
 *   90 µs a changed row).
 *
 * Nothing is checked when the migration runs: loans that already hold values the rules refuse
 * keep them until a write changes those keys.
 */
export const name = '0063_custom_field_values_checked';

export const sql = /* sql */ `
CREATE FUNCTION loanql_custom_fields_checked() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  field_product uuid := NEW.product_id;
  stored jsonb := CASE WHEN TG_OP = 'UPDATE' THEN OLD.custom_fields ELSE '{}'::jsonb END;
  entry record;
  value jsonb;
  number numeric;
  text_value text;
  places integer;
  digits integer;
  expected text;
  parts text[];
  problems text[] := '{}';
BEGIN
  IF current_setting('loanql.custom_fields_unchecked', true) = 'on' OR jsonb_typeof(NEW.custom_fields) IS DISTINCT FROM 'object' THEN
    RETURN NEW;
  END IF;
  IF field_product IS NULL THEN
    SELECT p.id INTO field_product FROM products p WHERE p.account_id = NEW.account_id AND p.is_default;
    IF field_product IS NULL THEN RETURN NEW; END IF;
  END IF;

  IF TG_OP = 'INSERT' THEN
    FOR entry IN
      SELECT f.key, f.default_value FROM product_fields f
       WHERE f.account_id = NEW.account_id AND f.product_id = field_product AND NOT NEW.custom_fields ? f.key
         AND (f.required OR f.default_value IS NOT NULL)
       ORDER BY f.key
    LOOP
      IF entry.default_value IS NOT NULL AND jsonb_typeof(entry.default_value) <> 'null' THEN
        NEW.custom_fields := NEW.custom_fields || jsonb_build_object(entry.key, entry.default_value);
      ELSE
        problems := problems || format('custom_fields.%s: is a required field of the product and was not given', entry.key);
      END IF;
    END LOOP;
  END IF;

  FOR entry IN
    SELECT k.key, f.key IS NOT NULL AS known, f.type, f.options, f.required
      FROM (SELECT jsonb_object_keys(NEW.custom_fields) UNION SELECT jsonb_object_keys(stored)) AS k (key)
      LEFT JOIN product_fields f ON f.account_id = NEW.account_id AND f.product_id = field_product AND f.key = k.key
     WHERE (NEW.custom_fields -> k.key) IS DISTINCT FROM (stored -> k.key)
     ORDER BY k.key
  LOOP
    value := NEW.custom_fields -> entry.key;
    IF value IS NULL THEN
      -- The key was removed: an optional field (or one the product no longer has) may be.
      IF entry.required THEN
        problems := problems || format('custom_fields.%s: is a required field of the product and may not be removed', entry.key);
      END IF;
      CONTINUE;
    END IF;
    IF NOT entry.known THEN
      problems := problems || format('custom_fields.%s: unknown field: not a field of the default product', entry.key);
      CONTINUE;
    END IF;
    IF jsonb_typeof(value) = 'null' THEN
      IF entry.required THEN
        problems := problems || format('custom_fields.%s: is a required field of the product and may not be null', entry.key);
      ELSE
        NEW.custom_fields := NEW.custom_fields - entry.key;
      END IF;
      CONTINUE;
    END IF;

    expected := NULL;
    CASE entry.type
      WHEN 'number', 'currency', 'percent' THEN
        places := CASE entry.type WHEN 'number' THEN 10 WHEN 'currency' THEN 2 ELSE 6 END;
        digits := CASE entry.type WHEN 'number' THEN 15 WHEN 'currency' THEN 13 ELSE 6 END;
        number := NULL;
        IF jsonb_typeof(value) = 'number' THEN
          number := (value #>> '{}')::numeric;
        ELSIF jsonb_typeof(value) = 'string' THEN
          text_value := btrim(value #>> '{}', E' \\t\\n\\r\\f\\v');
          IF text_value ~ '^-?[0-9]+(\\.[0-9]+)?$' THEN number := text_value::numeric; END IF;
        END IF;
        IF number IS NULL OR min_scale(number) > places OR trunc(abs(number)) >= 10::numeric ^ digits THEN
          expected := format('a number (or a decimal string), with at most %s decimal places, and at most %s digits before the point', places, digits);
        ELSIF jsonb_typeof(value) = 'string' THEN
          -- Stored as REST stores it: the number, with the digits written.
          NEW.custom_fields := jsonb_set(NEW.custom_fields, ARRAY[entry.key], to_jsonb(number));
        END IF;
      WHEN 'integer' THEN
        IF jsonb_typeof(value) <> 'number' OR (value #>> '{}')::numeric <> trunc((value #>> '{}')::numeric)
           OR abs((value #>> '{}')::numeric) > 9007199254740991 THEN
          expected := 'a whole number';
        END IF;
      WHEN 'date' THEN
        text_value := CASE WHEN jsonb_typeof(value) = 'string' THEN value #>> '{}' END;
        IF text_value IS NULL OR text_value !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN
          expected := 'a calendar date written YYYY-MM-DD';
        ELSE
          parts := string_to_array(text_value, '-');
          -- Nested, not one OR: PostgreSQL does not promise to test an OR's operands in order, and
          -- make_date refuses the year 0 and a month 13 with an error of its own.
          IF parts[1]::integer < 1 OR parts[2]::integer NOT BETWEEN 1 AND 12 OR parts[3]::integer < 1 THEN
            expected := 'a calendar date written YYYY-MM-DD';
          ELSIF parts[3]::integer > extract(day FROM make_date(parts[1]::integer, parts[2]::integer, 1) + interval '1 month - 1 day') THEN
            expected := 'a calendar date written YYYY-MM-DD';
          END IF;
        END IF;
      WHEN 'boolean' THEN
        IF jsonb_typeof(value) <> 'boolean' THEN expected := 'true or false'; END IF;
      WHEN 'select' THEN
        IF jsonb_typeof(value) <> 'string' OR NOT coalesce(entry.options, '[]'::jsonb) @> jsonb_build_array(value) THEN
          expected := 'one of ' || coalesce((SELECT string_agg(to_json(o.option)::text, ', ' ORDER BY o.n)
                                              FROM jsonb_array_elements_text(entry.options) WITH ORDINALITY AS o (option, n)), '');
        END IF;
      ELSE -- text
        IF jsonb_typeof(value) <> 'string' OR char_length(value #>> '{}') > 10000 THEN
          expected := 'a string of at most 10000 characters, without NUL (\\u0000)';
        END IF;
    END CASE;
    IF expected IS NOT NULL THEN
      problems := problems || format('custom_fields.%s: expected %s, got %s', entry.key, expected,
        CASE jsonb_typeof(value) WHEN 'array' THEN 'a list' WHEN 'object' THEN 'an object'
          ELSE CASE WHEN length(value::text) > 60 THEN left(value::text, 57) || '...' ELSE value::text END END);
    END IF;
  END LOOP;

  IF cardinality(problems) > 0 THEN
    RAISE EXCEPTION '%', array_to_string(problems, '; ')
      USING ERRCODE = 'invalid_parameter_value', TABLE = 'loans', COLUMN = 'custom_fields';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER loans_custom_fields_inserted BEFORE INSERT ON loans
  FOR EACH ROW EXECUTE FUNCTION loanql_custom_fields_checked();
CREATE TRIGGER loans_custom_fields_updated BEFORE UPDATE OF custom_fields ON loans
  FOR EACH ROW WHEN (OLD.custom_fields IS DISTINCT FROM NEW.custom_fields) EXECUTE FUNCTION loanql_custom_fields_checked();
`;
