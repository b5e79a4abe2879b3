"""The top layer: the window's Qt-free services. :mod:`.inputs` holds the scenario being edited, :mod:`.plan` says
what a view needs computed, :mod:`.jobs` lists the typed requests of every view, and :mod:`.server` is the compute
process that answers them."""
