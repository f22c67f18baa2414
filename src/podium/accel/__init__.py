"""Speed plumbing: Numba kernels compiled once and shipped, and the allocator settings of the command."""
