-- Hand-written: app stream cursors (meta.id) become outbox sequences (README "Resumable streams").
-- The outbox numbering jumps to 10^12 so that every sequence from now on is above every cursor of
-- the per-key numbering of earlier versions: a `since` below 10^12 is answered with a gap report,
-- never read as a position. Rows already waiting keep their ids (delivered first).
SELECT setval(pg_get_serial_sequence('stream_outbox', 'id'), 1000000000000)
  WHERE (SELECT COALESCE(MAX(id), 0) FROM stream_outbox) < 1000000000000;
