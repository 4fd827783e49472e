// The count-sum searches over tables of std::uint16_t counts (table_search_countsum.hpp).
#include "table_search_countsum.hpp"

SALSOX_COUNTSUM_SEARCH(std::uint16_t)
