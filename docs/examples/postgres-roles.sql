-- A results store shared by a team's tester machines (docs/compare.md).
-- Run as a PostgreSQL superuser, in any database (psql -d postgres),
-- then give each login a password with psql's \password (never in a file).

-- Owns the store's tables: makes the schema the first time v6bench opens it.
CREATE ROLE v6bench_owner LOGIN;
-- What every tester machine may do: add runs, finish them, resume them.
CREATE ROLE v6bench_tester NOLOGIN;
-- What a reader may do (reports, compare, trend): read.
CREATE ROLE v6bench_reader NOLOGIN;
CREATE DATABASE v6bench OWNER v6bench_owner;
REVOKE ALL ON DATABASE v6bench FROM PUBLIC;
GRANT CONNECT ON DATABASE v6bench TO v6bench_tester, v6bench_reader;
-- One login per tester machine (a name in every row of the server's log), for example:
-- CREATE ROLE tester_xeon LOGIN IN ROLE v6bench_tester
