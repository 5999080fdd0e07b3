#ifndef C_ALLOCATION_COUNTER_H
#define C_ALLOCATION_COUNTER_H

/// The number of heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign) made by the whole process since it started. Linked only into `courier-bench`,
/// which interposes the glibc allocator entry points to count them.
long courier_allocation_count(void);

#endif
