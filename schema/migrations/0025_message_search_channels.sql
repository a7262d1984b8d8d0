-- Hand-written (D1 only): the message search index also holds each message's channel id (one
-- token), so a search of named channels matches `channel_id : (1 OR 2)` inside FTS5 and walks
-- only their matches. Before, it walked the word's matches in every channel and looked each
-- message up to keep the searched channels' ones: a search of small channels for a common word
-- read every match of it. The channel column's weight in bm25 is 0 (src/stores/search/fts5.ts).
-- Populated from the live messages, as the triggers keep it (never 'rebuild': that would index
-- deleted messages' text from the content table too).
DROP TRIGGER IF EXISTS `messages_search_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_search_delete`;
--> statement-breakpoint
DROP TABLE `message_search`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `message_search` USING fts5(`text`, `channel_id`, content='messages', content_rowid='id', tokenize='porter unicode61');
--> statement-breakpoint
INSERT INTO message_search(rowid, text, channel_id) SELECT id, text, channel_id FROM messages WHERE is_deleted = 0 AND text IS NOT NULL;
--> statement-breakpoint
CREATE TRIGGER `messages_search_insert` AFTER INSERT ON `messages` WHEN new.is_deleted = 0 AND new.text IS NOT NULL BEGIN
  INSERT INTO message_search(rowid, text, channel_id) VALUES (new.id, new.text, new.channel_id);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_search_delete` AFTER UPDATE OF is_deleted ON `messages` WHEN new.is_deleted = 1 AND old.is_deleted = 0 AND old.text IS NOT NULL BEGIN
  INSERT INTO message_search(message_search, rowid, text, channel_id) VALUES ('delete', old.id, old.text, old.channel_id);
END;
