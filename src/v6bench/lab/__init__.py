"""The emulated lab: topologies as graphs (``topology``), built in network
namespaces (``build``), one per machine at a time (``state``)."""
