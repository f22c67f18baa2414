"""The ground floor every step stands on: results, provenance, parameters, issues and errors."""
