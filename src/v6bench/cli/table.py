"""``v6bench table``: forwarding tables like the Internet's, as plain
prefix lists (src/v6bench/fib): write one by name, or describe a list
(a generated one, or one cut from a router's own table)."""

from __future__ import annotations

import argparse
import sys

from ..fib import generate, prefix_list, shapes


def add(sub: argparse._SubParsersAction, parser_class: type) -> None:
    ta = sub.add_parser("table", help="forwarding tables like the Internet's: write one, or describe a prefix list")
    ta_sub = ta.add_subparsers(dest="table_command", required=True, parser_class=parser_class)
    w = ta_sub.add_parser("write", help="write a table by name as a plain prefix list",
                          description="; ".join(f"{k.name}: {k.summary}" for k in shapes.TABLES.values()))
    w.add_argument("name", choices=tuple(shapes.TABLES), metavar="NAME", help=", ".join(shapes.TABLES))
    w.add_argument("--seed", type=int, default=1, help="the same seed, the same table [1]")
    w.add_argument("--out", default="-", help="file to write [stdout]")
    w.set_defaults(command_run=run_write)
    s = ta_sub.add_parser("show", help="a prefix list's routes per family and prefix length")
    s.add_argument("file", help="a prefix list: one prefix a line, '#' comments")
    s.set_defaults(command_run=run_show)


def run_write(site, args: argparse.Namespace, say) -> int:
    table = generate.table(shapes.table_kind(args.name), args.seed)
    if args.out == "-":
        for line in prefix_list.lines(table):
            sys.stdout.write(line + "\n")
    else:
        prefix_list.write(table, args.out)
        say(f"{args.out}: {len(table.ipv4):,} IPv4 and {len(table.ipv6):,} IPv6 prefixes ({table.source})")
    return 0


def run_show(site, args: argparse.Namespace, say) -> int:
    table = prefix_list.read(args.file)
    for p in (table.ipv4, table.ipv6):
        lengths = p.lengths()
        mean = sum(k * n for k, n in lengths.items()) / len(p) if len(p) else 0.0
        print(f"IPv{p.version}: {len(p):,} prefixes, mean length {mean:.2f} bits")
        for length, n in lengths.items():
            print(f"  /{length:<3} {n:>10,}  {100 * n / len(p):6.2f} %")
    return 0
