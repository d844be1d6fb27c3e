"""This machine's plumbing, which every kind of lab uses where the tester
runs: commands and files in network namespaces (``nsctl``), NAPI kernel
threads (``napi``), CPU time accounting (``cpu_window``, ``cost``), the
CPUs kept awake during a trial (``wakeful``), the machine's lab lock
(``lock``) and the forwarding tables' files (``table_files``). It knows
no kind of lab: the kinds' folders import it, never the other way."""
