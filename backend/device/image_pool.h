// Device-memory images recycled across runs. A run's buffers are byte vectors of up to tens of MiB;
// freed, glibc hands such blocks back to the kernel, and the next run faults every page in again
// (40% of the functional simulator's host time on a 4096 x 1024 softmax). Images handed back here
// keep their storage, so the next run's images start on resident pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace spyre {

// An all-zero image of `bytes`, on pooled storage when a pooled image is at least that large.
std::vector<uint8_t> take_image(size_t bytes);
// Keeps the images' storage for take_image (up to a bound; the rest is freed). Leaves them empty.
void give_back_images(std::vector<std::vector<uint8_t>> &images);

}  // namespace spyre
