"""Records: guarded YAML reading, schema validation, and the frozen record types."""
