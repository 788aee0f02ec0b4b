// Large blocks straight from the kernel: anonymous mmap memory, zero-filled, page-aligned and
// faulted in only where it is touched, with transparent huge pages asked for (the kernel's
// "madvise" setting, the default of many): a first touch then faults in 2 MB at once. On a VM
// each fault is costly; a model's first pass over a long prompt spent most of its time in them.
// The arenas of parameters and activations, quantized matrices and the KV caches come from here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace potop {

// Blocks from this size up are worth a mapping of their own.
inline constexpr size_t kMapBytes = size_t{1} << 20;

// `bytes` bytes, or std::bad_alloc; give them back with unmap_pages(p, bytes).
void* map_pages(size_t bytes);
void unmap_pages(void* p, size_t bytes);

// A std::vector allocator for buffers that are read end to end many times (a quantized model's
// matrices, every token): blocks from kMapBytes up are map_pages, smaller ones operator new.
// Without huge pages, a q8_0 decoding step walked 32 000 pages of 4 KB, and the CPU's
// prefetchers stop at each page's end.
template <class T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <class U>
  PageAllocator(const PageAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    return static_cast<T*>(bytes >= kMapBytes ? map_pages(bytes) : ::operator new(bytes));
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kMapBytes) unmap_pages(p, bytes);
    else ::operator delete(p);
  }
  friend bool operator==(const PageAllocator&, const PageAllocator&) { return true; }
};
using PageBytes = std::vector<uint8_t, PageAllocator<uint8_t>>;

}  // namespace potop
