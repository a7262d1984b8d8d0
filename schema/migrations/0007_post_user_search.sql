-- Post and user search (GET /posts/search, GET /users/search) and the facets of existing posts.
-- Hand-written (drizzle-kit generate --custom); the Postgres counterpart is
-- schema/pg/migrations/0004_post_user_search.sql.
--
-- Posts: an FTS5 table over post text like `message_search` (porter stemming, bm25 ranking),
-- external content: the text lives once, in `posts`. Live posts only: a deleted post leaves the
-- index, a revision replaces its text, reposts (no text) are never in it.
CREATE VIRTUAL TABLE `post_search` USING fts5(`text`, content='posts', content_rowid='id', tokenize='porter unicode61');
--> statement-breakpoint
CREATE TRIGGER `posts_search_insert` AFTER INSERT ON `posts` WHEN new.is_deleted = 0 AND new.text IS NOT NULL BEGIN
  INSERT INTO post_search(rowid, text) VALUES (new.id, new.text);
END;
--> statement-breakpoint
CREATE TRIGGER `posts_search_revise` AFTER UPDATE OF text ON `posts` WHEN old.is_deleted = 0 AND new.is_deleted = 0 BEGIN
  INSERT INTO post_search(post_search, rowid, text) SELECT 'delete', old.id, old.text WHERE old.text IS NOT NULL;
  INSERT INTO post_search(rowid, text) SELECT new.id, new.text WHERE new.text IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `posts_search_delete` AFTER UPDATE OF is_deleted ON `posts` WHEN new.is_deleted = 1 AND old.is_deleted = 0 AND old.text IS NOT NULL BEGIN
  INSERT INTO post_search(post_search, rowid, text) VALUES ('delete', old.id, old.text);
END;
--> statement-breakpoint
CREATE TRIGGER `posts_search_remove` AFTER DELETE ON `posts` WHEN old.is_deleted = 0 AND old.text IS NOT NULL BEGIN
  INSERT INTO post_search(post_search, rowid, text) VALUES ('delete', old.id, old.text);
END;
--> statement-breakpoint
INSERT INTO post_search(rowid, text) SELECT id, text FROM posts WHERE is_deleted = 0 AND text IS NOT NULL;
--> statement-breakpoint
-- Users: username, name and profile text, words split at punctuation, accents folded, no
-- stemming (names are not prose); searched by word prefix, hence the prefix indexes.
CREATE VIRTUAL TABLE `user_search` USING fts5(`username`, `name`, `description`, tokenize='unicode61 remove_diacritics 2', prefix='2 3');
--> statement-breakpoint
CREATE TRIGGER `users_search_insert` AFTER INSERT ON `users` BEGIN
  INSERT INTO user_search(rowid, username, name, description)
    VALUES (new.id, new.username, coalesce(new.name, ''), coalesce(json_extract(new.description, '$.text'), ''));
END;
--> statement-breakpoint
CREATE TRIGGER `users_search_update` AFTER UPDATE OF username, name, description ON `users` BEGIN
  DELETE FROM user_search WHERE rowid = old.id;
  INSERT INTO user_search(rowid, username, name, description)
    VALUES (new.id, new.username, coalesce(new.name, ''), coalesce(json_extract(new.description, '$.text'), ''));
END;
--> statement-breakpoint
CREATE TRIGGER `users_search_delete` AFTER DELETE ON `users` BEGIN
  DELETE FROM user_search WHERE rowid = old.id;
END;
--> statement-breakpoint
INSERT INTO user_search(rowid, username, name, description)
  SELECT id, username, coalesce(name, ''), coalesce(json_extract(description, '$.text'), '') FROM users;
--> statement-breakpoint
-- Facets of the posts written before facets existed, from their stored entities and raw (the app
-- writes them for new posts): mentions, leading and copy mentions, tags, link URLs and raw types.
-- Not derived here: url_domain, file, file_kind, poll and oembed (they need URL parsing or raw
-- item contents), and tags are lower-cased as SQLite does (ASCII letters only). One statement per
-- facet: D1 limits the terms of a compound SELECT.
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'mention', lower(json_extract(j.value, '$.text')) FROM posts p, json_each(p.entities, '$.mentions') j
    WHERE p.is_deleted = 0 AND json_extract(j.value, '$.id') IS NOT NULL
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'leading_mention', lower(json_extract(j.value, '$.text')) FROM posts p, json_each(p.entities, '$.mentions') j
    WHERE p.is_deleted = 0 AND json_extract(j.value, '$.id') IS NOT NULL AND json_extract(j.value, '$.is_leading') = 1
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'copy_mention', lower(json_extract(j.value, '$.text')) FROM posts p, json_each(p.entities, '$.mentions') j
    WHERE p.is_deleted = 0 AND json_extract(j.value, '$.id') IS NOT NULL AND json_extract(j.value, '$.is_copy') = 1
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'tag', lower(replace(json_extract(j.value, '$.text'), '_', '')) FROM posts p, json_each(p.entities, '$.tags') j
    WHERE p.is_deleted = 0
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'url', json_extract(j.value, '$.url') FROM posts p, json_each(p.entities, '$.links') j
    WHERE p.is_deleted = 0
  ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, 'raw_type', j.key FROM posts p, json_each(p.raw) j
    WHERE p.is_deleted = 0 AND p.raw IS NOT NULL AND json_type(p.raw) = 'object'
  ON CONFLICT DO NOTHING;
