"""The measured facts generation reads, each module beside the data file it loads (shimgen/data/)."""
