"""What every layer of shimgen uses: errors, bounded input reads, the derived-data cache, the output folder."""
