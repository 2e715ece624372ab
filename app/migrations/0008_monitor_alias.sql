-- depends: 0007_audit_status
-- Each monitor belongs to the alias (the index) it was created on: a worker checks a release
-- only against its own alias's monitors, so installs of several aliases on one database (a
-- staging index beside the live one) never compare a monitor with another index. Monitors
-- made before this column existed have none and are checked by every alias, as before.

ALTER TABLE monitores ADD COLUMN IF NOT EXISTS alias text;
