// Counts heap allocations for courier-bench by interposing glibc's allocator entry points.
// Every function forwards to glibc's own implementation (__libc_*), so behaviour is unchanged;
// the cost is one relaxed atomic increment per allocation, equal for every variant measured.
#define _GNU_SOURCE
#include "CAllocationCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#if defined(__linux__) && defined(__GLIBC__)

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_long allocations;

long courier_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t size) {
  count();
  return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
  count();
  return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
  count();
  return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  count();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL && size != 0) return ENOMEM;
  *result = pointer;
  return 0;
}

#else

long courier_allocation_count(void) { return -1; }

#endif
