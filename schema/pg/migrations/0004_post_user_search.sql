-- Post and user search (GET /posts/search, GET /users/search) and the facets of existing posts:
-- the Postgres counterpart of schema/migrations/0007_post_user_search.sql. Hand-written
-- (drizzle-kit generate --custom); as with message search (0001), the generated columns and GIN
-- indexes are not declared in schema/pg/tables.ts (never `drizzle-kit push`).
--
-- Posts: the message search configuration (es_english: punctuation split as FTS5 splits it,
-- Porter stems, accents folded, no stop words) over post text, indexed for live posts only, as
-- the FTS5 table holds live posts only. Reposts have no text: an empty vector matches nothing.
ALTER TABLE posts ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (to_tsvector('es_english', es_search_text(coalesce(text, '')))) STORED;
--> statement-breakpoint
ALTER TABLE posts ALTER COLUMN search_vector SET STATISTICS 1000;
--> statement-breakpoint
CREATE INDEX posts_search ON posts USING gin (search_vector) WHERE is_deleted = 0;
--> statement-breakpoint
-- Users: username, name and profile text with no stemming (FTS5 unicode61 remove_diacritics), as
-- `es_simple`: `simple` lower-cases, unaccent folds accents.
CREATE TEXT SEARCH CONFIGURATION es_simple (COPY = simple);
--> statement-breakpoint
ALTER TEXT SEARCH CONFIGURATION es_simple
  ALTER MAPPING FOR word, hword, hword_part WITH unaccent, simple;
--> statement-breakpoint
COMMENT ON TEXT SEARCH CONFIGURATION es_simple IS 'User search: simple (lower case), unaccent, no stemming';
--> statement-breakpoint
-- Every word of every term required, each as a word prefix: FTS5's `"term"*` per term. Terms
-- split at punctuation first (es_search_text), as the indexed text was; quote_literal keeps any
-- remaining character from being read as tsquery syntax. No word at all: an empty query, which
-- matches nothing.
CREATE FUNCTION es_prefix_query(terms text[]) RETURNS tsquery
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN to_tsquery('es_simple', coalesce((
    SELECT string_agg(quote_literal(w) || ':*', ' & ')
    FROM unnest(terms) AS term, regexp_split_to_table(btrim(es_search_text(term)), '\s+') AS w
    WHERE w <> ''), ''));
--> statement-breakpoint
-- Weighted as D1's bm25 weights the columns: username (A), name (B), profile text (D).
ALTER TABLE users ADD COLUMN search_vector tsvector
  GENERATED ALWAYS AS (
    setweight(to_tsvector('es_simple', es_search_text(username)), 'A')
    || setweight(to_tsvector('es_simple', es_search_text(coalesce(name, ''))), 'B')
    || to_tsvector('es_simple', es_search_text(coalesce(CAST(description AS jsonb) ->> 'text', '')))) STORED;
--> statement-breakpoint
CREATE INDEX users_search ON users USING gin (search_vector);
--> statement-breakpoint
-- Facets of the posts written before facets existed (see the D1 migration for what is derived;
-- Postgres lower-cases tags in every script).
INSERT INTO post_facets (post_id, facet, value)
  SELECT p.id, f.facet, f.value
  FROM posts p CROSS JOIN LATERAL (
    SELECT 'mention' AS facet, lower(m ->> 'text') AS value FROM jsonb_array_elements(CAST(p.entities AS jsonb) -> 'mentions') m WHERE m ? 'id'
    UNION ALL SELECT 'leading_mention', lower(m ->> 'text') FROM jsonb_array_elements(CAST(p.entities AS jsonb) -> 'mentions') m
      WHERE m ? 'id' AND (m ->> 'is_leading') = 'true'
    UNION ALL SELECT 'copy_mention', lower(m ->> 'text') FROM jsonb_array_elements(CAST(p.entities AS jsonb) -> 'mentions') m
      WHERE m ? 'id' AND (m ->> 'is_copy') = 'true'
    UNION ALL SELECT 'tag', lower(replace(t ->> 'text', '_', '')) FROM jsonb_array_elements(CAST(p.entities AS jsonb) -> 'tags') t
    UNION ALL SELECT 'url', l ->> 'url' FROM jsonb_array_elements(CAST(p.entities AS jsonb) -> 'links') l
    UNION ALL SELECT 'raw_type', k FROM jsonb_object_keys(CASE WHEN jsonb_typeof(CAST(p.raw AS jsonb)) = 'object' THEN CAST(p.raw AS jsonb) END) k
  ) f
  WHERE p.is_deleted = 0 AND p.entities IS NOT NULL AND f.value IS NOT NULL
  ON CONFLICT DO NOTHING;
