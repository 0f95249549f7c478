"""The companion lessons' exercises that run on the learner's own machine (not simulations): the profiling
exercise's data file, its three timed phases and its file cache."""
