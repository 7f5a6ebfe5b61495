"""The second half of the curation loop: relabeling with a consistency filter, failure
diagnosis at three levels, failure-driven resynthesis in bounded rounds."""
