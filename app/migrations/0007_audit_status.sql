-- depends: 0006_leads
-- transactional: false
-- The audit log filtered by a status other than 200 (the operator looking for refusals and
-- errors): without an index such a page scans the table backwards until it has found its rows,
-- about a second at ten million rows. The index holds only the rows that are not 200, so the
-- writes of ordinary calls never touch it. Built CONCURRENTLY, outside a transaction, so an
-- install with a large table keeps taking calls while it is built; an interrupted build leaves
-- an invalid index, which is dropped here and built again on the next run.

DO $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'auditoria_status' AND NOT i.indisvalid
    ) THEN
        DROP INDEX auditoria_status;
    END IF;
END
$$;

CREATE INDEX CONCURRENTLY IF NOT EXISTS auditoria_status ON auditoria (status, id)
    WHERE status <> 200;
