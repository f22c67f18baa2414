"""Running participants' programs under the contests' contracts, limits and measurements."""
