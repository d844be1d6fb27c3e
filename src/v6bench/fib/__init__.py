"""Forwarding tables like the Internet's (RFC 3222).

- :mod:`.shapes`: the prefix-length distributions of today's default-free
  zone and the tables by name (``internet``, ``10k`` … ``1m``, the dense
  host-route controls);
- :mod:`.generate`: a table of a shape, from a seed (the same seed, the
  same table);
- :mod:`.prefix_list`: the plain prefix list a table is written as, and
  read from (one a user brings from their own router, too);
- :mod:`.destinations`: one address inside each of N chosen prefixes,
  where that prefix is the longest match, so that each frame's lookup has
  the table's real depth.

Prefixes are ``(network, length)`` pairs of ints per IP version; nothing
here touches a lab.
"""
