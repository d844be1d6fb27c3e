"""The emulated lab: built by v6bench on this machine, one network
namespace per node (``build``, its routers made by a ``Routers`` object),
one lab per machine at a time (``state``, ``control``). Commands in its
namespaces (``nsctl``), its CPUs and NAPI threads
(``napi``, ``cpu_window``, ``wakeful``), shaping (``shape``), the DUT
configuration loaded and read back (``configured``), the namespace
routers' tunnels (``tunnel_setup``), tables (``fib_load``), observing
(``observe``, ``cost``) and resetting (``reset``) the namespace routers."""
