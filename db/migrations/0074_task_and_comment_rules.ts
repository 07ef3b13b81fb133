/**
 * Rules on a task and a comment that every writer meets (a collections clerk's audit, session 39).
 *
 * The dashboard's task and comment forms refused a blank task name, a blank comment and a due day
 * outside the years 1900–2999 (a slip of the year: 0026 for 2026 left the task overdue for ever,
 * 9999 never due), but GraphQL (`insert_tasks_one`, `insert_tasks`, `update_tasks…`,
 * `insert_comments_one`, a nested insert) took them all, and the clerk's loan page and overview
 * then showed an unnamed task (its button read "Complete “”"), an empty comment, or a task overdue
 * since the year 26. Now, on every path:
 *
 * - a task's `name` is not blank and at most 500 characters, its `status` not blank, its
 *   `date_due` (when given) in the years 1900–2999 — the dashboard form's rules and words;
 * - a comment's `text` is not blank and at most 10,000 characters.
 *
 * A BEFORE trigger raising `check_violation` with the rule's sentence and the column, which the
 * engine answers as a 400 naming the field (engine/execute/writeErrors.ts), as 0050 does for a
 * payment. A value is checked when it is written — an insert, or an update that changes it — so a
 * row stored before this migration does not fail it, and a task named blank before can still be
 * completed.
 */
export const name = '0074_task_and_comment_rules';

export const sql = /* sql */ `
CREATE FUNCTION loanql_task_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.name IS DISTINCT FROM OLD.name THEN
    IF btrim(NEW.name, E' \\t\\r\\n') = '' THEN
      RAISE EXCEPTION 'give the task a name (it is blank)'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'tasks_name_given', TABLE = 'tasks', COLUMN = 'name';
    END IF;
    IF char_length(NEW.name) > 500 THEN
      RAISE EXCEPTION 'a task''s name is at most 500 characters, not %', char_length(NEW.name)
        USING ERRCODE = 'check_violation', CONSTRAINT = 'tasks_name_given', TABLE = 'tasks', COLUMN = 'name';
    END IF;
  END IF;
  IF (TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status) AND btrim(NEW.status, E' \\t\\r\\n') = '' THEN
    RAISE EXCEPTION 'a task''s status is not blank (open, completed, …)'
      USING ERRCODE = 'check_violation', CONSTRAINT = 'tasks_status_given', TABLE = 'tasks', COLUMN = 'status';
  END IF;
  IF (TG_OP = 'INSERT' OR NEW.date_due IS DISTINCT FROM OLD.date_due)
     AND (NEW.date_due < DATE '1900-01-01' OR NEW.date_due > DATE '2999-12-31') THEN
    RAISE EXCEPTION 'a task is due in the years 1900–2999, not %', NEW.date_due
      USING ERRCODE = 'check_violation', CONSTRAINT = 'tasks_due_in_range', TABLE = 'tasks', COLUMN = 'date_due';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER tasks_check_rules BEFORE INSERT OR UPDATE OF name, status, date_due ON tasks
  FOR EACH ROW EXECUTE FUNCTION loanql_task_rules();

CREATE FUNCTION loanql_comment_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.text IS DISTINCT FROM OLD.text THEN
    IF btrim(NEW.text, E' \\t\\r\\n') = '' THEN
      RAISE EXCEPTION 'write something first (the comment is blank)'
        USING ERRCODE = 'check_violation', CONSTRAINT = 'comments_text_given', TABLE = 'comments', COLUMN = 'text';
    END IF;
    IF char_length(NEW.text) > 10000 THEN
      RAISE EXCEPTION 'a comment is at most 10,000 characters, not %', char_length(NEW.text)
        USING ERRCODE = 'check_violation', CONSTRAINT = 'comments_text_given', TABLE = 'comments', COLUMN = 'text';
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER comments_check_rules BEFORE INSERT OR UPDATE OF text ON comments
  FOR EACH ROW EXECUTE FUNCTION loanql_comment_rules();
`;
