"""Routers v6bench did not build, declared by a lab file
(lab/external/lab_file.py): taken into use, configured and reset by the
file's commands (``external``), observed over SNMP (``snmp``,
``snmp_observe``; VM routers' agents too), and told a table over BGP
from a speaker in a namespace (``bgp_speaker``)."""
