-- Full-text index over message text for GET /channels/messages/search (porter stemming,
-- bm25 ranking). External-content table: the text lives once, in `messages`.
CREATE VIRTUAL TABLE `message_search` USING fts5(`text`, content='messages', content_rowid='id', tokenize='porter unicode61');
--> statement-breakpoint
CREATE TRIGGER `messages_search_insert` AFTER INSERT ON `messages` WHEN new.is_deleted = 0 AND new.text IS NOT NULL BEGIN
  INSERT INTO message_search(rowid, text) VALUES (new.id, new.text);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_search_delete` AFTER UPDATE OF is_deleted ON `messages` WHEN new.is_deleted = 1 AND old.is_deleted = 0 AND old.text IS NOT NULL BEGIN
  INSERT INTO message_search(message_search, rowid, text) VALUES ('delete', old.id, old.text);
END;
