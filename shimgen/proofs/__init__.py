"""What proves the output and measures facts into shimgen/data: verify/, probe/, provers/, overlay_needs."""
