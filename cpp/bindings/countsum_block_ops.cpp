// The count-sum formula's block operations, compiled once per instruction set
// (countsum_block_loops.hpp).
#include "salsox/countsum_block_loops.hpp"
