-- After the owner made the schema (docs/compare.md), in the store's
-- database (psql -d v6bench), as v6bench_owner or a superuser.

GRANT SELECT ON ALL TABLES IN SCHEMA public TO v6bench_reader, v6bench_tester;
-- A run, its self-test, tests and trials.
GRANT INSERT ON selftests, runs, tests, trials TO v6bench_tester;
-- A run's and a test's end, and --resume marking them running again.
GRANT UPDATE ON runs, tests TO v6bench_tester;
-- --resume replays a search from its last whole trial.
GRANT DELETE ON trials TO v6bench_tester;
-- Nothing else: no tester drops, alters or empties a table, or writes meta.
