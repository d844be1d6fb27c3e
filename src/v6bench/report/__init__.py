"""Reports: text tables today; tables and plots of stored results later."""
