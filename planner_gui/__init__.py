"""planner-gui: a what-if planner for the reliability and goodput of large GPU training clusters."""

__version__ = "0.1.0"
