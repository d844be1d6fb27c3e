"""The emulated lab: built by v6bench on this machine, one network
namespace per node (``build``, its routers made by a ``Routers`` object),
one lab per machine at a time (``state``, ``control``). Shaping
(``shape``), the DUT configuration loaded and read back (``configured``),
the namespace routers' tunnels (``tunnel_setup``), NAT64 translators
(``translator``), connection tables (``connections``), forwarding tables
(``fib_load``), observing (``observe``) and resetting (``reset``) the
namespace routers. The machine's plumbing it uses is lab/machine/."""
