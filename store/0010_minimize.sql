-- `flagtune minimize`: its trials are stored as trials of the sweep with role 'minimize'.
-- Only the role CHECK constraint widens, so the table is not rebuilt (a rebuild would have to
-- drop and re-create every view that reads trials, and copy every column other migrations
-- add): sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes", gives
-- this simpler procedure for a change that leaves every stored row valid (removing or
-- loosening a CHECK): edit the table's text in sqlite_schema under writable_schema, then
-- bump the schema cookie so every connection re-reads the schema. store.c runs this inside
-- the migration's transaction; RESET makes this connection re-read it at once.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(sql, '''rerun'', ''confirm'')', '''rerun'', ''confirm'', ''minimize'')')
WHERE type = 'table' AND name = 'trials';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
-- Any DDL bumps the schema cookie (other connections then re-read the schema).
CREATE TABLE minimize_schema_bump (x);
DROP TABLE minimize_schema_bump;
-- The migration fails (and rolls back) unless the constraint now names the role.
CREATE TEMP TABLE minimize_check (ok INTEGER CHECK (ok));
INSERT INTO minimize_check
SELECT instr(sql, '''minimize''') > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'trials';
DROP TABLE minimize_check;
