// The decimal a float was written as. A float holds 0.9 as 0.89999997615814208984375, and a double
// made from it prints that way; the shortest decimal that reads back as the same float (what
// std::to_chars gives) is the 0.9 the user wrote. Config files print it, and AdamW computes its
// scalars from it as PyTorch does from the Python float.
#pragma once

namespace potop {

double as_written(float x);

}  // namespace potop
