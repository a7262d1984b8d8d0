-- Hand-written: app stream cursors (meta.id) become outbox sequences (README "Resumable streams").
-- The outbox numbering jumps to 10^12 so that every sequence from now on is above every cursor of
-- the per-key numbering of earlier versions: a `since` below 10^12 is answered with a gap report,
-- never read as a position. AUTOINCREMENT keeps the highest id ever used, so inserting the id and
-- deleting the row moves the numbering for good. Rows already waiting keep their ids (delivered first).
INSERT INTO `stream_outbox` (`id`, `type`, `ref`, `payload`, `created_at`)
  SELECT 1000000000000, 'post', NULL, NULL, 0 WHERE (SELECT COALESCE(MAX(`id`), 0) FROM `stream_outbox`) < 1000000000000;--> statement-breakpoint
DELETE FROM `stream_outbox` WHERE `id` = 1000000000000;
