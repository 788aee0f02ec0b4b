#include "core/pages.h"

#include <new>

#include <sys/mman.h>

namespace potop {

void* map_pages(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without huge pages the block is as good
  return p;
}

void unmap_pages(void* p, size_t bytes) { munmap(p, bytes); }

}  // namespace potop
