"""What a lab and its DUT are, whoever builds them: topologies
(``topology``), link MTUs (``mtu``), CPU plans (``cpus``), the DUT
configuration and the nftables rule sets it renders (``dut``), tunnels and
their overheads (``tunnel``), the ``[lab]`` and ``[dut]`` tables (``spec``;
a lab file is its kind's, lab/external/lab_file.py) and where the
machine's lab lives (``site``). Pure: nothing here runs a command or touches the kernel."""
