-- Hand-written: JIT off for this database. Every statement the API runs reads or writes about a
-- page of rows through indexes; JIT compilation pays only for long analytical scans, and when a
-- planner estimate runs high it costs 40–160 ms per execution (seen on the global stream, issue 27).
-- The plans themselves are kept cheap regardless (src/db/dialect.ts `unindexed`). Applies to new
-- sessions; ALTER DATABASE needs the database's owner (on Neon, the project's role).
DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET jit = off', current_database()); END $$;
