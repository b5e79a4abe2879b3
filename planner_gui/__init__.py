"""planner-gui: a what-if planner for the reliability and goodput of large GPU training clusters."""

import os

# The engine's column sums are OpenBLAS matrix-vector products. OpenBLAS's worker threads gain nothing
# there, and on a busy machine they spin against other processes: a 10,000,000-GPU x 3,650-day run took
# 13-18 s with two threads and 2.2 s with one, on the same 2-core machine under the same load. With one
# thread the sums are also added in the same order everywhere, so a seed gives the same numbers in the
# command line, the window's compute process and a script. It must be set before numpy loads: here,
# the first thing any use of the package runs (a value the user set is kept).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
