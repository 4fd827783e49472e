// The count-sum searches over tables of std::int32_t counts (table_search_countsum.hpp).
#include "table_search_countsum.hpp"

SALSOX_COUNTSUM_SEARCH(std::int32_t)
