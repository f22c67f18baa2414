"""Speed plumbing: compiling Numba kernels once into a cache shipped with the package, and the allocator settings of the command."""
