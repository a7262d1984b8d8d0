-- Full-text search over message text for GET /channels/messages/search: the Postgres counterpart
-- of the FTS5 table `message_search` (schema/migrations/0001_message_search.sql, tokenize='porter
-- unicode61'). Hand-written (drizzle-kit generate --custom). Nothing here is declared in
-- schema/pg/tables.ts, so that file stays an exact mirror of the sqlite schema (schema/parity.ts);
-- drizzle-kit's snapshot does not know these objects either (never `drizzle-kit push`).
--
-- Matching is kept as close to SQLite's as Postgres allows:
--  * es_search_text(): ASCII punctuation becomes a space before parsing, so URLs, e-mail addresses,
--    hyphenated words, 3.14, #tags and @names split into plain words as unicode61 splits them
--    ("www.example.com/page" -> www, example, com, page); Postgres' parser would otherwise keep
--    host / url / email / float tokens whole, and a search for "example" would miss them.
--  * es_english: `english`'s parser mappings, but words are stemmed by snowball's `porter`, the
--    original Porter algorithm FTS5's porter tokenizer implements (english/Porter2 stems
--    "quickly" to "quick", Porter to "quickli"), and with NO stop-word list: "the" is indexed
--    and searchable, as on SQLite. Non-ASCII words go through unaccent first (unicode61 removes
--    diacritics: "café" matches "cafe").
--  * es_search_query(terms): every term is a phrase (its words adjacent, in order) and every term
--    is required: FTS5's `"term1" "term2"` (see ftsQuery in src/stores/search.ts). Terms with no
--    word (e.g. `"`) are dropped; with none left the query is empty and matches nothing.
--  * Only messages with is_deleted = 0 are indexed (partial index), as the FTS5 triggers keep
--    deleted messages out: a query must say `m.is_deleted = 0` literally for the index to apply.
--    A NULL text gives an empty vector, which matches nothing.
--  * ts_rank(search_vector, query) stands in for bm25 (higher = better, where bm25 is lower =
--    better); the orders agree on simple cases, not on every case.
-- The index is on search_vector alone. A composite GIN (channel_id, search_vector) with btree_gin
-- was measured and rejected (400k messages, 500 channels): the planner chose it for none of the
-- queries tried, and when forced it read ~900 index pages for a 2-channel search, where a
-- BitmapAnd of this index and the existing btree messages_channel read 29-76 for 1-3 channels,
-- also without fetching messages just to check their channel. Pass the searched channels as a list (`m.channel_id = ANY(...)`) so the planner can
-- weigh that BitmapAnd against walking messages newest first.
-- SET STATISTICS 1000: with the default 100, ANALYZE keeps only the most common lexemes and
-- estimates every rarer word at half the least common one's frequency (measured: 1959 rows
-- estimated for a word in 8), which made the planner walk the whole table newest first for a
-- rare word; with 1000 the estimate was 12 and the search read 12 pages instead of 22,000.
-- unaccent is a contrib extension marked trusted (the database owner may create it); it is
-- available on Neon and in Debian's postgresql-15 package.
CREATE EXTENSION IF NOT EXISTS unaccent;
--> statement-breakpoint
CREATE TEXT SEARCH DICTIONARY es_porter (TEMPLATE = snowball, LANGUAGE = porter);
--> statement-breakpoint
COMMENT ON TEXT SEARCH DICTIONARY es_porter IS 'Original Porter stemmer (as FTS5 porter), no stop words';
--> statement-breakpoint
CREATE TEXT SEARCH CONFIGURATION es_english (COPY = english);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION es_english
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH es_porter;
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION es_english
  ALTER MAPPING FOR word, hword, hword_part WITH unaccent, es_porter;
--> statement-breakpoint
COMMENT ON TEXT SEARCH CONFIGURATION es_english IS 'Message search: english parser mappings, Porter stems, unaccent, no stop words';
--> statement-breakpoint
CREATE FUNCTION es_search_text(t text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN translate(t, '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', '                                ');
--> statement-breakpoint
CREATE FUNCTION es_search_query(terms text[]) RETURNS tsquery
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN websearch_to_tsquery('es_english', array_to_string(ARRAY(SELECT '"' || es_search_text(term) || '"' FROM unnest(terms) AS term), ' '));
--> statement-breakpoint
ALTER TABLE messages ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('es_english', es_search_text(coalesce(text, '')))) STORED;
--> statement-breakpoint
ALTER TABLE messages ALTER COLUMN search_vector SET STATISTICS 1000;
--> statement-breakpoint
CREATE INDEX messages_search ON messages USING gin (search_vector) WHERE is_deleted = 0;
