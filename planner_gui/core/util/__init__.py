"""The bottom layer: formatting of numbers and durations, safe reading and writing of user files, progress
splitting. Imports nothing else of the core."""
