"""The labs a trial runs on, one backend per kind (:mod:`.backends`),
read by the rest of v6bench through :mod:`.interface`.

- ``model/``: what a lab and its DUT are: topologies, MTUs, CPU plans, the
  DUT configuration and the rule sets it renders, tunnels, the ``[lab]``
  and ``[dut]`` tables and external lab files; nothing here runs a command.
- ``emulated/``: the lab v6bench builds on this machine in network
  namespaces: building and removing it, its state and lock, commands in
  its namespaces, CPUs and NAPI threads, observing, resetting, tables.
- ``vm/``: routers that are QEMU virtual machines inside the emulated lab:
  the guest image, its start-up configuration, its agent, observing and
  resetting the VMs.
- ``external/``: routers v6bench did not build, declared by a lab file:
  taking them into use, SNMP, announcing a table over BGP.
"""
